"""NodeResourcesBalancedAllocation: prefer nodes whose balance of resource use the pod improves.

A node's balance is ``(1 - std) * 100`` of the requested fractions of the configured resources (actual
requests, not the non-zero defaults). As kube-scheduler since 1.36 (kubernetes#135573), the score is the
change the pod makes to it, ``50 + (50 + after - before) // 2``: 75 for no change, towards 100 for a node
the pod balances, towards 50 for one it unbalances; scoring only the balance after placement favoured a
node already balanced over one the pod would even out. Best-effort pods skip it, as kube since 1.32
(kubernetes#129138).
"""

from __future__ import annotations

import math
from typing import Any

import componentbase
from componentbase_examples.scheduler.framework import MAX_NODE_SCORE, SKIP, CycleState, Plugin, Status
from componentbase_examples.scheduler.plugins.args import NodeResourcesBalancedAllocationArgs
from componentbase_examples.scheduler.plugins.resourcespec import (
    allocatable_requested,
    pod_request,
)
from componentbase_examples.scheduler.plugins.scorememo import memo_prefix, remembered_scores
from componentbase_examples.scheduler.podinfo import CPU, MEMORY, PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo


def balanced_score(fractions: list[float]) -> int:
    if len(fractions) == 2:
        std = abs(fractions[0] - fractions[1]) / 2
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    else:
        std = 0.0
    return int((1 - std) * MAX_NODE_SCORE)


def balance_change_score(after: int, before: int) -> int:
    """kube's ``MaxNodeScore/2 + (MaxNodeScore/2 + after - before)/2``: both balances lie in [50, 100], so
    the change in [-50, 50] maps back into [50, 100] (the range the score had when it was the balance)."""
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + after - before) // 2


class NodeResourcesBalancedAllocation(Plugin):
    name = "NodeResourcesBalancedAllocation"
    Args = NodeResourcesBalancedAllocationArgs

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None, handle: Any) -> None:
        super().__init__(args, handle)
        self.resources = [r.name for r in (args or NodeResourcesBalancedAllocationArgs()).resources]
        self.cpu_memory = self.resources == [CPU, MEMORY]
        self._memo_prefix = memo_prefix(self)

    def _amounts(self, pod: PodInfo) -> list[int]:
        return [pod_request(pod, name, non_zero=False) for name in self.resources]

    @componentbase.hookimpl
    def scheduler_pre_score(self, state: CycleState, pod: PodInfo) -> Status | None:
        amounts = self._amounts(pod)
        if not any(amounts):
            return SKIP
        state[self.name] = amounts
        return None

    @componentbase.hookimpl
    def scheduler_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        amounts: list[int] | None = state.get(self.name)
        if amounts is None:  # PreScore disabled: computed here, and a best-effort pod scores 0, as kube's Score
            amounts = self._amounts(pod)
            if not any(amounts):
                return [0] * len(nodes)
        if self.cpu_memory:
            return self._cpu_memory(pod, nodes)
        scores = []
        for n in nodes:
            after, before = [], []
            for name, amount in zip(self.resources, amounts, strict=True):
                alloc, req = allocatable_requested(n, name, amount, False)
                if alloc:
                    after.append(min(req / alloc, 1.0))
                    before.append(min((req - amount) / alloc, 1.0))
            scores.append(balance_change_score(balanced_score(after), balanced_score(before)))
        return scores

    def _cpu_memory(self, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """The default resources, inlined and remembered per node state (a hot score loop)."""
        pc, pm = pod.cpu, pod.memory

        def score(n: NodeInfo) -> int:
            ac, am, rc, rm = n.alloc_cpu, n.alloc_memory, n.req_cpu, n.req_memory
            if not (ac and am):
                after = balanced_score([min(r / a, 1.0) for a, r in ((ac, rc + pc), (am, rm + pm)) if a])
                before = balanced_score([min(r / a, 1.0) for a, r in ((ac, rc), (am, rm)) if a])
                return balance_change_score(after, before)
            after = int((1 - abs(min((rc + pc) / ac, 1.0) - min((rm + pm) / am, 1.0)) / 2) * MAX_NODE_SCORE)
            before = int((1 - abs(min(rc / ac, 1.0) - min(rm / am, 1.0)) / 2) * MAX_NODE_SCORE)
            return balance_change_score(after, before)

        return remembered_scores(nodes, f"{self._memo_prefix}{pc}:{pm}", score)
