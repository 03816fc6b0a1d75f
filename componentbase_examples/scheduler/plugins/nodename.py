"""NodeName: a pod that names its node (``spec.nodeName``) fits only there."""

from __future__ import annotations

import componentbase
from componentbase_examples.scheduler.framework import SKIP, Code, Plugin, Status
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(Plugin):
    name = "NodeName"
    _REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON, plugin=name)

    @componentbase.hookimpl
    def scheduler_pre_filter(self, pod: PodInfo) -> Status | None:
        return None if pod.node_name else SKIP

    @componentbase.hookimpl
    def scheduler_filter(self, pod: PodInfo, nodes: list[NodeInfo], rejected: dict[str, Status]) -> list[NodeInfo]:
        wanted = pod.node_name
        for n in nodes:
            if n.name != wanted:
                rejected[n.name] = self._REJECTED
        return [n for n in nodes if n.name == wanted]
