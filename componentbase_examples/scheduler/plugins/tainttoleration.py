"""TaintToleration: NoSchedule/NoExecute taints a pod does not tolerate rule a node out; PreferNoSchedule
taints it does not tolerate lower the node's score (normalized, reversed: fewer is better).

Nodes share taint sets (a pool's nodes carry the same ones), so a cycle decides each distinct set once.
The reason names the first untolerated taint as kube-scheduler up to 1.33 prints it
(``node(s) had untolerated taint {key: value}``); 1.34 and later print ``node(s) had untolerated taint(s)``.
"""

from __future__ import annotations

import componentbase
from componentbase_examples.scheduler.framework import Code, CycleState, Plugin, Status
from componentbase_examples.scheduler.plugins.helpers import default_normalize, find_untolerated, tolerates
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo, Taint


def reason(taint: Taint) -> str:
    return f"node(s) had untolerated taint {{{taint[0]}: {taint[1]}}}"


class TaintToleration(Plugin):
    name = "TaintToleration"

    @componentbase.hookimpl
    def scheduler_filter(self, pod: PodInfo, nodes: list[NodeInfo], rejected: dict[str, Status]) -> list[NodeInfo]:
        verdicts: dict[tuple[Taint, ...], Status | None] = {}
        passed: list[NodeInfo] = []
        for n in nodes:
            taints = n.no_schedule_taints
            if not taints:
                passed.append(n)
                continue
            if taints in verdicts:
                verdict = verdicts[taints]
            else:
                bad = find_untolerated(taints, pod.tolerations)
                verdict = None if bad is None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason(bad),
                                                          plugin=self.name)
                verdicts[taints] = verdict
            if verdict is None:
                passed.append(n)
            else:
                rejected[n.name] = verdict
        return passed

    @componentbase.hookimpl
    def scheduler_pre_score(self, state: CycleState, pod: PodInfo) -> Status | None:
        state[self.name] = [t for t in pod.tolerations if (t.get("effect") or "PreferNoSchedule") == "PreferNoSchedule"]
        return None

    @componentbase.hookimpl
    def scheduler_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        tolerations = state[self.name]
        counts: dict[tuple[Taint, ...], int] = {}

        def count(taints: tuple[Taint, ...]) -> int:
            if taints not in counts:
                counts[taints] = sum(1 for taint in taints if not any(tolerates(t, taint) for t in tolerations))
            return counts[taints]

        return [count(taints) if (taints := n.prefer_no_schedule_taints) else 0 for n in nodes]

    @componentbase.hookimpl
    def scheduler_normalize_score(self, scores: list[int]) -> None:
        default_normalize(scores, reverse=True)
