"""PodTopologySpread: spread a pod's replicas over topology domains (zones, hosts...) by its
``topologySpreadConstraints``, as kube-scheduler's plugin of that name.

A constraint counts the pods of the incoming pod's namespace that its ``labelSelector`` (plus the pod's own
values of ``matchLabelKeys``) selects, terminating pods excepted, per domain: the nodes sharing a value of
``topologyKey``. Only nodes that carry every topology key of the pod's constraints of that kind count, and
only if they pass the constraint's inclusion policies (``nodeAffinityPolicy: Honor``, the default: the
pod's ``nodeSelector`` and required node affinity; ``nodeTaintsPolicy: Honor``: the pod tolerates the
node's NoSchedule/NoExecute taints). Assumed pods are on their nodes already, so a burst of replicas spreads.

``DoNotSchedule`` constraints filter: a node without the key is unresolvable; otherwise a node fails when
its domain's count, plus one if the pod matches its own selector, exceeds the smallest count among the
eligible domains (0 while there are fewer than ``minDomains``) by more than ``maxSkew``.
``ScheduleAnyway`` constraints score, as upstream: each constraint adds ``count * log(domains + 2) +
maxSkew - 1`` for the node's domain (per node for ``kubernetes.io/hostname``, counted only among the nodes
being scored), then fewer is better; nodes missing a key score 0.

Notes and gaps:

* Default constraints (``defaultingType: System``, or ``List`` with ``defaultConstraints``) apply to a pod
  without constraints of its own, with the selector of the Services and controllers selecting it
  (``spreaddefaults``), read from the scheduler's caches; ``--dry-run`` has no such caches, so there they
  never apply. Under System defaulting, scoring does not require a node to have every key.
* No PreFilter AddPod/RemovePod extensions: there is no preemption to use them.
* A ``labelSelector: {}`` counts every pod of the namespace, the behaviour kubernetes#141340 restored;
  releases before it counted none.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

import componentbase
from componentbase_examples.scheduler.framework import MAX_NODE_SCORE, SKIP, Code, CycleState, Plugin, Status
from componentbase_examples.scheduler.plugins.helpers import (
    RequiredNodeAffinity,
    SelectorError,
    find_untolerated,
    labels_match,
    selector_requirements,
)
from componentbase_examples.scheduler.plugins.podtopologyspreadargs import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULTING,
    PodTopologySpreadArgs,
)
from componentbase_examples.scheduler.plugins.spreaddefaults import SYSTEM_DEFAULT_CONSTRAINTS, default_selector
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo, Taint

__all__ = ["ERR_REASON_CONSTRAINTS_NOT_MATCH", "ERR_REASON_NODE_LABEL_NOT_MATCH", "PodTopologySpread",
           "PodTopologySpreadArgs"]

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

HOSTNAME = "kubernetes.io/hostname"
HONOR = "Honor"


# label selectors

#: A compiled label selector: whether a pod's labels are selected.
LabelMatcher = Callable[[Mapping[str, str]], bool]
def _nothing(labels: Mapping[str, str]) -> bool:
    return False


def _everything(labels: Mapping[str, str]) -> bool:
    return True


def label_selector(selector: Mapping[str, Any] | None, extra: Mapping[str, str]) -> LabelMatcher:
    """``LabelSelectorAsSelector`` with ``extra`` labels ANDed in: no selector selects nothing (and stays so,
    whatever ``matchLabelKeys`` add), an empty one everything."""
    if selector is None:
        return _nothing
    reqs = tuple((k, "In", frozenset((v,))) for k, v in extra.items()) + selector_requirements(selector)
    if not reqs:
        return _everything
    return functools.partial(labels_match, reqs)


# constraints


@attrs.frozen
class Constraint:
    """One ``topologySpreadConstraint`` of the pod, its selector compiled and its defaults filled in."""

    max_skew: int
    topology_key: str
    selector: LabelMatcher
    min_domains: int = 1
    honor_affinity: bool = True
    honor_taints: bool = False


def _constraint(c: Mapping[str, Any], selector: LabelMatcher) -> Constraint:
    min_domains = c.get("minDomains")
    return Constraint(
        max_skew=int(c.get("maxSkew") or 0),
        topology_key=c.get("topologyKey") or "",
        selector=selector,
        min_domains=1 if min_domains is None else int(min_domains),
        honor_affinity=(c.get("nodeAffinityPolicy") or HONOR) == HONOR,
        honor_taints=c.get("nodeTaintsPolicy") == HONOR,
    )


def pod_constraints(pod: PodInfo, action: str) -> list[Constraint]:
    """The pod's own constraints whose ``whenUnsatisfiable`` is ``action``; raises ``SelectorError``."""
    found = []
    for c in pod.spec.get("topologySpreadConstraints") or ():
        if c.get("whenUnsatisfiable") != action:
            continue
        labels = pod.labels
        extra = {k: labels[k] for k in c.get("matchLabelKeys") or () if k in labels}
        found.append(_constraint(c, label_selector(c.get("labelSelector"), extra)))
    return found


def count_matching(pod: PodInfo, selector: LabelMatcher, pods: Iterable[PodInfo]) -> int:
    """Pods of ``pod``'s namespace that ``selector`` selects; terminating ones are on their way out."""
    if selector is _nothing:
        return 0
    ns = pod.namespace
    count = 0
    for p in pods:
        if p.namespace == ns and selector(p.labels) and not (p.pod.get("metadata") or {}).get("deletionTimestamp"):
            count += 1
    return count


def _required_affinity(pod: PodInfo) -> Callable[[NodeInfo], bool] | None:
    """The pod's ``nodeSelector`` and required node affinity as a node test (``None``: any node)."""
    required = RequiredNodeAffinity(pod.spec)
    return None if required.is_empty() else required.match


def _has_keys(labels: Mapping[str, str], keys: tuple[str, ...]) -> bool:
    for key in keys:
        if key not in labels:
            return False
    return True


def add_domain_counts(pod: PodInfo, constraints: list[Constraint], nodes: list[NodeInfo],
                      counts: Sequence[dict[str, int] | None], known_only: bool, require_all: bool = True) -> None:
    """Add each eligible node's matching pods to its domain in ``counts[i]`` (``None``: constraint skipped).

    A node counts only if it has every constraint's key (``require_all``; else for the constraints whose key
    it has), and for a constraint only if it passes that constraint's inclusion policies; ``known_only`` adds
    to the domains already in ``counts`` only.
    """
    keys = tuple({c.topology_key for c in constraints}) if require_all else ()
    affinity = _required_affinity(pod) if any(c.honor_affinity for c in constraints) else None
    honor_taints = any(c.honor_taints for c in constraints)
    tolerated: dict[tuple[Taint, ...], bool] = {}
    counted = [(c, domains) for c, domains in zip(constraints, counts, strict=True) if domains is not None]
    for n in nodes:
        pods = n.pods
        if known_only and not pods:
            continue  # adds nothing to a known domain
        labels = n.labels
        if not _has_keys(labels, keys):
            continue
        affinity_ok = affinity is None or affinity(n)
        taints_ok = True
        if honor_taints and n.no_schedule_taints:
            taints = n.no_schedule_taints
            if taints not in tolerated:
                tolerated[taints] = find_untolerated(taints, pod.tolerations) is None
            taints_ok = tolerated[taints]
        for c, domains in counted:
            if (c.honor_affinity and not affinity_ok) or (c.honor_taints and not taints_ok):
                continue
            value = labels.get(c.topology_key)
            if value is None or (known_only and value not in domains):
                continue
            domains[value] = domains.get(value, 0) + (count_matching(pod, c.selector, pods.values()) if pods else 0)


# filtering


@attrs.frozen
class _SkewCheck:
    """One DoNotSchedule constraint, ready for Filter: a node's domain may hold at most ``limit`` matching pods."""

    key: str
    counts: dict[str, int]
    limit: int


def _skew_check(pod: PodInfo, c: Constraint, counts: dict[str, int]) -> _SkewCheck:
    smallest = 0 if len(counts) < c.min_domains else min(counts.values(), default=0)
    self_match = 1 if c.selector(pod.labels) else 0
    return _SkewCheck(c.topology_key, counts, c.max_skew + smallest - self_match)


# scoring


@attrs.frozen
class _ScoreState:
    constraints: list[Constraint]
    counts: list[dict[str, int] | None]  # None: hostname, counted per node at Score
    weights: list[float]
    ignored: frozenset[str]  # scored nodes missing a key: 0 after normalizing


def _go_round(x: float) -> int:
    """Go's ``math.Round``: halves away from zero (Python's ``round`` goes to even)."""
    whole = math.floor(abs(x) + 0.5)
    return whole if x >= 0 else -whole


def _normalize(scores: list[int], ignored: list[bool]) -> None:
    """Upstream's NormalizeScore: fewer matching pods is better, ``100 * (max + min - s) / max``."""
    valid = [s for s, skip in zip(scores, ignored, strict=True) if not skip]
    if not valid:
        scores[:] = [0] * len(scores)
        return
    lo, hi = min(valid), max(valid)
    for i, (s, skip) in enumerate(zip(scores, ignored, strict=True)):
        if skip:
            scores[i] = 0
        elif hi == 0:
            scores[i] = MAX_NODE_SCORE
        else:
            scores[i] = MAX_NODE_SCORE * (hi + lo - s) // hi


# the plugin


class PodTopologySpread(Plugin):
    name = "PodTopologySpread"
    Args = PodTopologySpreadArgs
    _MISSING_LABEL = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH, plugin=name)
    _SKEWED = Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH, plugin=name)

    def __init__(self, args: PodTopologySpreadArgs | None, handle: Any) -> None:
        super().__init__(args, handle)
        args = args or PodTopologySpreadArgs()
        self.system_defaulted = (args.defaulting_type or SYSTEM_DEFAULTING) == SYSTEM_DEFAULTING
        self.default_constraints = (list(SYSTEM_DEFAULT_CONSTRAINTS) if self.system_defaulted
                                    else list(args.default_constraints))

    def constraints(self, pod: PodInfo, action: str) -> list[Constraint]:
        """The pod's constraints for ``action``; a pod without any gets the default constraints, with the
        selector of the Services and controllers that select it (none: no default constraint)."""
        if pod.spec.get("topologySpreadConstraints"):
            return pod_constraints(pod, action)
        defaults = [c for c in self.default_constraints if c.get("whenUnsatisfiable") == action]
        workloads = self.handle.workloads
        if not defaults or workloads is None:
            return []
        requirements = default_selector(pod, workloads)
        if not requirements:
            return []
        selector = functools.partial(labels_match, requirements)
        return [_constraint(c, selector) for c in defaults]

    @componentbase.hookimpl
    def scheduler_pre_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        except SelectorError as e:
            return Status(Code.ERROR, f"obtaining pod's hard topology spread constraints: {e}", plugin=self.name)
        if not constraints:
            return SKIP
        counts: list[dict[str, int]] = [{} for _ in constraints]
        add_domain_counts(pod, constraints, nodes, counts, known_only=False)
        state[self.name] = [_skew_check(pod, c, domains) for c, domains in zip(constraints, counts, strict=True)]
        return None

    @componentbase.hookimpl
    def scheduler_filter(self, state: CycleState, nodes: list[NodeInfo],
                         rejected: dict[str, Status]) -> list[NodeInfo]:
        checks: list[_SkewCheck] = state[self.name]
        passed = []
        for n in nodes:
            labels = n.labels
            for check in checks:
                value = labels.get(check.key)
                if value is None:
                    rejected[n.name] = self._MISSING_LABEL
                    break
                if check.counts.get(value, 0) > check.limit:
                    rejected[n.name] = self._SKEWED
                    break
            else:
                passed.append(n)
        return passed

    @componentbase.hookimpl
    def scheduler_pre_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        try:
            constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        except SelectorError as e:
            return Status(Code.ERROR, f"obtaining pod's soft topology spread constraints: {e}", plugin=self.name)
        all_nodes = self.handle.snapshot.nodes
        if not constraints or not all_nodes:
            return SKIP
        # System defaults spread over the keys a node has; the pod's own (or List) constraints need them all.
        require_all = bool(pod.spec.get("topologySpreadConstraints")) or not self.system_defaulted
        keys = tuple({c.topology_key for c in constraints}) if require_all else ()
        counts: list[dict[str, int] | None] = [None if c.topology_key == HOSTNAME else {} for c in constraints]
        ignored: set[str] = set()
        for n in nodes:  # the domains worth counting are those of the nodes being scored
            labels = n.labels
            if not _has_keys(labels, keys):
                ignored.add(n.name)
                continue
            for c, domains in zip(constraints, counts, strict=True):
                if domains is not None and c.topology_key in labels:
                    domains.setdefault(labels[c.topology_key], 0)
        scored = len(nodes) - len(ignored)
        weights = [math.log((scored if domains is None else len(domains)) + 2) for domains in counts]
        add_domain_counts(pod, constraints, all_nodes, counts, known_only=True, require_all=require_all)
        state[self.name + "/score"] = _ScoreState(constraints, counts, weights, frozenset(ignored))
        return None

    @componentbase.hookimpl
    def scheduler_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        s: _ScoreState = state[self.name + "/score"]
        parts = list(zip(s.constraints, s.counts, s.weights, strict=True))
        scores = []
        for n in nodes:
            if n.name in s.ignored:
                scores.append(0)
                continue
            total = 0.0
            for c, domains, weight in parts:
                value = n.labels.get(c.topology_key)
                if value is None:
                    continue  # only without require_all: a system default's key the node lacks
                if domains is None:
                    count = count_matching(pod, c.selector, n.pods.values())
                else:
                    count = domains[value]
                total += count * weight + (c.max_skew - 1)
            scores.append(_go_round(total))
        return scores

    @componentbase.hookimpl
    def scheduler_normalize_score(self, state: CycleState, nodes: list[NodeInfo], scores: list[int]) -> None:
        ignored = state[self.name + "/score"].ignored
        _normalize(scores, [n.name in ignored for n in nodes])
