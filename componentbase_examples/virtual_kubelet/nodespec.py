"""The Node object a virtual kubelet registers, before and after the provider fills it in (upstream ``NewNode``)."""

from __future__ import annotations

import platform
from typing import Any

import componentbase
from componentbase.client import format_time

__all__ = ["CONDITION_DEFAULTS", "apply_heartbeat", "architecture", "base_node", "complete", "set_ready"]

Node = dict[str, Any]

#: The conditions a node always reports, with the status and words the kubelet uses when all is well.
CONDITION_DEFAULTS: dict[str, tuple[str, str, str]] = {
    "Ready": ("False", "KubeletPending", "kubelet is pending."),
    "MemoryPressure": ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    "NetworkUnavailable": ("False", "RouteCreated", "RouteController created a route"),
}

_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "armv7l": "arm",
         "ppc64le": "ppc64le", "s390x": "s390x"}


def architecture() -> str:
    """This machine's architecture in Go's words (``GOARCH``)."""
    machine = platform.machine().lower()
    return _ARCH.get(machine, machine or "unknown")


def base_node(name: str, *, operating_system: str, provider: str, taint_key: str | None,
              listen_port: int) -> Node:
    """The node before the provider configures it: labels, taint, nodeInfo, the kubelet endpoint."""
    os_name = operating_system.lower()
    stamp = format_time()
    node: Node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {
            "type": "virtual-kubelet",
            "kubernetes.io/role": "agent",
            "kubernetes.io/os": os_name,
            "kubernetes.io/hostname": name,
        }},
        "spec": {"taints": [{"key": taint_key, "value": provider, "effect": "NoSchedule"}] if taint_key else []},
        "status": {
            "phase": "Pending",
            "conditions": [{"type": t, "status": s, "reason": r, "message": m, "lastHeartbeatTime": stamp,
                            "lastTransitionTime": stamp} for t, (s, r, m) in CONDITION_DEFAULTS.items()],
            # Every NodeSystemInfo field, as Go writes its zero values: the API (and the client) require them.
            "nodeInfo": {"operatingSystem": os_name, "architecture": architecture(), "kubeletVersion": "",
                         "kernelVersion": platform.release(), "osImage": "", "containerRuntimeVersion": "",
                         "kubeProxyVersion": "", "machineID": "", "systemUUID": "", "bootID": ""},
            "daemonEndpoints": {"kubeletEndpoint": {"Port": listen_port}},
        },
    }
    return node


def complete(node: Node) -> None:
    """After the provider: every default condition present, and the kubelet version ours."""
    status = node.setdefault("status", {})
    conditions = status.setdefault("conditions", [])
    have = {c.get("type") for c in conditions}
    stamp = format_time()
    for kind, (s, r, m) in CONDITION_DEFAULTS.items():
        if kind not in have:
            conditions.append({"type": kind, "status": s, "reason": r, "message": m, "lastHeartbeatTime": stamp,
                               "lastTransitionTime": stamp})
    info = status.setdefault("nodeInfo", {})
    info["kubeletVersion"] = str(componentbase.util.version.get())
    info.setdefault("architecture", architecture())
    for key in ("kernelVersion", "osImage", "containerRuntimeVersion", "kubeProxyVersion", "machineID",
                "systemUUID", "bootID", "operatingSystem"):
        info.setdefault(key, "")


def set_ready(node: Node, ready: bool, reason: str, message: str) -> None:
    """Set the Ready condition (and the phase), moving ``lastTransitionTime`` only on a change."""
    status = node.setdefault("status", {})
    status["phase"] = "Running" if ready else status.get("phase", "Pending")
    want = "True" if ready else "False"
    stamp = format_time()
    for cond in status.setdefault("conditions", []):
        if cond.get("type") == "Ready":
            if cond.get("status") != want:
                cond["lastTransitionTime"] = stamp
            cond.update(status=want, reason=reason, message=message, lastHeartbeatTime=stamp)
            return
    status["conditions"].append({"type": "Ready", "status": want, "reason": reason, "message": message,
                                 "lastHeartbeatTime": stamp, "lastTransitionTime": stamp})


def apply_heartbeat(node: Node) -> None:
    """Every condition's ``lastHeartbeatTime`` is now, as upstream's ``updateNodeStatusHeartbeat``."""
    stamp = format_time()
    for cond in (node.get("status") or {}).get("conditions") or ():
        cond["lastHeartbeatTime"] = stamp
