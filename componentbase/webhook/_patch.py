"""The RFC 6902 JSON patch from an object as it came to a mutating webhook to the object as its handler left it.

Only ``add``, ``remove`` and ``replace``, as controller-runtime's patches (gomodules.xyz/jsonpatch): every
JSON patch implementation applies those alike, where ``move`` and ``copy`` (which PyPI's jsonpatch emits when
it guesses a list was reordered) are where implementations differ. Maps are diffed key by key; a list of the
same length item by item, else replaced whole (always correct; a patch to a list's middle would also have to
be right about every index after it). Values compare with their JSON type: ``1`` is not ``true`` nor ``1.0``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["json_patch"]


def _pointer(path: str, key: str | int) -> str:
    """RFC 6901: ``~`` is ``~0`` and ``/`` is ``~1`` (annotation keys such as ``example.com/owner``)."""
    return f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _diff(old: Any, new: Any, path: str, ops: list[dict[str, Any]]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": _pointer(path, key)})
        for key, value in new.items():
            if key not in old:
                ops.append({"op": "add", "path": _pointer(path, key), "value": value})
            else:
                _diff(old[key], value, _pointer(path, key), ops)
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff(a, b, _pointer(path, i), ops)
        return
    if not _same(old, new):
        ops.append({"op": "replace", "path": path, "value": new})


def json_patch(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The operations turning ``old`` into ``new``; empty when they are the same."""
    ops: list[dict[str, Any]] = []
    _diff(old, new, "", ops)
    return ops
