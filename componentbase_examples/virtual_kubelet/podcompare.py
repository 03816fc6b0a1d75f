"""When two versions of a pod differ in a way the provider or the API server must hear about (upstream ``pod.go``)."""

from __future__ import annotations

from typing import Any

__all__ = [
    "effectively_equal",
    "is_running",
    "is_terminal",
    "merged_status",
    "pods_equal",
    "should_enqueue",
    "status_patch",
]

Pod = dict[str, Any]

_SPEC_FIELDS = ("containers", "initContainers", "ephemeralContainers", "activeDeadlineSeconds", "tolerations")


def _meta(pod: Pod) -> dict[str, Any]:
    return pod.get("metadata") or {}


def pods_equal(a: Pod, b: Pod) -> bool:
    """What the provider runs is the same: containers, deadlines, tolerations, labels, annotations."""
    sa, sb = a.get("spec") or {}, b.get("spec") or {}
    if any(sa.get(f) != sb.get(f) for f in _SPEC_FIELDS):
        return False
    ma, mb = _meta(a), _meta(b)
    return bool((ma.get("labels") or {}) == (mb.get("labels") or {})
                and (ma.get("annotations") or {}) == (mb.get("annotations") or {}))


def should_enqueue(old: Pod, new: Pod) -> bool:
    """An informer update worth a sync: the provider's view changed, or deletion started or changed."""
    if not pods_equal(old, new):
        return True
    mo, mn = _meta(old), _meta(new)
    return bool(mo.get("deletionTimestamp") != mn.get("deletionTimestamp")
                or mo.get("deletionGracePeriodSeconds") != mn.get("deletionGracePeriodSeconds"))


def effectively_equal(a: Pod, b: Pod) -> bool:
    """Equal but for ``resourceVersion``, managedFields and status: nothing new to tell the provider
    (kube rewrites managedFields on every write, this node's own status writes included)."""
    def strip(p: Pod) -> Pod:
        meta = {k: v for k, v in _meta(p).items() if k not in ("resourceVersion", "managedFields")}
        return {**{k: v for k, v in p.items() if k != "status"}, "metadata": meta}

    return strip(a) == strip(b)


def is_running(pod: Pod) -> bool:
    """Some container neither waits nor has terminated (upstream's ``running``)."""
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        state = cs.get("state") or {}
        if not state.get("terminated") and not state.get("waiting"):
            return True
    return False


def is_terminal(pod: Pod) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def merged_status(provider: dict[str, Any], server: dict[str, Any]) -> dict[str, Any]:
    """The provider's status, keeping conditions of types it does not report (the scheduler's, a gate's)."""
    merged = dict(provider)
    mine = {c.get("type") for c in provider.get("conditions") or ()}
    foreign = [c for c in server.get("conditions") or () if c.get("type") not in mine]
    if foreign:
        merged["conditions"] = list(provider.get("conditions") or ()) + foreign
    return merged


def status_patch(pod: Pod, status: dict[str, Any]) -> dict[str, Any]:
    """A JSON merge patch that makes the pod's status exactly ``status`` (fields it lacks are removed)."""
    old = pod.get("status") or {}
    body: dict[str, Any] = {k: None for k in old if k not in status}
    body.update(status)
    return {"metadata": {"uid": _meta(pod).get("uid")}, "status": body}
