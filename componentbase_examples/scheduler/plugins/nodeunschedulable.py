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
        if all(not n.unschedulable for n in nodes):
            return nodes
        if any(tolerates(t, UNSCHEDULABLE_TAINT) for t in pod.tolerations):
            return nodes
        for n in nodes:
            if n.unschedulable:
                rejected[n.name] = self._REJECTED
        return [n for n in nodes if not n.unschedulable]


