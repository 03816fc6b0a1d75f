"""Owner references on plain dict objects, as controller-runtime's ``controllerutil`` sets and removes them.

An owner reference makes kube's garbage collector delete the object once its owner is gone, and lets a
controller map a child's events back to its owner (``enqueue_owner``). References name the same owner when
their API group, kind and name match (not the version, not the uid), as ``controllerutil`` compares them.

Scope is read from the objects themselves: an object without ``metadata.namespace`` is taken as
cluster-scoped. Set a namespaced child's namespace before calling these, or it is refused as a
cluster-scoped object with a namespaced owner.

Mutators take ``(owner, obj)`` as ``controllerutil``'s functions do; questions take ``(obj, owner)`` as
``metav1.IsControlledBy`` does. Objects are changed in place; nothing is written to the server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from componentbase.controller._types import Obj

__all__ = [
    "AlreadyOwnedError",
    "OwnerReferenceError",
    "get_controller_of",
    "has_controller_reference",
    "has_owner_reference",
    "is_controlled_by",
    "remove_controller_reference",
    "remove_owner_reference",
    "set_controller_reference",
    "set_owner_reference",
]


class OwnerReferenceError(ValueError):
    """An owner reference that cannot be set or removed (controller-runtime's wording where it has one)."""


class AlreadyOwnedError(OwnerReferenceError):
    """The object already has another controller: an object has at most one, or controllers fight over it."""

    def __init__(self, obj: Mapping[str, Any], existing: Mapping[str, Any]) -> None:
        meta = _meta(obj)
        super().__init__(f"Object {meta.get('namespace') or ''}/{meta.get('name') or ''} is already owned by "
                         f"another {existing.get('kind')} controller {existing.get('name')}")
        #: The object that was to be controlled.
        self.object = obj
        #: Its existing controller reference.
        self.owner = existing


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _group(api_version: object) -> str:
    return str(api_version or "").rpartition("/")[0]


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """controller-runtime's ``referSameObject``: same group, kind and name."""
    return (_group(a.get("apiVersion")) == _group(b.get("apiVersion")) and a.get("kind") == b.get("kind")
            and a.get("name") == b.get("name"))


def _reference(owner: Mapping[str, Any]) -> dict[str, Any]:
    """The reference naming ``owner``; one kube would refuse (no uid: the owner was never created) is
    refused here, naming the missing field, instead of as the server's 422 on the child's write."""
    meta = _meta(owner)
    ref = {"apiVersion": owner.get("apiVersion"), "kind": owner.get("kind"), "name": meta.get("name"),
           "uid": meta.get("uid")}
    for field, value in ref.items():
        if not value or not isinstance(value, str):
            where = field if field in ("apiVersion", "kind") else f"metadata.{field}"
            raise OwnerReferenceError(f"the owner has no {where}: owners must be objects read from the server")
    return ref


def _validate(owner: Mapping[str, Any], obj: Mapping[str, Any]) -> None:
    """controller-runtime's ``validateOwner``: a namespaced owner owns only objects of its own namespace."""
    owner_ns = _meta(owner).get("namespace") or ""
    if not owner_ns:
        return
    obj_ns = _meta(obj).get("namespace") or ""
    if not obj_ns:
        raise OwnerReferenceError("cluster-scoped resource must not have a namespace-scoped owner, "
                                  f"owner's namespace {owner_ns}")
    if owner_ns != obj_ns:
        raise OwnerReferenceError(f"cross-namespace owner references are disallowed, owner's namespace {owner_ns}, "
                                  f"obj's namespace {obj_ns}")


def _refs(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    refs = _meta(obj).get("ownerReferences")
    return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []


def _upsert(obj: Obj, ref: dict[str, Any]) -> None:
    refs = _refs(obj)
    index = next((i for i, r in enumerate(refs) if _same(r, ref)), None)
    if index is None:
        refs.append(ref)
    else:
        refs[index] = ref
    obj.setdefault("metadata", {})["ownerReferences"] = refs


def set_controller_reference(owner: Mapping[str, Any], obj: Obj, *, block_owner_deletion: bool = True) -> None:
    """Make ``owner`` the controller of ``obj`` (``controller`` and ``blockOwnerDeletion`` true).

    Setting the same owner again replaces its reference. ``AlreadyOwnedError`` if another object controls
    ``obj``; ``OwnerReferenceError`` for an owner in another namespace, or a namespaced owner of a
    cluster-scoped object (kube's garbage collector would treat the reference as dangling).
    """
    _validate(owner, obj)
    ref = _reference(owner)
    ref["controller"] = True
    ref["blockOwnerDeletion"] = block_owner_deletion
    existing = get_controller_of(obj)
    if existing is not None and not _same(existing, ref):
        raise AlreadyOwnedError(obj, existing)
    _upsert(obj, ref)


def set_owner_reference(owner: Mapping[str, Any], obj: Obj, *, block_owner_deletion: bool | None = None) -> None:
    """Add ``owner`` to ``obj``'s owners, not as its controller (a reference to it is replaced); the same
    namespace rules as ``set_controller_reference``."""
    _validate(owner, obj)
    ref = _reference(owner)
    if block_owner_deletion is not None:
        ref["blockOwnerDeletion"] = block_owner_deletion
    _upsert(obj, ref)


def _remove(owner: Mapping[str, Any], obj: Obj, *, controller: bool) -> None:
    refs = _refs(obj)
    kind = "controller" if controller else "owner"
    if not refs or (controller and get_controller_of(obj) is None):
        raise OwnerReferenceError(f"{_describe(obj)} has no {kind} reference")
    target = {"apiVersion": owner.get("apiVersion"), "kind": owner.get("kind"), "name": _meta(owner).get("name")}
    index = next((i for i, r in enumerate(refs) if _same(r, target)), None)
    if index is None:
        raise OwnerReferenceError(f"{_describe(obj)} has no {kind} reference to {_describe(owner)}")
    if controller and not refs[index].get("controller"):
        raise OwnerReferenceError(f"{_describe(owner)} is not the controller of {_describe(obj)}")
    del refs[index]
    obj.setdefault("metadata", {})["ownerReferences"] = refs


def remove_owner_reference(owner: Mapping[str, Any], obj: Obj) -> None:
    """Remove ``owner``'s reference from ``obj`` (to hand it to another owner); an error if it has none."""
    _remove(owner, obj, controller=False)


def remove_controller_reference(owner: Mapping[str, Any], obj: Obj) -> None:
    """Remove ``owner``'s controller reference from ``obj``; an error if ``owner`` is not its controller."""
    _remove(owner, obj, controller=True)


def get_controller_of(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """``obj``'s controller reference (``metav1.GetControllerOf``), or None."""
    return next((r for r in _refs(obj) if r.get("controller") is True), None)


def has_controller_reference(obj: Mapping[str, Any]) -> bool:
    """Whether any object controls ``obj``."""
    return get_controller_of(obj) is not None


def has_owner_reference(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """Whether ``obj`` names ``owner`` among its owners (controller or not; by group, kind and name)."""
    target = {"apiVersion": owner.get("apiVersion"), "kind": owner.get("kind"), "name": _meta(owner).get("name")}
    return any(_same(r, target) for r in _refs(obj))


def is_controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """Whether ``owner`` is ``obj``'s controller, by uid (``metav1.IsControlledBy``): an owner deleted and
    created again under the same name does not control the old owner's children."""
    ref = get_controller_of(obj)
    uid = _meta(owner).get("uid")
    return ref is not None and bool(uid) and ref.get("uid") == uid


def _describe(obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    ns, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{obj.get('kind') or 'object'} {ns}/{name}" if ns else f"{obj.get('kind') or 'object'} {name}"
