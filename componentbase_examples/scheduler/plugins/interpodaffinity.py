"""InterPodAffinity: place a pod by where other pods run, as kube-scheduler's plugin of that name.

Filter enforces the incoming pod's required pod affinity and anti-affinity, and the required anti-affinity
of the pods already placed (assumed ones included), per topology domain: a ``topologyKey`` and a node's
value for it. PreFilter counts the matching pods per domain once; it skips the plugin when the pod has no
required terms and no placed pod's anti-affinity selects it, which the snapshot's indexes of pods with
affinity tell without walking every pod. Score sums per domain the weights of the pod's preferred terms
that placed pods match (anti-affinity subtracts), and, the other way round, the weights of the placed pods'
preferred terms, and of their required affinity terms at ``hardPodAffinityWeight``, that the pod matches;
NormalizeScore maps min..max onto 0..100. A pod with terms of its own costs a walk over every placed pod
(required terms at PreFilter, preferred ones at PreScore), as upstream; one without costs microseconds.

Upstream semantics kept: an affinity term needs the node to have its topology key, an anti-affinity term
holds on a node without it; a placed pod counts for the pod's affinity only if it matches all its terms; a
pod whose affinity terms select itself may start its group where no pod matches them yet (the first replica
of a co-located set); a nil ``labelSelector`` selects nothing and ``{}`` everything; no ``namespaces`` and
no ``namespaceSelector`` mean the namespace of the pod owning the term, ``namespaceSelector: {}`` every
namespace; terminating pods still count (PodTopologySpread is the plugin that skips them); the reasons and
codes are upstream's (an affinity mismatch is UnschedulableAndUnresolvable, anti-affinity Unschedulable).

Known gaps and deviations:

* A ``namespaceSelector`` is matched against the labels of the Namespace informer the scheduler keeps (kube
  lists the namespaces at PreFilter; matching the pod's namespace's labels at each match selects the same).
  Without one (``--dry-run``), every namespace has no labels.
* A pod whose selectors do not parse (an invalid label key or value, an unknown operator) fails PreFilter
  with ``parsing pod: requiredAffinityTerms: key: Invalid value: ...`` (UnschedulableAndUnresolvable) and
  PreScore with ``failed to parse pod: ...``, as kube; a placed pod's unparsable terms are ignored.
* ``matchLabelKeys``/``mismatchLabelKeys`` are merged into the selector here, from the labels of the pod
  owning the term; kube's API server merges them when it creates the pod, and merging again selects the
  same pods, so pods that went through it are matched the same.
* No PreFilter AddPod/RemovePod extensions: nothing here (no preemption) evaluates "what if" pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

import componentbase
from componentbase_examples.scheduler.framework import MAX_NODE_SCORE, SKIP, Code, CycleState, Handle, Plugin, Status
from componentbase_examples.scheduler.plugins.args import InterPodAffinityArgs
from componentbase_examples.scheduler.plugins.podaffinityterms import (
    NO_TERMS,
    PodTerms,
    Term,
    TermCache,
    no_namespace_labels,
    parse_terms,
)
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo, pod_affinity_kinds

__all__ = [
    "ERR_REASON_AFFINITY",
    "ERR_REASON_ANTI_AFFINITY",
    "ERR_REASON_EXISTING_ANTI_AFFINITY",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "PodTerms",
    "Term",
    "parse_terms",
]

ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"



#: Per topology domain ``(topologyKey, value)``: how many pods match (or have terms matching) the pod.
Counts = dict[tuple[str, str], int]
#: topologyKey -> value -> summed weights, kube's ``scoreMap``.
TopologyScores = dict[str, dict[str, int]]


# PreFilter and Filter


def _count(counts: Counts, labels: Mapping[str, str], topology_key: str) -> None:
    value = labels.get(topology_key)
    if value is not None:
        domain = (topology_key, value)
        counts[domain] = counts.get(domain, 0) + 1


def existing_anti_affinity_counts(pod: PodInfo, nodes: Iterable[NodeInfo], cache: TermCache) -> Counts:
    """Per domain, the placed pods' required anti-affinity terms that select ``pod``."""
    counts: Counts = {}
    for n in nodes:
        for existing in n.pods_with_required_anti_affinity.values():
            for term in cache.get(existing).required_anti_affinity:
                if term.matches(pod):
                    _count(counts, n.labels, term.topology_key)
    return counts


def incoming_counts(terms: PodTerms, nodes: Iterable[NodeInfo]) -> tuple[Counts, Counts]:
    """Per domain, the placed pods matching all the pod's required affinity terms, and those matching each
    of its required anti-affinity terms."""
    affinity: Counts = {}
    anti_affinity: Counts = {}
    affinity_terms, anti_terms = terms.required_affinity, terms.required_anti_affinity
    for n in nodes:
        if not n.pods:
            continue
        labels = n.labels
        for existing in n.pods.values():
            if affinity_terms and all(t.matches(existing) for t in affinity_terms):
                for t in affinity_terms:
                    _count(affinity, labels, t.topology_key)
            for t in anti_terms:
                if t.matches(existing):
                    _count(anti_affinity, labels, t.topology_key)
    return affinity, anti_affinity


@attrs.frozen
class _FilterState:
    affinity_terms: tuple[Term, ...]
    anti_affinity_terms: tuple[Term, ...]
    affinity_counts: Counts
    anti_affinity_counts: Counts
    existing_anti_affinity_counts: Counts
    #: No placed pod matches the affinity terms but the pod does: it may start its group.
    starts_group: bool

    def satisfies_affinity(self, labels: Mapping[str, str]) -> bool:
        pods_exist = True
        for t in self.affinity_terms:
            value = labels.get(t.topology_key)
            if value is None:
                return False
            if self.affinity_counts.get((t.topology_key, value), 0) <= 0:
                pods_exist = False
        return pods_exist or self.starts_group

    def satisfies_anti_affinity(self, labels: Mapping[str, str]) -> bool:
        counts = self.anti_affinity_counts
        for t in self.anti_affinity_terms:
            value = labels.get(t.topology_key)
            if value is not None and counts.get((t.topology_key, value), 0) > 0:
                return False
        return True

    def satisfies_existing_anti_affinity(self, labels: Mapping[str, str]) -> bool:
        return not any(labels.get(key) == value for key, value in self.existing_anti_affinity_counts)


# Score


def _add_scores(scores: TopologyScores, terms: Iterable[Term], pod: PodInfo, labels: Mapping[str, str],
                multiplier: int, weight: int | None = None) -> None:
    """Add each matching term's weight (or ``weight``) times ``multiplier`` to the domain of ``labels``."""
    for t in terms:
        if t.matches(pod):
            value = labels.get(t.topology_key)
            if value is not None:
                domain = scores.setdefault(t.topology_key, {})
                domain[value] = domain.get(value, 0) + multiplier * (t.weight if weight is None else weight)


class InterPodAffinity(Plugin):
    name = "InterPodAffinity"
    Args = InterPodAffinityArgs
    _AFFINITY = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY, plugin=name)
    _ANTI_AFFINITY = Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY, plugin=name)
    _EXISTING_ANTI_AFFINITY = Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY, plugin=name)

    def __init__(self, args: InterPodAffinityArgs | None, handle: Handle) -> None:
        super().__init__(args, handle)
        args = args or InterPodAffinityArgs()
        self.hard_pod_affinity_weight = args.hard_pod_affinity_weight
        self.ignore_preferred_terms_of_existing_pods = args.ignore_preferred_terms_of_existing_pods
        self.cache = TermCache(handle.namespace_labels or no_namespace_labels)
        self.score_key = self.name + "/score"

    def terms(self, pod: PodInfo) -> PodTerms:
        return self.cache.get(pod) if pod_affinity_kinds(pod)[0] else NO_TERMS

    def prepare(self, pod: PodInfo, nodes: list[NodeInfo]) -> _FilterState | Status | None:
        """What Filter needs, ``None`` when nothing constrains the pod, or kube's rejection of a pod whose
        terms do not parse (an invalid label key or value in a selector)."""
        snapshot = self.handle.snapshot
        self.cache.prune(snapshot)
        terms = self.terms(pod)
        if terms.error:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {terms.error}", plugin=self.name)
        existing = existing_anti_affinity_counts(pod, snapshot.nodes_with_required_anti_affinity(), self.cache)
        if not existing and not terms.required_affinity and not terms.required_anti_affinity:
            return None
        affinity, anti_affinity = incoming_counts(terms, nodes)
        starts_group = not affinity and all(t.matches(pod) for t in terms.required_affinity)
        return _FilterState(terms.required_affinity, terms.required_anti_affinity, affinity, anti_affinity,
                            existing, starts_group)

    @componentbase.hookimpl
    def scheduler_pre_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        prepared = self.prepare(pod, nodes)
        if prepared is None:
            return SKIP
        if isinstance(prepared, Status):
            return prepared
        state[self.name] = prepared
        return None

    @componentbase.hookimpl
    def scheduler_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
                         rejected: dict[str, Status]) -> list[NodeInfo]:
        s = state.get(self.name) or self.prepare(pod, self.handle.snapshot.nodes)
        if s is None:
            return nodes
        if isinstance(s, Status):
            for n in nodes:
                rejected[n.name] = s
            return []
        check_affinity = bool(s.affinity_terms)
        check_anti = bool(s.anti_affinity_counts)
        check_existing = bool(s.existing_anti_affinity_counts)
        passed = []
        for n in nodes:
            labels = n.labels
            if check_affinity and not s.satisfies_affinity(labels):
                rejected[n.name] = self._AFFINITY
            elif check_anti and not s.satisfies_anti_affinity(labels):
                rejected[n.name] = self._ANTI_AFFINITY
            elif check_existing and not s.satisfies_existing_anti_affinity(labels):
                rejected[n.name] = self._EXISTING_ANTI_AFFINITY
            else:
                passed.append(n)
        return passed

    @componentbase.hookimpl
    def scheduler_pre_score(self, state: CycleState, pod: PodInfo) -> Status | None:
        terms = self.terms(pod)
        if terms.error:
            return Status(Code.ERROR, f"failed to parse pod: {terms.error}", plugin=self.name)
        preferred = bool(terms.preferred_affinity or terms.preferred_anti_affinity)
        if not preferred and self.ignore_preferred_terms_of_existing_pods:
            return SKIP
        scores = self.topology_scores(pod, terms, preferred)
        if not scores:
            return SKIP
        state[self.score_key] = list(scores.items())
        return None

    def topology_scores(self, pod: PodInfo, terms: PodTerms, preferred: bool) -> TopologyScores:
        """Sum the weights per domain; without preferred terms of its own, only pods with affinity matter."""
        snapshot = self.handle.snapshot
        hard = self.hard_pod_affinity_weight
        scores: TopologyScores = {}
        for n in snapshot.nodes if preferred else snapshot.nodes_with_pod_affinity():
            labels = n.labels
            if not labels:
                continue
            with_affinity = n.pods_with_affinity
            for existing in (n.pods if preferred else with_affinity).values():
                if preferred:
                    _add_scores(scores, terms.preferred_affinity, existing, labels, 1)
                    _add_scores(scores, terms.preferred_anti_affinity, existing, labels, -1)
                if existing.key not in with_affinity:
                    continue
                theirs = self.cache.get(existing)
                if hard > 0:
                    _add_scores(scores, theirs.required_affinity, pod, labels, 1, hard)
                _add_scores(scores, theirs.preferred_affinity, pod, labels, 1)
                _add_scores(scores, theirs.preferred_anti_affinity, pod, labels, -1)
        return scores

    @componentbase.hookimpl
    def scheduler_score(self, state: CycleState, nodes: list[NodeInfo]) -> list[int]:
        scores: list[tuple[str, dict[str, int]]] = state[self.score_key]
        totals = []
        for n in nodes:
            labels = n.labels
            total = 0
            for key, by_value in scores:
                value = labels.get(key)
                if value is not None:
                    total += by_value.get(value, 0)
            totals.append(total)
        return totals

    @componentbase.hookimpl
    def scheduler_normalize_score(self, scores: list[int]) -> None:
        """Map the lowest score to 0 and the highest to 100 (all 0 when they are equal), as upstream."""
        if not scores:
            return
        low, high = min(scores), max(scores)
        spread = high - low
        if spread <= 0:
            scores[:] = [0] * len(scores)
            return
        scores[:] = [int(MAX_NODE_SCORE * ((s - low) / spread)) for s in scores]
