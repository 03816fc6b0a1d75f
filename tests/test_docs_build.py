"""The documentation builds, no page links to a page or anchor that does not exist, and the API reference
generated from the code lists every public name."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.public_api import PACKAGES, modules

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(180)  # ~25 s alone; past the suite's 60 s with a CPU-burning neighbour per core
def test_mkdocs_strict_build(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=170)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "index.html").exists()
    anchors = set(re.findall(r'id="(componentbase[\w.]*)"', (tmp_path / "reference/api/index.html").read_text()))
    public = {f"{m.__name__}.{name}" for m in modules() if m.__name__ in PACKAGES for name in m.__all__}
    assert sorted(public - anchors) == []
    assert "<svg" in (tmp_path / "architecture/index.html").read_text()  # the layers, drawn by docs/hooks
