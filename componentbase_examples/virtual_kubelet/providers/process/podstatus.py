"""A process pod's status from its containers: phase, conditions and containerStatuses, as the kubelet sums them."""

from __future__ import annotations

from typing import Any

from componentbase.client import format_time
from componentbase_examples.virtual_kubelet.providers.process.container import ContainerProcess

__all__ = ["Conditions", "phase_of"]


def phase_of(containers: list[ContainerProcess]) -> str:
    """Succeeded or Failed once every container is done for good; Running once one started; else Pending."""
    if containers and all(c.finished for c in containers):
        codes = [(c.state.get("terminated") or {}).get("exitCode", 1) for c in containers]
        return "Succeeded" if all(code == 0 for code in codes) else "Failed"
    if any(c.running or c.restart_count or c.finished for c in containers):
        return "Running"
    return "Pending"


class Conditions:
    """Pod conditions whose ``lastTransitionTime`` moves only when their status does."""

    TYPES = ("Initialized", "Ready", "ContainersReady", "PodScheduled")

    def __init__(self) -> None:
        self._seen: dict[str, tuple[str, str]] = {}

    def current(self, ready: bool) -> list[dict[str, Any]]:
        out = []
        for kind in self.TYPES:
            status = "True" if kind in ("Initialized", "PodScheduled") or ready else "False"
            old = self._seen.get(kind)
            if old is None or old[0] != status:
                old = (status, format_time())
                self._seen[kind] = old
            cond: dict[str, Any] = {"type": kind, "status": status, "lastTransitionTime": old[1]}
            if status == "False":
                cond["reason"] = "ContainersNotReady"
            out.append(cond)
        return out
