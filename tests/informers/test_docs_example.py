"""The controller in docs/controllers.md runs as written and does what it says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]


def test_the_documented_controller_runs() -> None:
    text = (ROOT / "docs" / "controllers.md").read_text()
    section = text.split("## A whole controller", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    done = subprocess.run([sys.executable, "-c", code.group(1)], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['web-0', 'web-1', 'web-2'] 3 events"
