"""The controller in docs/controllers.md runs as written and does what it says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_the_documented_controller_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """Run in this process as a script (``__main__``): a child interpreter would import ``kubernetes`` and its
    CoreV1Api again (about 2 s of CPU) for what is the same code; its threads must end, as the leak check sees."""
    text = (ROOT / "docs" / "controllers.md").read_text()
    section = text.split("## A whole controller", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    exec(compile(code.group(1), "docs/controllers.md", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.strip() == "['web-0', 'web-1', 'web-2'] 3 events"
