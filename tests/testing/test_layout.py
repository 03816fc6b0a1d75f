"""Issue 30's layout of the loopback API server: the modules that moved keep their old paths as deprecated
aliases, and nothing in the repository still imports an old path."""

from __future__ import annotations

import ast
import importlib
import sys
import warnings
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "componentbase.testing.apiserver"

#: old public module -> its new home
MOVED = {"resources": "apimachinery.resources", "errors": "apimachinery.errors", "selectors": "apimachinery.selectors",
         "patch": "apimachinery.patch", "store": "storage.store", "watch": "storage.watch",
         "discovery": "kinds.discovery", "reviews": "auth.reviews"}
#: public modules and packages that stayed where users found them
KEPT = {"auth", "faults", "kubeconfig", "loopback", "rest", "routing", "server"}


def test_every_public_module_of_before_the_layout_is_kept_or_aliased() -> None:
    here = ROOT / "componentbase/testing/apiserver"
    public = {p.stem for p in here.glob("*.py") if not p.name.startswith("_")}
    assert public == set(MOVED) | KEPT - {"auth"}
    assert (here / "auth/__init__.py").is_file()


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_and_gives_the_moved_names(old: str) -> None:
    new = importlib.import_module(f"{PACKAGE}.{MOVED[old]}")
    sys.modules.pop(f"{PACKAGE}.{old}", None)
    with pytest.warns(DeprecationWarning, match=rf"{PACKAGE}\.{old} is deprecated; import {PACKAGE}\.{MOVED[old]}"):
        alias = importlib.import_module(f"{PACKAGE}.{old}")
    names = getattr(new, "__all__", None) or [n for n in vars(new) if not n.startswith("_")]
    assert names
    for name in names:
        assert getattr(alias, name) is getattr(new, name)
    with pytest.raises(AttributeError):
        _ = alias.no_such_name


def test_the_package_exports_are_unchanged_and_read_no_alias() -> None:
    package = importlib.import_module(PACKAGE)
    assert package.__all__ == ["FAULTS_PATH", "FaultRule", "Faults", "LoopbackAPIServer", "Resource", "ScalePaths",
                               "User", "kubeconfig_text", "write_kubeconfig"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an export read through a deprecated alias would raise here
        for name in package.__all__:
            value = getattr(package, name)
            assert isinstance(value, str) or value.__name__ == name


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports, relative imports resolved."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    if package.endswith(".__init__"):
        package = package[: -len(".__init__")]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def test_nothing_in_the_repository_imports_a_deprecated_path() -> None:
    old = {f"{PACKAGE}.{name}" for name in MOVED}
    found = []
    for folder in ("componentbase", "componentbase_examples", "tests", "benchmarks", "docs"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.parent == ROOT / "componentbase/testing/apiserver" and path.stem in MOVED:
                continue  # the aliases themselves
            found += [f"{path.relative_to(ROOT)}: {name}" for name in sorted(_imported(path) & old)]
    assert not found, "imports of deprecated paths:\n" + "\n".join(found)
