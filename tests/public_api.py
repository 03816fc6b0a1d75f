"""The public API: the packages of componentbase and the names each lists in ``__all__``."""

from __future__ import annotations

import importlib
import inspect
from types import ModuleType

#: Every package, lowest layer first, and the public modules reached through one (``componentbase.util.field``).
PACKAGES = (
    "componentbase.util", "componentbase.util.field", "componentbase.util.version", "componentbase.cli",
    "componentbase.logs", "componentbase.metrics", "componentbase.componentconfig", "componentbase.client",
    "componentbase.informers", "componentbase.workqueue", "componentbase.events", "componentbase.leaderelection",
    "componentbase.serving", "componentbase.serving.configz", "componentbase.webhook", "componentbase.app",
    "componentbase.testing",
)


def modules() -> list[ModuleType]:
    return [importlib.import_module(name) for name in ("componentbase", *PACKAGES)]


def documentable(obj: object) -> bool:
    """Classes and functions carry docstrings; constants and re-exported modules are described by their package."""
    return inspect.isclass(obj) or inspect.isroutine(obj)


def own_docstring(obj: object) -> str:
    """A class's own docstring, not one inherited from a base (``__doc__`` of a class is never inherited)."""
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    return (doc or "").strip()
