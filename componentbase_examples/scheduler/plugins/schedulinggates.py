"""SchedulingGates: a pod with ``spec.schedulingGates`` waits outside the active queue until they are gone.

Its PreEnqueue verdict keeps the pod parked (kube-apiserver gave it the ``PodScheduled=False`` condition
with reason ``SchedulingGated`` when it was created); the update that removes the last gate is the one event
that lets it in (``UpdatePodSchedulingGatesEliminated``).
"""

from __future__ import annotations

from typing import Any

import componentbase
from componentbase_examples.scheduler.events import (
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from componentbase_examples.scheduler.framework import Code, Plugin, Status
from componentbase_examples.scheduler.podinfo import PodInfo

__all__ = ["SchedulingGates", "gates_message"]


def gates_message(gates: list[str]) -> str:
    """kube's ``waiting for scheduling gates: [a b]`` (a Go slice printed with ``%v``)."""
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


class SchedulingGates(Plugin):
    name = "SchedulingGates"

    @componentbase.hookimpl
    def scheduler_pre_enqueue(self, pod: PodInfo) -> Status | None:
        gates = pod.spec.get("schedulingGates")
        if not gates:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, gates_message([str(g.get("name", "")) for g in gates]),
                      plugin=self.name)

    @componentbase.hookimpl
    def scheduler_events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                                     self._gates_eliminated)]

    @staticmethod
    def _gates_eliminated(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
        """Only the pod's own update can open its gates."""
        uid = ((new or {}).get("metadata") or {}).get("uid")
        return QueueingHint.QUEUE if uid is None or uid == (pod.pod.get("metadata") or {}).get("uid") \
            else QueueingHint.QUEUE_SKIP
