"""Whether an entry-point group has plugins, read from the path's metadata folders as importlib.metadata reads it."""

from __future__ import annotations

import importlib.metadata
import sys
import zipfile
from pathlib import Path

import pytest

from componentbase.util._plugins import _declared, _declared_in_folders

pytestmark = pytest.mark.unit

GROUP = "componentbase.test.plugins"


def _dist(site: Path, name: str, entry_points: str) -> None:
    dist = site / f"{name}-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(entry_points)


def test_a_folder_distribution_declaring_the_group_is_found(tmp_path: Path) -> None:
    _dist(tmp_path, "other", "[console_scripts]\nx = other:main\n")
    assert _declared_in_folders(GROUP, (str(tmp_path),)) is False
    _dist(tmp_path, "extra", f"[console_scripts]\ny = extra:main\n\n[{GROUP}]\nextra = extra\n")
    assert _declared_in_folders(GROUP, (str(tmp_path / "missing"), str(tmp_path))) is True
    assert _declared_in_folders("console", (str(tmp_path),)) is False  # a section, not a prefix of one


def test_every_group_of_this_environment_agrees_with_importlib_metadata() -> None:
    groups = {ep.group for dist in importlib.metadata.distributions() for ep in dist.entry_points}
    for group in (*groups, GROUP):
        assert _declared_in_folders(group, tuple(sys.path)) == bool(importlib.metadata.entry_points(group=group))


def test_a_zipped_distribution_is_left_to_importlib_metadata(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    archive = tmp_path / "extra.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("extra-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: extra\nVersion: 1.0\n")
        z.writestr("extra-1.0.dist-info/entry_points.txt", f"[{GROUP}]\nextra = extra\n")
    monkeypatch.setattr(sys, "path", [str(archive), *sys.path])
    assert _declared_in_folders(GROUP, tuple(sys.path)) is None
    assert _declared(GROUP, tuple(sys.path)) is True
