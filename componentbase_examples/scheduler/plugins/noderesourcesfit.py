"""NodeResourcesFit: the pod's requests must fit the node's free allocatable; scoring by ``scoringStrategy``.

Filter reasons are kube's: ``Too many pods``, ``Insufficient cpu``, ``Insufficient memory``,
``Insufficient ephemeral-storage``, ``Insufficient <extended resource>``, every one that applies.
Scores follow ``LeastAllocated`` (default), ``MostAllocated`` or ``RequestedToCapacityRatio`` over the
strategy's weighted resources, with the non-zero CPU/memory requests kube scores with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import componentbase
from componentbase_examples.scheduler.framework import MAX_NODE_SCORE, Code, CycleState, Plugin, Status
from componentbase_examples.scheduler.plugins.args import (
    LEAST_ALLOCATED,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_UTILIZATION,
    MOST_ALLOCATED,
    RATIO,
    NodeResourcesFitArgs,
    UtilizationShapePoint,
)
from componentbase_examples.scheduler.plugins.resourcespec import (
    allocatable_requested,
    default_resources,
    pod_request,
)
from componentbase_examples.scheduler.plugins.scorememo import memo_prefix, remembered_scores
from componentbase_examples.scheduler.podinfo import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PodInfo,
    is_extended_resource_name,
)
from componentbase_examples.scheduler.snapshot import NodeInfo


def _go_div(a: int, b: int) -> int:
    """Go's integer division, which truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def least_score(requested: int, capacity: int) -> int:
    return 0 if capacity == 0 or requested > capacity else (capacity - requested) * MAX_NODE_SCORE // capacity


def most_score(requested: int, capacity: int) -> int:
    return 0 if capacity == 0 else min(requested, capacity) * MAX_NODE_SCORE // capacity


def broken_linear(shape: list[tuple[int, int]]) -> Callable[[int], int]:
    def f(p: int) -> int:
        for i, (u, s) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return s
                pu, ps = shape[i - 1]
                return ps + _go_div((s - ps) * (p - pu), u - pu)
        return shape[-1][1]

    return f


Scorer = Callable[[list[int], list[int]], int]


def _weighted(per_resource: Callable[[int, int], int], weights: list[int]) -> Scorer:
    def score(requested: list[int], allocatable: list[int]) -> int:
        total = weight_sum = 0
        for r, a, w in zip(requested, allocatable, weights, strict=True):
            if a:
                total += per_resource(r, a) * w
                weight_sum += w
        return total // weight_sum if weight_sum else 0

    return score


def _ratio(shape: list[UtilizationShapePoint], weights: list[int]) -> Scorer:
    raw = broken_linear([(p.utilization, p.score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for p in shape])

    def per_resource(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def score(requested: list[int], allocatable: list[int]) -> int:
        total = weight_sum = 0
        for r, a, w in zip(requested, allocatable, weights, strict=True):
            if a:
                s = per_resource(r, a)
                if s > 0:
                    total += s * w
                    weight_sum += w
        return int(total / weight_sum + 0.5) if weight_sum else 0

    return score


class NodeResourcesFit(Plugin):
    name = "NodeResourcesFit"
    Args = NodeResourcesFitArgs

    def __init__(self, args: NodeResourcesFitArgs | None, handle: Any) -> None:
        super().__init__(args, handle)
        args = args or NodeResourcesFitArgs()
        self.ignored = frozenset(args.ignored_resources)
        self.ignored_groups = frozenset(args.ignored_resource_groups)
        strategy = args.scoring_strategy
        self.resources = [(r.name, r.weight) for r in strategy.resources or default_resources()]
        weights: list[int] = [w for _, w in self.resources]
        self.least_cpu_memory = strategy.type == LEAST_ALLOCATED and [n for n, _ in self.resources] == [CPU, MEMORY]
        if strategy.type == RATIO:
            shape = strategy.requested_to_capacity_ratio.shape if strategy.requested_to_capacity_ratio else []
            self.scorer = _ratio(shape, weights)
        else:
            self.scorer = _weighted(most_score if strategy.type == MOST_ALLOCATED else least_score, weights)
        self._statuses: dict[tuple[tuple[str, ...], bool], Status] = {}
        self._memo_prefix = memo_prefix(self)

    def _checked_scalars(self, pod: PodInfo) -> list[tuple[str, int]]:
        """The pod's scalar requests Filter checks: ``ignoredResources``/``ignoredResourceGroups`` apply only to
        extended resources; ``kubernetes.io/`` names, hugepages and attachable volumes are always checked."""
        return [(name, amount) for name, amount in pod.scalar.items()
                if amount and not (is_extended_resource_name(name) and (
                    name in self.ignored or name.split("/")[0] in self.ignored_groups))]

    def _status(self, reasons: tuple[str, ...], unresolvable: bool) -> Status:
        status = self._statuses.get((reasons, unresolvable))
        if status is None:
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
            status = self._statuses[(reasons, unresolvable)] = Status(code, *reasons, plugin=self.name)
        return status

    @componentbase.hookimpl
    def scheduler_filter(self, pod: PodInfo, nodes: list[NodeInfo], rejected: dict[str, Status]) -> list[NodeInfo]:
        cpu, mem, eph = pod.cpu, pod.memory, pod.ephemeral_storage
        scalars = self._checked_scalars(pod)
        if cpu and mem and not eph and not scalars:  # the common pod, as one comprehension: the hot filter loop
            passed = [n for n in nodes if n.free_pods > 0 and cpu <= n.free_cpu and mem <= n.free_memory]
        else:
            passed = [n for n in nodes
                      if not (len(n.pods) >= n.alloc_pods
                              or (cpu and cpu > n.alloc_cpu - n.req_cpu)
                              or (mem and mem > n.alloc_memory - n.req_memory)
                              or (eph and eph > n.alloc_ephemeral_storage - n.req_ephemeral_storage)
                              or (scalars and any(q > n.alloc_scalar.get(r, 0) - n.req_scalar.get(r, 0)
                                                  for r, q in scalars)))]
        if len(passed) < len(nodes):
            fit = set(passed)
            for n in nodes:
                if n not in fit:
                    rejected[n.name] = self._status(*self.insufficient(pod, n, scalars))
        return passed

    @staticmethod
    def insufficient(pod: PodInfo, n: NodeInfo, scalars: list[tuple[str, int]]) -> tuple[tuple[str, ...], bool]:
        """Every reason the pod does not fit ``n``, in kube's order, and whether one of them is unresolvable: the
        pod asks for more than the node's allocatable, so even an empty node would not do and preemption cannot
        help (kube's UnschedulableAndUnresolvable since 1.34, kubernetes#131345)."""
        reasons = []
        unresolvable = False
        if len(n.pods) >= n.alloc_pods:
            reasons.append("Too many pods")
        for name, want, alloc, used in ((CPU, pod.cpu, n.alloc_cpu, n.req_cpu),
                                        (MEMORY, pod.memory, n.alloc_memory, n.req_memory),
                                        (EPHEMERAL_STORAGE, pod.ephemeral_storage, n.alloc_ephemeral_storage,
                                         n.req_ephemeral_storage),
                                        *((r, q, n.alloc_scalar.get(r, 0), n.req_scalar.get(r, 0))
                                          for r, q in scalars)):
            if want and want > alloc - used:
                reasons.append(f"Insufficient {name}")
                unresolvable = unresolvable or want > alloc
        return tuple(reasons), unresolvable

    @componentbase.hookimpl
    def scheduler_pre_score(self, state: CycleState, pod: PodInfo) -> Status | None:
        state[self.name] = [pod_request(pod, name, non_zero=True) for name, _ in self.resources]
        return None

    @componentbase.hookimpl
    def scheduler_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        if self.least_cpu_memory:
            return self._least_cpu_memory(pod, nodes)
        amounts: list[int] | None = state.get(self.name)
        if amounts is None:  # PreScore disabled: computed here, as kube's Score does
            amounts = [pod_request(pod, name, non_zero=True) for name, _ in self.resources]
        names = [name for name, _ in self.resources]
        scores = []
        for n in nodes:
            pairs = [allocatable_requested(n, name, amount, True) for name, amount in zip(names, amounts, strict=True)]
            scores.append(self.scorer([r for _, r in pairs], [a for a, _ in pairs]))
        return scores

    def _least_cpu_memory(self, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """The default strategy, inlined and remembered per node state: the scheduler's hottest loop."""
        (_, wc), (_, wm) = self.resources
        ws = wc + wm
        pc, pm = pod.nz_cpu, pod.nz_memory
        scorer = self.scorer

        def score(n: NodeInfo) -> int:
            ac, am = n.alloc_cpu, n.alloc_memory
            rc, rm = n.nz_cpu + pc, n.nz_memory + pm
            if not (ac and am):
                return scorer([rc, rm], [ac, am])
            sc = (ac - rc) * 100 // ac if rc <= ac else 0
            sm = (am - rm) * 100 // am if rm <= am else 0
            return (sc * wc + sm * wm) // ws

        return remembered_scores(nodes, f"{self._memo_prefix}{pc}:{pm}", score)
