"""``create_or_update`` and ``create_or_patch``, as controller-runtime's ``controllerutil``.

The live object is read from the server (not a cache, whose copy may lag this process's own last write),
handed to ``mutate``, and written only if ``mutate`` changed it: a reconcile that finds everything in order
sends no write at all. For a kind with a status subresource a write to the object ignores its status, so a
status ``mutate`` changed goes in a second write, to ``/status``, and the result says so
(``updatedStatus``, ``updatedStatusOnly``); controller-runtime's ``CreateOrUpdate`` drops such a change
silently, and a controller using it writes the same no-op on every reconcile.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from componentbase.client._errors import is_not_found
from componentbase.client._rest import RESTMapper

__all__ = ["OperationResult", "create_or_patch", "create_or_update", "merge_patch"]

Obj = dict[str, Any]
Mutate = Callable[[Obj], object]


class OperationResult(enum.StrEnum):
    """What ``create_or_update`` / ``create_or_patch`` did; the values are controller-runtime's."""

    UNCHANGED = "unchanged"
    CREATED = "created"
    UPDATED = "updated"
    UPDATED_STATUS = "updatedStatus"  # the object and its status subresource
    UPDATED_STATUS_ONLY = "updatedStatusOnly"  # its status subresource alone


class _Client(Protocol):
    mapper: RESTMapper

    def get(self, api_version: str, kind: str, name: str, namespace: str = "") -> Obj: ...

    def create(self, obj: Obj, *, dry_run: bool = False, field_manager: str = "") -> Obj: ...

    def update(self, obj: Obj, *, subresource: str = "", dry_run: bool = False, field_manager: str = "") -> Obj: ...

    def patch(self, obj: Obj, patch: Any, *, patch_type: str = "merge", subresource: str = "",
              dry_run: bool = False, field_manager: str = "") -> Obj: ...


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _mutated(obj: Obj, mutate: Mutate) -> Obj:
    """A copy of ``obj`` as ``mutate`` leaves it; it may not move the object elsewhere."""
    out = copy.deepcopy(obj)
    mutate(out)
    if _key(out) != _key(obj):
        raise ValueError("MutateFn cannot mutate object name and/or object namespace")
    return out


def _live(client: _Client, obj: Obj) -> Obj | None:
    namespace, name = _key(obj)
    try:
        return client.get(str(obj.get("apiVersion", "")), str(obj.get("kind", "")), name, namespace)
    except Exception as err:
        if is_not_found(err):
            return None
        raise


def _has_status(client: _Client, obj: Obj) -> bool:
    mapping = client.mapper.mapping(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    return "status" in mapping.subresources


def _split(obj: Obj, status: bool) -> tuple[Obj, Obj]:
    """The object without its status, and ``{"status": ...}`` (empty when absent); all of it when the kind
    has no status subresource."""
    if not status:
        return obj, {}
    return {k: v for k, v in obj.items() if k != "status"}, {k: v for k, v in obj.items() if k == "status"}


def merge_patch(before: Mapping[str, Any], after: Mapping[str, Any]) -> Obj:
    """The JSON merge patch (RFC 7386) that turns ``before`` into ``after``: changed keys, nested objects
    diffed, lists whole, removed keys as null."""
    patch: Obj = {k: None for k in before if k not in after}
    for k, new in after.items():
        if k in before and before[k] == new:
            continue
        old = before.get(k)
        patch[k] = merge_patch(old, new) if isinstance(old, dict) and isinstance(new, dict) else new
    return patch


def _outcome(main: bool, status: bool) -> OperationResult:
    if status:
        return OperationResult.UPDATED_STATUS if main else OperationResult.UPDATED_STATUS_ONLY
    return OperationResult.UPDATED if main else OperationResult.UNCHANGED


#: Writes one part of a changed object: ``write(live, result, desired, old_part, new_part, status)``, the
#: object itself (``status`` false) or its status subresource; returns the server's answer.
_Write = Callable[[Obj, Obj, Obj, Any, Any, bool], Obj]


def create_or_update(client: _Client, obj: Obj, mutate: Mutate, *,
                     dry_run: bool = False) -> tuple[Obj, OperationResult]:
    """Read ``obj`` (by apiVersion, kind, namespace and name); ``mutate`` it, or ``obj`` itself when absent;
    create it, or PUT it back (guarded by the resourceVersion read) only if ``mutate`` changed it."""

    def put(live: Obj, result: Obj, desired: Obj, old: Any, new: Any, status: bool) -> Obj:
        if status:
            return client.update({**result, "status": desired.get("status")}, subresource="status", dry_run=dry_run)
        return client.update(desired, dry_run=dry_run)

    return _create_or_write(client, obj, mutate, put, dry_run)


def create_or_patch(client: _Client, obj: Obj, mutate: Mutate, *,
                    dry_run: bool = False) -> tuple[Obj, OperationResult]:
    """As ``create_or_update``, writing a JSON merge patch of what ``mutate`` changed instead of the whole
    object (not guarded by the resourceVersion: fields ``mutate`` left alone are not sent)."""

    def patch(live: Obj, result: Obj, desired: Obj, old: Any, new: Any, status: bool) -> Obj:
        return client.patch(live, merge_patch(old, new), subresource="status" if status else "", dry_run=dry_run)

    return _create_or_write(client, obj, mutate, patch, dry_run)


def _create_or_write(client: _Client, obj: Obj, mutate: Mutate, write: _Write,
                     dry_run: bool) -> tuple[Obj, OperationResult]:
    """Create ``obj`` as ``mutate`` leaves it when absent; else ``write`` the object, then its status, each
    only if ``mutate`` changed it."""
    live = _live(client, obj)
    if live is None:
        return client.create(_mutated(obj, mutate), dry_run=dry_run), OperationResult.CREATED
    desired = _mutated(live, mutate)
    split = _has_status(client, live)
    (old_main, old_status), (new_main, new_status) = _split(live, split), _split(desired, split)
    result = live
    if new_main != old_main:
        result = write(live, result, desired, old_main, new_main, False)
    if new_status != old_status:
        result = write(live, result, desired, old_status, new_status, True)
    return result, _outcome(new_main != old_main, new_status != old_status)
