"""Finalizers on plain dict objects, as controller-runtime's ``controllerutil`` adds, removes and tests them.

A finalizer holds a deleted object (its ``deletionTimestamp`` set) until whoever added it has cleaned up
and removed it. These change the object in place and report whether they did, so a controller writes only
when something changed; ``Manager.controller(..., finalizer=..., cleanup=...)`` does the whole dance.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from componentbase.controller._types import Obj

__all__ = ["add_finalizer", "finalizers_of", "has_finalizer", "is_being_deleted", "remove_finalizer"]


def finalizers_of(obj: Mapping[str, Any]) -> list[str]:
    """A copy of ``obj``'s finalizers (none: an empty list)."""
    meta = obj.get("metadata")
    found = meta.get("finalizers") if isinstance(meta, Mapping) else None
    return [str(f) for f in found] if isinstance(found, list) else []


def has_finalizer(obj: Mapping[str, Any], name: str) -> bool:
    """Whether ``obj`` carries the finalizer ``name`` (controllerutil's ``ContainsFinalizer``)."""
    return name in finalizers_of(obj)


def add_finalizer(obj: Obj, name: str) -> bool:
    """Append the finalizer ``name`` unless ``obj`` has it; whether the finalizers changed."""
    found = finalizers_of(obj)
    if name in found:
        return False
    obj.setdefault("metadata", {})["finalizers"] = [*found, name]
    return True


def remove_finalizer(obj: Obj, name: str) -> bool:
    """Remove every occurrence of the finalizer ``name``; whether the finalizers changed.

    The list is left empty rather than dropped, so a merge patch of ``metadata.finalizers`` clears it.
    """
    found = finalizers_of(obj)
    kept = [f for f in found if f != name]
    if len(kept) == len(found):
        return False
    obj.setdefault("metadata", {})["finalizers"] = kept
    return True


def is_being_deleted(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` has a ``deletionTimestamp``: deleted, held by finalizers until they are removed."""
    meta = obj.get("metadata")
    return isinstance(meta, Mapping) and bool(meta.get("deletionTimestamp"))
