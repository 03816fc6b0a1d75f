"""NodeUnschedulable: cordoned nodes (``spec.unschedulable``) take only pods that tolerate the cordon taint."""

from __future__ import annotations

import componentbase
from componentbase_examples.scheduler.framework import Code, Plugin, Status
from componentbase_examples.scheduler.plugins.helpers import tolerates
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

ERR_REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = ("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable(Plugin):
    name = "NodeUnschedulable"
    _REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON, plugin=name)

    @componentbase.hookimpl
    def scheduler_filter(self, pod: PodInfo, nodes: list[NodeInfo], rejected: dict[str, Status]) -> list[NodeInfo]:
        tolerated: list[bool] = []  # whether the pod tolerates the cordon, decided at the first cordoned node

        def admits(n: NodeInfo) -> bool:
            if not tolerated:
                tolerated.append(any(tolerates(t, UNSCHEDULABLE_TAINT) for t in pod.tolerations))
            if not tolerated[0]:
                rejected[n.name] = self._REJECTED
            return tolerated[0]

        # one comprehension, the hot filter loop: a schedulable node costs one attribute read
        return [n for n in nodes if not n.unschedulable or admits(n)]
