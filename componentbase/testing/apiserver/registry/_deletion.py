"""DELETE as kube-apiserver's generic registry does it (registry/generic/registry/store.go and
pkg/api/rest/delete.go): graceful deletion of bound pods, finalizers that hold an object, the
garbage collector's ``orphan`` and ``foregroundDeletion`` finalizers chosen from DeleteOptions'
propagationPolicy, and a namespace's switch to Terminating. What happens after (dependents
collected, a namespace emptied) is ``_gc``'s work.
"""

from __future__ import annotations

import calendar
import time
from typing import Any, Protocol

from ..admission._policies import PolicyAdmission
from ..admission._webhooks import WebhookAdmission
from ..apimachinery.errors import ApiError
from ..apimachinery.resources import Registry, Resource
from ..storage.store import Entry, Store
from ..wire._wire import Request, now_rfc3339

__all__ = ["FOREGROUND", "ORPHAN", "Deleter", "check_new_finalizers", "check_preconditions", "delete",
           "delete_namespace", "done_deleting", "refuse_in_terminating"]

ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
# kube's DefaultGarbageCollectionPolicy: core/v1 ReplicationControllers and batch/v1 Jobs orphan their
# dependents unless told otherwise (for backwards compatibility); everything else deletes them.
_ORPHAN_BY_DEFAULT = frozenset({"replicationcontrollers", "jobs.batch"})


class Deleter(Protocol):
    """What deleting needs of the REST layer (``rest.Rest``, which imports this module)."""

    store: Store
    registry: Registry
    garbage_collection: bool
    webhooks: WebhookAdmission

    def _write(self, res: Resource, namespace: str, obj: dict[str, Any], *, dry: bool) -> Entry: ...

    def _remove(self, res: Resource, namespace: str, cur: Entry, *, dry: bool) -> Entry: ...


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _parse(stamp: str) -> float:
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def _orphans(res: Resource, finalizers: list[str], policy: str | None) -> bool:
    """store.go's shouldOrphanDependents: the request's policy, else the object's GC finalizer, else
    the resource's default."""
    if policy is not None:
        return policy == "Orphan"
    for f in finalizers:
        if f in (ORPHAN, FOREGROUND):
            return f == ORPHAN
    return res.key in _ORPHAN_BY_DEFAULT


def _foreground(finalizers: list[str], policy: str | None) -> bool:
    """store.go's shouldDeleteDependents."""
    if policy is not None:
        return policy == "Foreground"
    for f in finalizers:
        if f in (ORPHAN, FOREGROUND):
            return f == FOREGROUND
    return False


def gc_finalizers(rest: Deleter, res: Resource, finalizers: list[str], policy: str | None) -> list[str]:
    """The finalizers a delete leaves on the object: the garbage collector's two as the policy asks
    (none when garbage collection is off, as kube-apiserver's --enable-garbage-collector=false)."""
    if not rest.garbage_collection:
        return finalizers
    out = [f for f in finalizers if f not in (ORPHAN, FOREGROUND)]
    if _orphans(res, finalizers, policy):
        out.append(ORPHAN)
    if _foreground(finalizers, policy):
        out.append(FOREGROUND)
    return finalizers if set(out) == set(finalizers) else out


def _pod_grace(pod: dict[str, Any], grace: int | None) -> int:
    """The pod strategy's CheckGracefulDelete: unscheduled or finished pods go at once."""
    spec = pod.get("spec") or {}
    period = grace if grace is not None else int(spec.get("terminationGracePeriodSeconds") or 0)
    if not spec.get("nodeName") or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        period = 0
    return 1 if period < 0 else period


def _store(rest: Deleter, res: Resource, namespace: str, cur: Entry, obj: dict[str, Any], dry: bool) -> Entry:
    return cur if obj == cur.obj else rest._write(res, namespace, obj, dry=dry)


def delete(rest: Deleter, req: Request, namespace: str, cur: Entry) -> Entry:
    """Delete ``cur`` as ``req`` asks; the answer is the object as removed or as now held."""
    res, dry = req.res, req.options.dry_run
    grace = req.options.grace
    if grace is not None and grace < 0:
        grace = 1  # kube treats a negative grace period as one second
    meta = _meta(cur.obj)
    new_meta = dict(meta)
    graceful = False
    if meta.get("deletionTimestamp"):
        old = meta.get("deletionGracePeriodSeconds") or 0
        if old:  # a graceful deletion is pending: only a shorter grace period changes it
            if grace is None or grace >= old:
                return cur
            new_meta["deletionTimestamp"] = now_rfc3339(_parse(meta["deletionTimestamp"]) - old + grace
                                                        - time.time())
            new_meta["deletionGracePeriodSeconds"] = grace
            graceful = True
    elif res.key == "pods":
        grace = _pod_grace(cur.obj, grace)
        new_meta.update(deletionTimestamp=now_rfc3339(grace), deletionGracePeriodSeconds=grace)
        graceful = True
        _bump(new_meta)
    finalizers = list(meta.get("finalizers") or [])
    wanted = gc_finalizers(rest, res, finalizers, req.options.propagation)
    if wanted != finalizers:
        new_meta["finalizers"] = wanted
    obj = dict(cur.obj, metadata=new_meta)
    if wanted:
        if not graceful:  # store.go's markAsDeleting
            if not meta.get("deletionTimestamp"):
                _bump(new_meta)
            now = now_rfc3339()
            if not meta.get("deletionTimestamp") or meta["deletionTimestamp"] > now:
                new_meta["deletionTimestamp"] = now
            new_meta["deletionGracePeriodSeconds"] = 0
        return _store(rest, res, namespace, cur, obj, dry)
    if graceful:  # kube's graceful path stores the deletionTimestamp first (MODIFIED), then deletes
        cur = _store(rest, res, namespace, cur, obj, dry)
        if new_meta.get("deletionGracePeriodSeconds"):
            return cur
    return rest._remove(res, namespace, cur, dry=dry)


def _bump(meta: dict[str, Any]) -> None:
    """A delete that starts bumps generation, where the object tracks one."""
    if isinstance(meta.get("generation"), int) and meta["generation"] > 0:
        meta["generation"] += 1


def delete_namespace(rest: Deleter, req: Request, cur: Entry) -> Entry:
    """The namespace registry's Delete: the first request marks the namespace Terminating (the
    namespace controller in ``_gc`` then empties and finalizes it); a namespace without
    spec.finalizers goes through the generic delete."""
    name = _meta(cur.obj)["name"]
    if name in IMMORTAL_NAMESPACES:
        message = f'namespaces "{name}" is forbidden: this namespace may not be deleted'
        raise ApiError(403, "Forbidden", message, {"name": name, "kind": "namespaces"})
    # after NamespaceLifecycle's refusal, as kube's plugins are ordered
    rest.webhooks.deleting(req, "", cur.obj, PolicyAdmission(rest.store, rest.registry).deleting)
    meta = _meta(cur.obj)
    if not meta.get("deletionTimestamp"):
        finalizers = list(meta.get("finalizers") or [])
        new_meta = dict(meta, deletionTimestamp=now_rfc3339())
        wanted = gc_finalizers(rest, req.res, finalizers, req.options.propagation)
        if wanted != finalizers:
            new_meta["finalizers"] = wanted
        obj = dict(cur.obj, metadata=new_meta, status=dict(cur.obj.get("status") or {}, phase="Terminating"))
        cur = rest._write(req.res, "", obj, dry=req.options.dry_run)
    if (cur.obj.get("spec") or {}).get("finalizers"):
        return cur
    return delete(rest, req, "", cur)


def done_deleting(res: Resource, obj: dict[str, Any]) -> bool:
    """store.go's shouldDeleteDuringUpdate: an update that leaves a deleting object without finalizers
    (and, for a namespace, without spec.finalizers) removes it, unless a grace period still runs."""
    meta = _meta(obj)
    if not meta.get("deletionTimestamp") or meta.get("finalizers") or meta.get("deletionGracePeriodSeconds"):
        return False
    return res.key != "namespaces" or not (obj.get("spec") or {}).get("finalizers")


def check_new_finalizers(res: Resource, old: dict[str, Any], new: dict[str, Any]) -> None:
    """ValidateObjectMetaUpdate: no finalizer may be added once the object is being deleted."""
    old_meta = _meta(old)
    if not old_meta.get("deletionTimestamp"):
        return
    before = set(old_meta.get("finalizers") or [])
    extra = sorted({f for f in _meta(new).get("finalizers") or [] if f not in before})
    if extra:
        shown = ", ".join(f'"{f}"' for f in extra)
        why = ("Forbidden: no new finalizers can be added if the object is being deleted, "
               f"found new finalizers []string{{{shown}}}")
        raise ApiError.invalid_fields(res.group, res.kind, old_meta.get("name", ""),
                                      [("FieldValueForbidden", "metadata.finalizers", why)])


def refuse_in_terminating(rest: Deleter, res: Resource, namespace: str, name: str) -> None:
    """The NamespaceLifecycle admission plugin: nothing new is created in a Terminating namespace."""
    if not namespace:
        return
    ns = rest.store.get(rest.registry.must("", "v1", "namespaces").bucket, "", namespace)
    if ns is None or (ns.obj.get("status") or {}).get("phase") != "Terminating":
        return
    why = f"unable to create new content in namespace {namespace} because it is being terminated"
    target = f'{res.key} "{name}"' if name else res.key
    details: dict[str, Any] = {"name": name, "group": res.group, "kind": res.plural, "causes": [
        {"reason": "NamespaceTerminating", "message": f"namespace {namespace} is being terminated",
         "field": "metadata.namespace"}]}
    if not res.group:
        del details["group"]
    raise ApiError(403, "Forbidden", f"{target} is forbidden: {why}", details)


def check_preconditions(req: Request, cur: Entry) -> None:
    """DeleteOptions' preconditions (uid, resourceVersion): kube's 409 when the stored object differs."""
    pre = req.options.preconditions
    if not pre:
        return
    meta = cur.obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    for key, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
        if pre.get(key) and pre[key] != meta.get(key):
            message = (f"Precondition failed: {label} in precondition: {pre[key]}, "
                       f"{label} in object meta: {meta.get(key)}")
            raise ApiError.conflict(req.res, req.name, message)
