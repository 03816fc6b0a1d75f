"""Code blocks marked ``<!-- file: PATH -->`` in the docs are that file as it is (less its docstring).

The files themselves are what the tests run (the hello and widgets controllers, the greeter component), so
what a reader copies from the docs is what is tested.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
MARKED = re.compile(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", re.S)


def _without_docstring(path: Path) -> str:
    text = path.read_text()
    if path.suffix != ".py":
        return text.strip()
    module = ast.parse(text)
    first = module.body[0] if module.body else None
    end = first.end_lineno if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) else 0
    return "\n".join(text.splitlines()[end or 0:]).strip()


MARKER = re.compile(r"^<!-- file: ", re.M)  # at a line's start: docs/testing.md names the syntax mid-line
DOCS_WITH_MARKS = sorted(p.name for p in (ROOT / "docs").glob("*.md") if MARKER.search(p.read_text()))


def test_the_docs_mark_blocks() -> None:
    assert {"getting-started.md", "runtime.md"} <= set(DOCS_WITH_MARKS)


@pytest.mark.parametrize("doc", DOCS_WITH_MARKS)
def test_marked_blocks_are_their_files(doc: str) -> None:
    text = (ROOT / "docs" / doc).read_text()
    blocks = MARKED.findall(text)
    assert blocks, f"docs/{doc}: no marked block"
    assert len(blocks) == len(MARKER.findall(text)), f"docs/{doc}: a marker is not followed by its fenced block"
    for path, block in blocks:
        assert block.strip() == _without_docstring(ROOT / path), f"docs/{doc}: the block of {path} is stale"


def test_getting_started_shows_every_example_it_names() -> None:
    marked = {path for path, _ in MARKED.findall((ROOT / "docs" / "getting-started.md").read_text())}
    assert marked == {"componentbase_examples/hello/__main__.py", "componentbase_examples/widgets/crd.yaml",
                      "componentbase_examples/widgets/__main__.py", "componentbase_examples/greeter/__main__.py"}
