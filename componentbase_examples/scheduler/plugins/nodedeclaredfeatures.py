"""NodeDeclaredFeatures: a pod that needs a feature of the node runs only where the node declares it.

As kube-scheduler 1.37's plugin (KEP-5328): PreFilter infers the features the pod needs for scheduling from
its spec with the registered features; none (the usual case) skips the plugin. Filter keeps the nodes whose
``status.declaredFeatures`` hold every one, with upstream's message for the others. The registered features
are upstream's: ``GuaranteedQoSPodCPUResize`` (a guaranteed pod's in-place CPU resize), which is needed by a
resize, not by scheduling, so it never narrows where a new pod goes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import componentbase
from componentbase_examples.scheduler.framework import SKIP, Code, CycleState, Plugin, Status
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

#: Each registered feature's ``InferForScheduling``: does a new pod with this spec need the feature?
FEATURES: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "GuaranteedQoSPodCPUResize": lambda spec: False,  # a resize's need, not a placement's
}


def required_features(spec: Mapping[str, Any]) -> list[str]:
    return sorted(name for name, infer in FEATURES.items() if infer(spec))


class NodeDeclaredFeatures(Plugin):
    name = "NodeDeclaredFeatures"

    @componentbase.hookimpl
    def scheduler_pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        needed = required_features(pod.spec)
        if not needed:
            return SKIP
        state[self.name] = needed
        return None

    @componentbase.hookimpl
    def scheduler_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
                         rejected: dict[str, Status]) -> list[NodeInfo]:
        needed: list[str] = state[self.name]
        passed = []
        for n in nodes:
            declared = set(((n.node or {}).get("status") or {}).get("declaredFeatures") or ())
            missing = [f for f in needed if f not in declared]
            if missing:
                rejected[n.name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node declared features check failed"
                                          f" - unsatisfied requirements: {', '.join(missing)}", plugin=self.name)
            else:
                passed.append(n)
        return passed
