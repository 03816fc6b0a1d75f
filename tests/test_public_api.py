"""Every public name (each package's ``__all__``) exists and says, in a docstring, what it is for."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.public_api import documentable, modules, own_docstring

pytestmark = pytest.mark.unit


def exported(module: ModuleType) -> list[str]:
    return list(module.__all__)


@pytest.mark.parametrize("module", modules(), ids=lambda m: m.__name__)
def test_every_exported_name_exists(module: ModuleType) -> None:
    assert [name for name in exported(module) if not hasattr(module, name)] == []


@pytest.mark.parametrize("module", modules(), ids=lambda m: m.__name__)
def test_every_exported_class_and_function_has_a_docstring(module: ModuleType) -> None:
    objects = {name: getattr(module, name) for name in exported(module)}
    undocumented = [name for name, obj in objects.items() if documentable(obj) and not own_docstring(obj)]
    assert undocumented == [], f"{module.__name__}: add a docstring saying why to {undocumented}"


def test_the_root_re_exports_only_names_a_package_documents() -> None:
    """The reference documents each name once, in its package; a root-only name would be missing from it."""
    root, *packages = modules()
    documented = {id(getattr(p, name)) for p in packages for name in exported(p)}
    assert [name for name in exported(root) if id(getattr(root, name)) not in documented] == []
