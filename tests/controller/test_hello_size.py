"""componentbase_examples/hello stays the smallest controller: at most 12 lines of code (tests/test_docs_files.py
holds the docs' copies of it equal to the file)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def test_hello_is_at_most_twelve_lines_of_code() -> None:
    lines = 0
    for path in (ROOT / "componentbase_examples" / "hello").glob("*.py"):
        module = ast.parse(path.read_text())
        doc = module.body[0].end_lineno if module.body and isinstance(module.body[0], ast.Expr) else 0
        for line in path.read_text().splitlines()[doc:]:
            if line.strip() and not line.strip().startswith("#"):
                lines += 1
    assert lines <= 12, f"componentbase_examples/hello holds {lines} lines of code"
