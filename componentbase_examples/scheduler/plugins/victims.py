"""The parts of kube's preemption that need no framework: victims' importance, PodDisruptionBudget
violations, and the choice of one node among the candidates (``framework/preemption`` and
``defaultpreemption``), as pure functions over ``PodInfo``s and the budgets' JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from componentbase_examples.scheduler.plugins.helpers import SelectorError, labels_match, selector_requirements
from componentbase_examples.scheduler.podinfo import PodInfo

__all__ = [
    "Candidate",
    "importance_key",
    "pick_one_node",
    "split_by_pdb_violation",
    "start_time",
    "terminating_by_preemption",
]

#: The DisruptionTarget condition's reason when the scheduler preempts a pod.
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
DISRUPTION_TARGET = "DisruptionTarget"
#: kube counts a pod that has not started as started now, after every pod that has.
_NOT_STARTED = "~"
_INT32_SPAN = 2**31  # kube adds MaxInt32+1 to priorities before summing them, so negative ones sum sanely


@attrs.frozen
class Candidate:
    """A node where the preemptor fits once ``victims`` (most important first) are gone."""

    name: str
    victims: tuple[PodInfo, ...]
    num_pdb_violations: int = 0


def start_time(pod: PodInfo) -> str:
    """``status.startTime`` as RFC 3339 text (it sorts as time), ``"~"`` (later than any) when not started."""
    return str((pod.pod.get("status") or {}).get("startTime") or _NOT_STARTED)


def importance_key(pod: PodInfo) -> tuple[int, str]:
    """Sort key of kube's ``MoreImportantPod``: higher priority first, then the one that started earlier."""
    return -pod.priority, start_time(pod)


def terminating_by_preemption(pod: PodInfo) -> bool:
    """Being deleted after the scheduler preempted it (its DisruptionTarget condition says so)."""
    if not (pod.pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for c in (pod.pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == DISRUPTION_TARGET:
            return bool(c.get("status") == "True" and c.get("reason") == PREEMPTION_BY_SCHEDULER)
    return False


def _pdb_matcher(pdb: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The budget's namespace and requirements; ``None`` for a nil, empty or unparsable selector (matches none)."""
    selector = (pdb.get("spec") or {}).get("selector")
    if not selector:
        return None
    try:
        reqs = selector_requirements(selector)
    except SelectorError:
        return None
    if not reqs:
        return None
    return (pdb.get("metadata") or {}).get("namespace") or "default", reqs


def split_by_pdb_violation(pods: Sequence[PodInfo], pdbs: Iterable[Mapping[str, Any]],
                           ) -> tuple[list[PodInfo], list[PodInfo]]:
    """kube's ``filterPodsWithPDBViolation``: the pods whose eviction would exceed a budget's
    ``disruptionsAllowed`` (counting down in the given order), and the others; order kept in both.
    A pod already in a budget's ``disruptedPods`` is not counted against it again."""
    budgets = []
    for pdb in pdbs:
        matcher = _pdb_matcher(pdb)
        if matcher is not None:
            status = pdb.get("status") or {}
            budgets.append((matcher, int(status.get("disruptionsAllowed") or 0), status.get("disruptedPods") or {}))
    allowed = [b[1] for b in budgets]
    violating: list[PodInfo] = []
    others: list[PodInfo] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, ((namespace, reqs), _, disrupted) in enumerate(budgets):
                if namespace != pod.namespace or not labels_match(reqs, pod.labels) or pod.name in disrupted:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else others).append(pod)
    return violating, others


def _earliest_start_of_highest(victims: Sequence[PodInfo]) -> str:
    top = victims[0].priority if victims else 0
    return min((start_time(p) for p in victims if p.priority == top), default=_NOT_STARTED)


def pick_one_node(candidates: Sequence[Candidate]) -> Candidate | None:
    """kube's ``pickOneNodeForPreemption``: fewest PDB violations, then the lowest highest-priority victim,
    the smallest sum of priorities, the fewest victims, the latest start of the highest-priority victims;
    the first of those still tied."""
    if not candidates:
        return None
    scores = (
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(p.priority + _INT32_SPAN for p in c.victims),
        lambda c: -len(c.victims),
    )
    remaining = list(candidates)
    for score in scores:
        best = max(score(c) for c in remaining)
        remaining = [c for c in remaining if score(c) == best]
        if len(remaining) == 1:
            return remaining[0]
    latest = max(_earliest_start_of_highest(c.victims) for c in remaining)
    return next(c for c in remaining if _earliest_start_of_highest(c.victims) == latest)
