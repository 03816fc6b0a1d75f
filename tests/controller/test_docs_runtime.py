"""docs/runtime.md shows examples/hello as it is, so the page runs exactly what the process test runs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def test_the_smallest_controller_in_the_docs_is_examples_hello() -> None:
    text = (ROOT / "docs" / "runtime.md").read_text()
    block = re.search(r"```python\n(.*?)```", text, re.S)
    assert block is not None
    source = (ROOT / "examples" / "hello" / "__main__.py").read_text()
    module = ast.parse(source)
    docstring_end = module.body[0].end_lineno if isinstance(module.body[0], ast.Expr) else 0
    code = "\n".join(source.splitlines()[docstring_end:]).strip()
    assert block.group(1).strip() == code


def test_hello_is_at_most_twelve_lines_of_code() -> None:
    lines = 0
    for path in (ROOT / "examples" / "hello").glob("*.py"):
        module = ast.parse(path.read_text())
        doc = module.body[0].end_lineno if module.body and isinstance(module.body[0], ast.Expr) else 0
        for line in path.read_text().splitlines()[doc:]:
            if line.strip() and not line.strip().startswith("#"):
                lines += 1
    assert lines <= 12, f"examples/hello holds {lines} lines of code"
