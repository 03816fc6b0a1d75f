"""The namespace controller's part (pkg/controller/namespace/deletion): a Terminating namespace has
its contents deleted, reports what remains in its conditions, and once empty loses its
``kubernetes`` finalizer and goes."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..registry._deletion import Deleter, delete
from ..wire._wire import Options, Request, now_rfc3339

__all__ = ["sweep"]

FINALIZER = "kubernetes"
# the conditions kube's controller reports that this one always passes, as kube words them
_ALWAYS = (("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"),
           ("NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions",
            "All legacy kube types successfully parsed"),
           ("NamespaceDeletionContentFailure", "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization"))


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def sweep(rest: Deleter, name: str) -> None:
    """Delete what is left in namespace ``name`` if it is being deleted, and finish it when empty.

    Contents go as kube's controller deletes them: with propagationPolicy Background and their own
    grace periods, so a bound pod waits for its kubelet and a finalizer for its controller.
    """
    namespaces = rest.registry.must("", "v1", "namespaces")
    cur = rest.store.get(namespaces.bucket, "", name)
    if cur is None or not _meta(cur.obj).get("deletionTimestamp"):
        return
    remaining: Counter[str] = Counter()
    finalizers: Counter[str] = Counter()
    for res in rest.registry.buckets(namespaced=True):
        for entry in rest.store.items(res.bucket, name):
            item = _meta(entry.obj)["name"]
            if not _meta(entry.obj).get("deletionTimestamp"):
                req = Request("delete", res, name, item, options=Options(propagation="Background"))
                delete(rest, req, name, entry)
            left = rest.store.get(res.bucket, name, item)
            if left is not None:
                remaining[f"{res.plural}.{res.group}"] += 1
                finalizers.update(_meta(left.obj).get("finalizers") or ())
    cur = rest.store.get(namespaces.bucket, "", name)
    if cur is None:
        return
    if remaining:
        _report(rest, cur.obj, remaining, finalizers)
        return
    spec = cur.obj.get("spec") or {}
    if FINALIZER in (spec.get("finalizers") or ()):  # what the controller's PUT .../finalize does
        new_spec = {k: v for k, v in spec.items() if k != "finalizers"}
        left_over = [f for f in spec["finalizers"] if f != FINALIZER]
        if left_over:
            new_spec["finalizers"] = left_over
        cur = rest._write(namespaces, "", dict(cur.obj, spec=new_spec), dry=False)
    if not (cur.obj.get("spec") or {}).get("finalizers"):  # then its second DELETE
        delete(rest, Request("delete", namespaces, "", name), "", cur)


def _report(rest: Deleter, ns: dict[str, Any], remaining: Counter[str], finalizers: Counter[str]) -> None:
    """Write the deletion conditions kube's controller sets, when they changed."""
    wanted = [(t, "False", r, m) for t, r, m in _ALWAYS]
    counts = ", ".join(sorted(f"{k} has {n} resource instances" for k, n in remaining.items()))
    wanted.append(("NamespaceContentRemaining", "True", "SomeResourcesRemain",
                   f"Some resources are remaining: {counts}"))
    if finalizers:
        held = ", ".join(sorted(f"{f} in {n} resource instances" for f, n in finalizers.items()))
        wanted.append(("NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain",
                       f"Some content in the namespace has finalizers remaining: {held}"))
    else:
        wanted.append(("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers",
                       "All content-preserving finalizers finished"))
    status = ns.get("status") or {}
    old = {c.get("type"): c for c in status.get("conditions") or () if isinstance(c, dict)}
    conditions = []
    for kind, state, reason, message in wanted:
        prev = old.get(kind) or {}
        same = prev.get("status") == state
        conditions.append({"type": kind, "status": state,
                           "lastTransitionTime": prev.get("lastTransitionTime") if same else now_rfc3339(),
                           "reason": reason, "message": message})
    if conditions != status.get("conditions"):
        namespaces = rest.registry.must("", "v1", "namespaces")
        rest._write(namespaces, "", dict(ns, status=dict(status, conditions=conditions)), dry=False)
