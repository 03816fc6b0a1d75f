"""The CLI reference in docs/ is generated from the code; it must match what the code prints now."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[1]


def test_reference_pages_are_up_to_date() -> None:
    probe = ("import runpy; ns = runpy.run_path('docs/gen_reference.py'); "
             "import json; print(json.dumps(ns['pages']()))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    import json

    for name, text in json.loads(result.stdout).items():
        committed = (ROOT / "docs" / "reference" / name).read_text()
        assert committed == text, f"docs/reference/{name} is stale: run python docs/gen_reference.py"
