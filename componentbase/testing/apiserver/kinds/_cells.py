"""Row cells of kube's table printers (pkg/printers/internalversion) for the built-in kinds with more than
field lookups to them: pod status, node roles, service ports, job completions, ages as kube words them."""

from __future__ import annotations

import calendar
import time
from typing import Any

__all__ = ["age", "binding", "count", "cronjob", "daemonset", "deployment", "dig", "endpoints", "event",
           "format_labels", "hpa", "human_duration", "ingress", "job", "label_selector", "node", "or_none", "pdb",
           "pod", "pv", "pvc", "quota", "replicas", "service", "since", "template_cells"]

Obj = dict[str, Any]


def dig(obj: Any, *path: str) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _rfc3339_seconds(stamp: Any) -> float | None:
    if not isinstance(stamp, str) or len(stamp) < 19:
        return None
    try:
        return calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None


def human_duration(seconds: float) -> str:
    """apimachinery's duration.HumanDuration: "45s", "3m20s", "5h10m", "3d4h", "2y10d"."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes, hours = s // 60, s // 3600
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = hours // 24 % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def since(stamp: Any, now: float, missing: str = "<unknown>") -> str:
    """kube's translateTimestampSince: the age of an RFC 3339 timestamp."""
    at = _rfc3339_seconds(stamp)
    return missing if at is None else human_duration(now - at)


def format_labels(labels: Any) -> str:
    if not isinstance(labels, dict) or not labels:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def label_selector(selector: Any) -> str:
    """metav1.LabelSelectorAsSelector(...).String(): requirements sorted by key, "<none>" for none."""
    if not isinstance(selector, dict):
        return "<none>"
    reqs = [(k, f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin"}
    for expr in selector.get("matchExpressions") or []:
        key, op = expr.get("key", ""), expr.get("operator")
        if op in ops:
            reqs.append((key, f"{key} {ops[op]} ({','.join(sorted(expr.get('values') or []))})"))
        else:
            reqs.append((key, key if op == "Exists" else f"!{key}"))
    return ",".join(text for _, text in sorted(reqs)) or "<none>"


def _names(containers: Any, key: str) -> str:
    return ",".join(str(c.get(key, "")) for c in containers or [])


def template_cells(obj: Obj, *path: str) -> tuple[str, str]:
    containers = dig(obj, *path, "spec", "containers")
    return _names(containers, "name"), _names(containers, "image")


def count(value: Any) -> int:
    return value if isinstance(value, int) else 0


def or_none(value: Any, empty: str = "<none>") -> Any:
    return value if value not in (None, "", []) else empty


def _pod_status(obj: Obj) -> tuple[str, int, int, int]:
    """(status, ready containers, containers, restarts) as printPod reckons them."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    reason = status.get("reason") or status.get("phase") or ""
    statuses = status.get("containerStatuses") or []
    restarts = sum(count(c.get("restartCount")) for c in statuses)
    ready = 0
    initializing = False
    inits = status.get("initContainerStatuses") or []
    for i, c in enumerate(inits):
        state = c.get("state") or {}
        restarts += count(c.get("restartCount"))
        term, wait = state.get("terminated"), state.get("waiting")
        if term and term.get("exitCode") == 0:
            continue
        initializing = True
        if term:
            reason = "Init:" + (term.get("reason") or f"ExitCode:{term.get('exitCode', 0)}")
        elif wait and wait.get("reason") and wait["reason"] != "PodInitializing":
            reason = "Init:" + wait["reason"]
        else:
            reason = f"Init:{i}/{len(spec.get('initContainers') or [])}"
        break
    if not initializing:
        running = False
        for c in reversed(statuses):
            state = c.get("state") or {}
            wait, term = state.get("waiting") or {}, state.get("terminated") or {}
            if wait.get("reason"):
                reason = wait["reason"]
            elif term:
                reason = term.get("reason") or (f"Signal:{term['signal']}" if term.get("signal")
                                                else f"ExitCode:{term.get('exitCode', 0)}")
            elif state.get("running") and c.get("ready"):
                running = True
                ready += 1
        if reason == "Completed" and running:
            ready_cond = any(c.get("type") == "Ready" and c.get("status") == "True"
                             for c in status.get("conditions") or [])
            reason = "Running" if ready_cond else "NotReady"
    if dig(obj, "metadata", "deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return reason, ready, len(spec.get("containers") or []), restarts


def pod(obj: Obj, now: float) -> list[Any]:
    reason, ready, total, restarts = _pod_status(obj)
    gates = dig(obj, "spec", "readinessGates") or []
    conditions = {c.get("type"): c.get("status") for c in dig(obj, "status", "conditions") or []}
    gates_cell = f"{sum(1 for g in gates if conditions.get(g.get('conditionType')) == 'True')}/{len(gates)}"
    return [f"{ready}/{total}", reason, str(restarts), since(dig(obj, "metadata", "creationTimestamp"), now),
            or_none(dig(obj, "status", "podIP")), or_none(dig(obj, "spec", "nodeName")),
            or_none(dig(obj, "status", "nominatedNodeName")), gates_cell if gates else "<none>"]


def node(obj: Obj, now: float) -> list[Any]:
    conds = [c for c in dig(obj, "status", "conditions") or [] if c.get("type") == "Ready"]
    state = ["Unknown"] if not conds else ["Ready" if conds[0].get("status") == "True" else
                                           "NotReady" if conds[0].get("status") == "False" else "Unknown"]
    if dig(obj, "spec", "unschedulable"):
        state.append("SchedulingDisabled")
    labels = dig(obj, "metadata", "labels") or {}
    roles = sorted({k.removeprefix("node-role.kubernetes.io/") for k in labels
                    if k.startswith("node-role.kubernetes.io/") and k != "node-role.kubernetes.io/"}
                   | ({labels["kubernetes.io/role"]} if labels.get("kubernetes.io/role") else set()))
    addresses = dig(obj, "status", "addresses") or []
    info = dig(obj, "status", "nodeInfo") or {}

    def address(kind: str) -> str:
        return next((a.get("address", "") for a in addresses if a.get("type") == kind), "<none>")

    return [",".join(state), ",".join(roles) or "<none>", since(dig(obj, "metadata", "creationTimestamp"), now),
            info.get("kubeletVersion", ""), address("InternalIP"), address("ExternalIP"),
            or_none(info.get("osImage"), "<unknown>"), or_none(info.get("kernelVersion"), "<unknown>"),
            or_none(info.get("containerRuntimeVersion"), "<unknown>")]


def _service_ports(ports: Any) -> str:
    out = []
    for p in ports or []:
        node = f":{p['nodePort']}" if p.get("nodePort") else ""
        out.append(f"{p.get('port')}{node}/{p.get('protocol', 'TCP')}")
    return ",".join(out) or "<none>"


def service(obj: Obj, now: float) -> list[Any]:
    spec = obj.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    external = list(spec.get("externalIPs") or [])
    if kind == "LoadBalancer":
        lb = [i.get("ip") or i.get("hostname") for i in dig(obj, "status", "loadBalancer", "ingress") or []]
        external = [*(x for x in lb if x), *external] or ["<pending>"]
    elif kind == "ExternalName":
        external = [spec.get("externalName", "")]
    return [kind, or_none(spec.get("clusterIP")), ",".join(external) or "<none>", _service_ports(spec.get("ports")),
            since(dig(obj, "metadata", "creationTimestamp"), now), format_labels(spec.get("selector"))]


def job(obj: Obj, now: float) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    succeeded = count(status.get("succeeded"))
    if isinstance(spec.get("completions"), int):
        completions = f"{succeeded}/{spec['completions']}"
    elif count(spec.get("parallelism")) > 1:
        completions = f"{succeeded}/1 of {spec['parallelism']}"
    else:
        completions = f"{succeeded}/1"
    true = {c.get("type") for c in status.get("conditions") or [] if c.get("status") == "True"}
    state = next((s for s in ("Complete", "Failed") if s in true), "")
    if not state:
        state = "Terminating" if dig(obj, "metadata", "deletionTimestamp") else next(
            (s for s in ("Suspended", "FailureTarget", "SuccessCriteriaMet") if s in true), "Running")
    start, end = _rfc3339_seconds(status.get("startTime")), _rfc3339_seconds(status.get("completionTime"))
    duration = "" if start is None else human_duration((end if end is not None else now) - start)
    return [state, completions, duration, since(dig(obj, "metadata", "creationTimestamp"), now),
            *template_cells(obj, "spec", "template"), label_selector(spec.get("selector"))]


def cronjob(obj: Obj, now: float) -> list[Any]:
    spec = obj.get("spec") or {}
    return [spec.get("schedule", ""), or_none(spec.get("timeZone")), bool(spec.get("suspend")),
            len(dig(obj, "status", "active") or []), since(dig(obj, "status", "lastScheduleTime"), now, "<none>"),
            since(dig(obj, "metadata", "creationTimestamp"), now), *template_cells(obj, "spec", "jobTemplate", "spec",
                                                                               "template"),
            label_selector(dig(obj, "spec", "jobTemplate", "spec", "selector"))]


def age(obj: Obj, now: float) -> str:
    return since(dig(obj, "metadata", "creationTimestamp"), now)


def replicas(obj: Obj, now: float) -> list[Any]:
    """ReplicaSets and ReplicationControllers."""
    selector = dig(obj, "spec", "selector")
    shown = format_labels(selector) if obj.get("kind") == "ReplicationController" else label_selector(selector)
    return [count(dig(obj, "spec", "replicas")), count(dig(obj, "status", "replicas")),
            count(dig(obj, "status", "readyReplicas")), age(obj, now), *template_cells(obj, "spec", "template"), shown]


def deployment(obj: Obj, now: float) -> list[Any]:
    status = obj.get("status") or {}
    return [f"{count(status.get('readyReplicas'))}/{count(dig(obj, 'spec', 'replicas'))}",
            count(status.get("updatedReplicas")), count(status.get("availableReplicas")), age(obj, now),
            *template_cells(obj, "spec", "template"), label_selector(dig(obj, "spec", "selector"))]


def daemonset(obj: Obj, now: float) -> list[Any]:
    status = obj.get("status") or {}
    counts = [count(status.get(k)) for k in ("desiredNumberScheduled", "currentNumberScheduled", "numberReady",
                                            "updatedNumberScheduled", "numberAvailable")]
    return [*counts, format_labels(dig(obj, "spec", "template", "spec", "nodeSelector")), age(obj, now),
            *template_cells(obj, "spec", "template"), label_selector(dig(obj, "spec", "selector"))]


def binding(obj: Obj, now: float) -> list[Any]:
    ref = obj.get("roleRef") or {}
    subjects = obj.get("subjects") or []

    def of(kind: str) -> str:
        return ", ".join((f"{s.get('namespace', '')}/{s.get('name')}" if kind == "ServiceAccount" else
                          str(s.get("name"))) for s in subjects if s.get("kind") == kind)

    return [f"{ref.get('kind')}/{ref.get('name')}", age(obj, now), of("User"), of("Group"), of("ServiceAccount")]


def event(obj: Obj, now: float) -> list[Any]:
    involved = obj.get("involvedObject") or {}
    last = obj.get("lastTimestamp") or obj.get("eventTime") or dig(obj, "metadata", "creationTimestamp")
    first = obj.get("firstTimestamp") or obj.get("eventTime") or dig(obj, "metadata", "creationTimestamp")
    source = dig(obj, "source", "component") or obj.get("reportingComponent") or ""
    return [since(last, now), obj.get("type", ""), obj.get("reason", ""),
            f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}", involved.get("fieldPath", ""),
            source, obj.get("message", "").strip(), since(first, now), count(obj.get("count")) or 1,
            dig(obj, "metadata", "name")]


def _modes(modes: Any) -> str:
    short = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
    return ",".join(short.get(m, m) for m in modes or [])


def pv(obj: Obj, now: float) -> list[Any]:
    spec = obj.get("spec") or {}
    claim = spec.get("claimRef") or {}
    return [dig(spec, "capacity", "storage") or "", _modes(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy", ""), dig(obj, "status", "phase") or "",
            f"{claim['namespace']}/{claim['name']}" if claim.get("name") else "", spec.get("storageClassName", ""),
            or_none(spec.get("volumeAttributesClassName"), "<unset>"), dig(obj, "status", "reason") or "",
            age(obj, now), spec.get("volumeMode") or "Filesystem"]


def pvc(obj: Obj, now: float) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    bound = bool(spec.get("volumeName"))
    return [status.get("phase", ""), spec.get("volumeName", ""),
            dig(status, "capacity", "storage") or "" if bound else "", _modes(status.get("accessModes")) if bound
            else "", spec.get("storageClassName", ""), or_none(spec.get("volumeAttributesClassName"), "<unset>"),
            age(obj, now), spec.get("volumeMode") or "Filesystem"]


def pdb(obj: Obj, now: float) -> list[Any]:
    spec = obj.get("spec") or {}
    return [str(or_none(spec.get("minAvailable"), "N/A")), str(or_none(spec.get("maxUnavailable"), "N/A")),
            count(dig(obj, "status", "disruptionsAllowed")), age(obj, now)]


def quota(obj: Obj, now: float) -> list[Any]:
    hard, used = dig(obj, "status", "hard") or dig(obj, "spec", "hard") or {}, dig(obj, "status", "used") or {}
    request = [f"{k}: {used.get(k, '0')}/{v}" for k, v in sorted(hard.items()) if not k.startswith("limits.")]
    limit = [f"{k}: {used.get(k, '0')}/{v}" for k, v in sorted(hard.items()) if k.startswith("limits.")]
    return [age(obj, now), ", ".join(request), ", ".join(limit)]


def hpa(obj: Obj, now: float) -> list[Any]:
    spec = obj.get("spec") or {}
    ref = spec.get("scaleTargetRef") or {}
    targets = []
    for metric in spec.get("metrics") or []:
        target = dig(metric, "resource", "target") or {}
        if metric.get("type") == "Resource" and "averageUtilization" in target:
            targets.append(f"{dig(metric, 'resource', 'name')}: <unknown>/{target['averageUtilization']}%")
        else:
            targets.append("<unknown>")
    return [f"{ref.get('kind')}/{ref.get('name')}", ", ".join(targets) or "<none>", count(spec.get("minReplicas"))
            or 1, count(spec.get("maxReplicas")), count(dig(obj, "status", "currentReplicas")), age(obj, now)]


def ingress(obj: Obj, now: float) -> list[Any]:
    spec = obj.get("spec") or {}
    hosts = [r.get("host") or "*" for r in spec.get("rules") or []]
    lb = [i.get("ip") or i.get("hostname") for i in dig(obj, "status", "loadBalancer", "ingress") or []]
    return [or_none(spec.get("ingressClassName")), ",".join(hosts) or "*", ",".join(x for x in lb if x),
            "80, 443" if spec.get("tls") else "80", age(obj, now)]


def endpoints(obj: Obj, now: float) -> list[Any]:
    found = [f"{a.get('ip')}:{p.get('port')}" for s in obj.get("subsets") or [] for p in s.get("ports") or []
             for a in s.get("addresses") or []]
    shown = ",".join(found[:3]) + (f" + {len(found) - 3} more..." if len(found) > 3 else "")
    return [shown or "<none>", age(obj, now)]
