"""What kube-apiserver's admission plugins and pod strategy fill into a new pod, after defaulting.

The ServiceAccount plugin's ``serviceAccountName: default``, DefaultTolerationSeconds' five-minute
tolerations of not-ready and unreachable nodes, Priority's ``priority``/``preemptionPolicy``, the pod
defaulter's requests copied from limits, and what PrepareForCreate fills in: the ``qosClass``, and a gated
pod's ``PodScheduled=False`` condition (reason ``SchedulingGated``). Controllers and schedulers read these
back, so a pod stored here looks as it would on a cluster.
"""

from __future__ import annotations

from typing import Any

from ..wire._wire import now_rfc3339

__all__ = ["admit_pod"]

Obj = dict[str, Any]
_SYSTEM_PRIORITIES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
_TOLERATED = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
_DEFAULT_TOLERATION_SECONDS = 300


def _containers(spec: Obj) -> list[Obj]:
    return [c for c in spec.get("containers") or () if isinstance(c, dict)]


def _requests_from_limits(c: Obj) -> None:
    """SetDefaults_Pod: a limit without a request requests the limit."""
    resources = c.get("resources")
    if isinstance(resources, dict) and isinstance(resources.get("limits"), dict) and resources["limits"]:
        requests = dict(resources.get("requests") or {})
        for name, value in resources["limits"].items():
            requests.setdefault(name, value)
        c["resources"] = dict(resources, requests=requests)


def _tolerations(spec: Obj) -> None:
    """DefaultTolerationSeconds: tolerate a not-ready or unreachable node for 300 s unless told otherwise."""
    tolerations = [t for t in spec.get("tolerations") or () if isinstance(t, dict)]
    for key in _TOLERATED:
        if any((t.get("key") == key and t.get("effect") in (None, "", "NoExecute")) or (
                not t.get("key") and t.get("operator") == "Exists") for t in tolerations):
            continue
        tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                            "tolerationSeconds": _DEFAULT_TOLERATION_SECONDS})
    spec["tolerations"] = tolerations


def qos_class(spec: Obj) -> str:
    """kube's GetPodQOS over cpu and memory: Guaranteed, Burstable or BestEffort."""
    containers = _containers(spec)
    compute = ("cpu", "memory")
    requests = [{k: v for k, v in ((c.get("resources") or {}).get("requests") or {}).items() if k in compute}
                for c in containers]
    limits = [{k: v for k, v in ((c.get("resources") or {}).get("limits") or {}).items() if k in compute}
              for c in containers]
    if not any(requests) and not any(limits):
        return "BestEffort"
    if all(set(lim) == set(compute) and req == lim for req, lim in zip(requests, limits, strict=True)):
        return "Guaranteed"
    return "Burstable"


def admit_pod(pod: Obj) -> None:
    """Fill a new, defaulted pod (whose spec and status are already private copies) in place."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    name = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    spec["serviceAccountName"] = spec["serviceAccount"] = name
    for c in _containers(spec):
        _requests_from_limits(c)
    _tolerations(spec)
    if "priority" not in spec:
        spec["priority"] = _SYSTEM_PRIORITIES.get(str(spec.get("priorityClassName") or ""), 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    status = pod.get("status")
    if isinstance(status, dict):
        status["qosClass"] = qos_class(spec)
        if spec.get("schedulingGates") and not any(
                isinstance(c, dict) and c.get("type") == "PodScheduled" for c in status.get("conditions") or ()):
            status["conditions"] = [*(status.get("conditions") or ()), {
                "type": "PodScheduled", "status": "False", "lastProbeTime": None,
                "lastTransitionTime": now_rfc3339(), "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates"}]
