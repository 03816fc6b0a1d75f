"""The bundled controllers stay small: componentbase_examples/hello, the smallest controller, at most 12 lines of
code; componentbase_examples/website, an operator with every piece issue 27 lists, at most 45
(tests/test_docs_files.py holds the docs' copies of them equal to the files)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _lines_of_code(example: str) -> int:
    """Lines of the example's modules that are neither blank, comments nor docstrings (module, class, function)."""
    lines = 0
    for path in (ROOT / "componentbase_examples" / example).glob("*.py"):
        text = path.read_text()
        docstrings: set[int] = set()
        for node in ast.walk(ast.parse(text)):
            body = getattr(node, "body", None)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and body \
                    and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                docstrings.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
        for number, line in enumerate(text.splitlines(), 1):
            if number not in docstrings and line.strip() and not line.strip().startswith("#"):
                lines += 1
    return lines


def test_hello_is_at_most_twelve_lines_of_code() -> None:
    lines = _lines_of_code("hello")
    assert lines <= 12, f"componentbase_examples/hello holds {lines} lines of code"


def test_the_website_operator_is_at_most_45_lines_of_code() -> None:
    lines = _lines_of_code("website")
    assert lines <= 45, f"componentbase_examples/website holds {lines} lines of code"
