"""The layer contract of docs/architecture.md holds, and would catch a cycle or an upward import.

The contracts live in pyproject.toml (``[tool.importlinter]``) and are checked by import-linter, whose
graph (grimp) holds every import: at module level, inside functions and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: What a function-level import in the library may load lazily: packages slow to import that ``--help``,
#: ``--version`` and config validation do not need (and the client module built on ``kubernetes``), and
#: packages that are not dependencies of componentbase (psutil is in the test extra; PyYAML comes with
#: ``kubernetes``) and are needed only by the test kit's optional features.
# opentelemetry: the tracing extra, not a dependency, loaded only when --trace-exporter names an exporter.
# componentbase.controller: the informers, queues and elector it loads cost ~50 ms, kept off --help.
# http.client (with ssl and email, ~10 ms) and orjson (~5 ms): only once a call fails or a body is decoded.
# importlib.metadata (~20 ms with email): only for a sys.path entry the entry-point scan cannot read itself.
LAZY = ("kubernetes", "urllib3", "prometheus_client", "cryptography", "ruamel", "cattrs",
        "componentbase.client._throttled", "componentbase.client._conflicterror", "componentbase.controller",
        "psutil", "yaml", "opentelemetry", "http.client", "orjson", "importlib.metadata",
        # the runtime --help and --version must not import (issue 28): the client, the run step, TLS
        "componentbase.client", "componentbase.app._run", "ssl")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the tree at ``root`` (its pyproject.toml), in a fresh interpreter that finds that tree."""
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run([sys.executable, "-c", code, "--no-cache"], cwd=root, capture_output=True, text=True,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, timeout=120)


@pytest.mark.process  # lint-imports runs in a fresh interpreter
def test_the_layer_contracts_hold() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the packages and their contracts, to break on purpose."""
    for package in ("componentbase", "componentbase_examples"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def _broken(stdout: str) -> dict[str, str]:
    """The report of each broken contract, by contract name (lint-imports heads each with a line of dashes)."""
    report = stdout.split("\nBroken contracts\n----------------\n", 1)[1]
    parts = re.split(r"^(\S.*)\n-+\n", report, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


LAYERS = "Each package imports only the layers below it"
ROOT_CONTRACT = "No package imports the root package, which imports them all"
EXAMPLES_ACYCLIC = "No import cycles between the modules of any example package"


@pytest.mark.process  # lint-imports runs in a fresh interpreter
def test_each_break_is_caught_by_its_own_contract(tree: Path) -> None:
    """Four breaks in one copy, one lint-imports run (each run builds the whole graph again): each break must
    show in the report of the contract that forbids it, as its own import."""
    # A cycle through a function-level import (util -> app, while app imports util).
    _append(tree / "componentbase/util/_files.py", "\n\ndef _upward() -> None:\n    import componentbase.app\n")
    # Siblings of one layer must not know each other.
    _append(tree / "componentbase/informers/_cache.py", "\nfrom componentbase import workqueue  # noqa\n")
    # Importing the root package from inside (the only import of the root in the tree).
    _append(tree / "componentbase/util/version.py", "\nimport componentbase  # noqa\n")
    # A circle in the examples through a function-level import: the scheduling framework naming a plugin, which
    # imports the framework (issue 32: the default registry once lived there).
    _append(tree / "componentbase_examples/scheduler/framework.py",
            "\n\ndef _defaults() -> None:\n    import componentbase_examples.scheduler.plugins.nodename\n")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert f"{LAYERS} BROKEN" in result.stdout
    assert f"{ROOT_CONTRACT} BROKEN" in result.stdout
    assert f"{EXAMPLES_ACYCLIC} BROKEN" in result.stdout
    broken = _broken(result.stdout)
    layers = broken[LAYERS]
    assert "componentbase.util is not allowed to import componentbase.app:" in layers
    assert "- componentbase.util._files -> componentbase.app" in layers
    assert "componentbase.informers is not allowed to import componentbase.workqueue:" in layers
    assert "- componentbase.informers._cache -> componentbase.workqueue" in layers
    assert "componentbase.util.version is not allowed to import componentbase:" in broken[ROOT_CONTRACT]
    examples = broken[EXAMPLES_ACYCLIC]
    assert "No cycles are allowed in componentbase_examples.scheduler." in examples
    assert "- .framework -> .plugins (1 import)" in examples


def _imports(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line, imported module, inside a function) for each import in ``path``."""
    # One walk that carries "inside a function" down to the children (walking each function again was 40% of it).
    stack: list[tuple[ast.AST, bool]] = [(ast.parse(path.read_text(), str(path)), False)]
    while stack:
        node, inside = stack.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, inside
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}", inside
        inside = inside or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        stack.extend((child, inside) for child in ast.iter_child_nodes(node))


def _private(module: str) -> bool:
    return module.startswith("componentbase.") and any(p.startswith("_") and not p.startswith("__")
                                                       for p in module.split("."))


@pytest.mark.unit
def test_examples_and_benchmarks_use_only_public_names() -> None:
    found = [f"{path.relative_to(ROOT)}:{line}: {module}"
             for folder in ("componentbase_examples", "benchmarks") for path in sorted((ROOT / folder).rglob("*.py"))
             for line, module, _ in _imports(path) if _private(module)]
    assert not found, "private componentbase modules imported:\n" + "\n".join(found)


def _explained(lines: list[str], index: int) -> bool:
    """A comment on the import, or on the group of imports it belongs to, or on the line above the group."""
    while index >= 0:
        text = lines[index].strip()
        if "#" in text:
            return True
        if text and not text.startswith(("from ", "import ")):
            return False
        index -= 1
    return False


@pytest.mark.unit
def test_lazy_imports_are_only_slow_packages_and_say_why() -> None:
    """A function-level import hides a cycle or saves start-up time; only the latter is allowed, with a reason."""
    found = []
    for path in sorted((ROOT / "componentbase").rglob("*.py")):
        lines = path.read_text().splitlines()
        for line, module, inside in _imports(path):
            if not inside:
                continue
            slow = any(module == p or module.startswith(p + ".") for p in LAZY)
            if not slow or not _explained(lines, line - 1):
                found.append(f"{path.relative_to(ROOT)}:{line}: {module}" + ("" if slow else " (not slow)"))
    assert not found, "function-level imports that are not slow packages with a comment saying why:\n" + "\n".join(
        found)


@pytest.mark.unit
def test_no_module_of_the_library_or_the_examples_passes_400_lines() -> None:
    long = {str(path.relative_to(ROOT)): n for folder in ("componentbase", "componentbase_examples")
            for path in sorted((ROOT / folder).rglob("*.py"))
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 400}
    assert long == {}, "split these modules by concern (issue 13: at most 400 lines each)"


def _code_lines(path: Path) -> int:
    """Lines holding code: not blank, not only a comment, not part of a docstring."""
    source = path.read_text(encoding="utf-8")
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            docstrings.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    return sum(1 for number, line in enumerate(source.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and number not in docstrings)


@pytest.mark.unit
def test_the_hello_controller_is_at_most_12_lines_as_the_readme_says() -> None:
    hello = ROOT / "componentbase_examples" / "hello"
    total = sum(_code_lines(path) for path in sorted(hello.glob("*.py")))
    assert total <= 12  # issue 16: every file in the folder, blank lines, comments and docstrings not counted
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`componentbase_examples/hello`, is {total} lines" in readme
