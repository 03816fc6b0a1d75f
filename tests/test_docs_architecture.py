"""The picture of the layers in docs/architecture.md shows the packages that exist, layered as the contract says."""

from __future__ import annotations

import runpy
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
LAYERS: list[list[str]] = runpy.run_path(str(ROOT / "docs/hooks/layers.py"))["LAYERS"]


def test_the_picture_shows_every_package_once() -> None:
    packages = sorted(p.parent.name for p in (ROOT / "componentbase").glob("*/__init__.py"))
    drawn = [name for layer in LAYERS for name in layer]
    assert sorted(drawn) == packages


def test_the_picture_is_the_import_linter_layers_contract() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text()).get("tool", {}).get("importlinter", {})
    contracts = [c for c in config.get("contracts", []) if c.get("id") == "layers"]
    if not contracts:
        pytest.skip("pyproject.toml has no [tool.importlinter] contract with id = \"layers\"")
    (contract,) = contracts
    layers = [{name.strip() for name in entry.split("|")} for entry in contract["layers"]]
    assert layers == [set(layer) for layer in LAYERS]


def test_the_apiserver_picture_is_its_layers_contract() -> None:
    """docs/architecture.md's picture of the loopback API server: every folder of it, layered as the
    ``apiserver-layers`` contract says (the contract's deprecated aliases of moved modules are not drawn)."""
    hook = runpy.run_path(str(ROOT / "docs/hooks/layers.py"))
    drawn: list[list[str]] = hook["APISERVER_LAYERS"]
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c.get("id") == "apiserver-layers"]
    here = ROOT / "componentbase/testing/apiserver"
    aliases = {p.stem for p in here.glob("*.py") if "DeprecationWarning" in p.read_text()}
    layers = [{name.strip() for name in entry.split("|")} - aliases for entry in contract["layers"]]
    assert layers == [set(layer) for layer in drawn]
    folders = {p.parent.name for p in here.glob("*/__init__.py")}
    assert folders <= {name for layer in drawn for name in layer}
    assert set(hook["APISERVER_ROLES"]) == {name for layer in drawn for name in layer}
