"""write_atomic: the one place a file is written whole, through symlinks, and never over a device."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from componentbase.util import write_atomic

pytestmark = pytest.mark.unit


def test_writes_through_a_symlink_and_keeps_it(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "config.yaml"
    target.write_text("old")
    link = tmp_path / "config.yaml"
    link.symlink_to(Path("data") / "config.yaml")  # relative, as a ConfigMap mount's links are
    write_atomic(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(Path("data") / "config.yaml")
    assert target.read_text() == "new"
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["config.yaml"]


def test_a_dangling_symlink_gets_its_target_created(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "later.yaml")
    write_atomic(link, b"bytes")
    assert link.is_symlink() and (tmp_path / "later.yaml").read_bytes() == b"bytes"


def test_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    for path in (fifo, link):
        with pytest.raises(OSError, match="not a regular file"):
            write_atomic(path, "x")
    with pytest.raises(IsADirectoryError):
        write_atomic(tmp_path, "x")
    assert fifo.is_fifo() and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link"]  # nothing left behind
