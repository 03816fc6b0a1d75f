"""A process pod's phase and conditions from its containers, as the kubelet sums them (``status/generate.go``)."""

from __future__ import annotations

from typing import Any

from componentbase.client import format_time
from componentbase_examples.virtual_kubelet.providers.process.container import ContainerProcess

__all__ = ["Conditions", "phase_of", "pod_status"]


def phase_of(init: list[ContainerProcess], containers: list[ContainerProcess]) -> str:
    """Pending until every init container succeeded (Failed if one failed for good); then Succeeded or Failed
    once every container is done for good, Running once one started."""
    if any(c.finished and not c.succeeded for c in init):
        return "Failed"
    if not all(c.succeeded for c in init):
        return "Pending"
    if containers and all(c.finished for c in containers):
        return "Succeeded" if all(c.succeeded for c in containers) else "Failed"
    if any(c.running or c.restart_count or c.finished for c in containers):
        return "Running"
    return "Pending"


def _names(names: list[str]) -> str:
    return "[" + " ".join(names) + "]"  # Go's %s of a []string


class Conditions:
    """Pod conditions whose ``lastTransitionTime`` moves only when their status does."""

    TYPES = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")

    def __init__(self) -> None:
        self._seen: dict[str, tuple[str, str]] = {}

    def current(self, *, phase: str, incomplete: list[str], unready: list[str]) -> list[dict[str, Any]]:
        """``incomplete``: init containers not yet succeeded; ``unready``: containers not ready."""
        if phase == "Succeeded":
            initialized: tuple[bool, str, str] = (True, "PodCompleted", "")
            ready: tuple[bool, str, str] = (False, "PodCompleted", "")
        else:
            initialized = (True, "", "")
            if incomplete:
                message = f"containers with incomplete status: {_names(incomplete)}"
                initialized = (False, "ContainersNotInitialized", message)
            ready = (True, "", "")
            if unready:
                ready = (False, "ContainersNotReady", f"containers with unready status: {_names(unready)}")
        # The "sandbox" (the pod's process group) exists from the start until the pod is done.
        wanted = {"PodReadyToStartContainers": (phase not in ("Succeeded", "Failed"), "", ""),
                  "Initialized": initialized, "Ready": ready, "ContainersReady": ready,
                  "PodScheduled": (True, "", "")}
        out = []
        for kind in self.TYPES:
            ok, reason, message = wanted[kind]
            status = "True" if ok else "False"
            old = self._seen.get(kind)
            if old is None or old[0] != status:
                old = (status, format_time())
                self._seen[kind] = old
            cond: dict[str, Any] = {"type": kind, "status": status, "lastTransitionTime": old[1]}
            if reason:
                cond["reason"] = reason
            if message:
                cond["message"] = message
            out.append(cond)
        return out


def _statuses(procs: list[ContainerProcess], images: dict[str, str], waiting: str | None,
              init: bool) -> list[dict[str, Any]]:
    out = []
    for proc in procs:
        status = proc.status(images.get(proc.name, ""))
        if waiting and not proc.launched:
            status["state"] = {"waiting": {"reason": waiting}}
        if init:
            status["ready"] = proc.succeeded  # an init container is "ready" once it completed
        out.append(status)
    return out


def pod_status(*, host_ip: str, start_time: str, conditions: Conditions, init: list[ContainerProcess],
               containers: list[ContainerProcess], images: dict[str, str],
               failure: tuple[str, str] | None, spec: dict[str, Any]) -> dict[str, Any]:
    """The pod's whole status as the kubelet writes it: phase, conditions, (init) container statuses, IPs."""
    status: dict[str, Any] = {"hostIP": host_ip, "hostIPs": [{"ip": host_ip}], "podIP": host_ip,
                              "podIPs": [{"ip": host_ip}], "startTime": start_time}
    if failure is not None:  # nothing could run: every container waits with the reason
        reason, message = failure
        names = [str(c.get("name")) for c in spec.get("containers") or ()]
        status.update(phase="Failed", reason=reason, message=message,
                      conditions=conditions.current(phase="Failed", incomplete=[], unready=names))
        status["containerStatuses"] = [
            {"name": c.get("name"), "image": c.get("image", ""), "imageID": "", "ready": False,
             "started": False, "restartCount": 0, "state": {"waiting": {"reason": reason, "message": message}}}
            for c in spec.get("containers") or ()]
        return status
    initializing = not all(c.succeeded for c in init)
    phase = phase_of(init, containers)
    statuses = _statuses(containers, images, "PodInitializing" if initializing else None, init=False)
    status.update(phase=phase, containerStatuses=statuses, conditions=conditions.current(
        phase=phase, incomplete=[c.name for c in init if not c.succeeded],
        unready=[s["name"] for s in statuses if not s["ready"]]))
    if init:
        status["initContainerStatuses"] = _statuses(init, images, "PodInitializing", init=True)
    return status
