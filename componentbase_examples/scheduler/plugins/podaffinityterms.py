"""Pod affinity terms parsed once per pod: the pods a term selects, its topology key and weight.

InterPodAffinity matches every placed pod's terms against each incoming pod, so the parse is cached per
``PodInfo`` object; this module is that parse and that cache, kube's ``framework.AffinityTerm``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from componentbase_examples.scheduler.plugins.helpers import (
    Requirement,
    SelectorError,
    labels_match,
    selector_requirements,
)
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import Snapshot

__all__ = ["NO_TERMS", "PodTerms", "Term", "TermCache", "parse_terms"]

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
#: Parsed terms are kept for this many pods at least before the cache drops pods that are gone.
_MIN_CACHE = 1024


def _requirements(selector: Mapping[str, Any] | None) -> tuple[Requirement, ...] | None:
    """A ``LabelSelector``'s requirements (``()`` selects every pod), or ``None`` if it selects none."""
    if selector is None:
        return None
    try:
        return selector_requirements(selector)
    except SelectorError:
        return None


def _with_label_keys(requirements: tuple[Requirement, ...] | None, term: Mapping[str, Any],
                     labels: Mapping[str, str]) -> tuple[Requirement, ...] | None:
    """Merge ``matchLabelKeys`` (``In``) and ``mismatchLabelKeys`` (``NotIn``) with the owner's values, as
    the API server does at creation; keys the owner lacks are ignored, and a nil selector stays nil."""
    if requirements is None:
        return None
    merged = [(key, "In", frozenset((labels[key],))) for key in term.get("matchLabelKeys") or () if key in labels]
    merged += [(key, "NotIn", frozenset((labels[key],))) for key in term.get("mismatchLabelKeys") or ()
               if key in labels]
    return requirements + tuple(merged) if merged else requirements


def _selects(requirements: tuple[Requirement, ...] | None, labels: Mapping[str, str]) -> bool:
    return requirements is not None and labels_match(requirements, labels)


def _namespaces(owner: PodInfo, term: Mapping[str, Any]) -> frozenset[str] | None:
    """The namespaces a term covers, ``None`` for all; a non-empty namespaceSelector is ignored (no labels)."""
    selector = term.get("namespaceSelector")
    if selector is not None and not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return None
    listed = term.get("namespaces")
    return frozenset(listed) if listed else frozenset((owner.namespace,))


class Term:
    """A parsed ``PodAffinityTerm``: the pods it selects, its topology key, and its weight if preferred."""

    __slots__ = ("namespaces", "requirements", "topology_key", "weight")

    def __init__(self, owner: PodInfo, term: Mapping[str, Any], weight: int = 0) -> None:
        self.namespaces = _namespaces(owner, term)
        self.requirements = _with_label_keys(_requirements(term.get("labelSelector")), term, owner.labels)
        self.topology_key: str = term.get("topologyKey") or ""
        self.weight = weight

    def matches(self, pod: PodInfo) -> bool:
        namespaces = self.namespaces
        if namespaces is not None and pod.namespace not in namespaces:
            return False
        return _selects(self.requirements, pod.labels)


@attrs.frozen
class PodTerms:
    """A pod's parsed pod affinity and anti-affinity, kube's ``PodInfo.Required/Preferred(Anti)AffinityTerms``."""

    required_affinity: tuple[Term, ...] = ()
    required_anti_affinity: tuple[Term, ...] = ()
    preferred_affinity: tuple[Term, ...] = ()
    preferred_anti_affinity: tuple[Term, ...] = ()


NO_TERMS = PodTerms()


def _required_terms(owner: PodInfo, block: Mapping[str, Any]) -> tuple[Term, ...]:
    return tuple(Term(owner, t) for t in block.get(_REQUIRED) or ())


def _preferred_terms(owner: PodInfo, block: Mapping[str, Any]) -> tuple[Term, ...]:
    return tuple(Term(owner, w.get("podAffinityTerm") or {}, int(w.get("weight") or 0))
                 for w in block.get(_PREFERRED) or ())


def parse_terms(info: PodInfo) -> PodTerms:
    """The pod's affinity and anti-affinity terms (``NO_TERMS``, shared, for a pod without any)."""
    affinity = info.spec.get("affinity") or {}
    pod_affinity = affinity.get("podAffinity") or {}
    anti_affinity = affinity.get("podAntiAffinity") or {}
    if not pod_affinity and not anti_affinity:
        return NO_TERMS
    return PodTerms(_required_terms(info, pod_affinity), _required_terms(info, anti_affinity),
                    _preferred_terms(info, pod_affinity), _preferred_terms(info, anti_affinity))


class TermCache:
    """Parsed terms per pod, reused while its ``PodInfo`` is the same object (an update makes a new one),
    so a placed pod's terms are parsed once, not once per cycle; PodInfo is shared and has no room for them."""

    def __init__(self) -> None:
        self._parsed: dict[str, tuple[PodInfo, PodTerms]] = {}
        self._limit = _MIN_CACHE

    def __len__(self) -> int:
        return len(self._parsed)

    def get(self, info: PodInfo) -> PodTerms:
        hit = self._parsed.get(info.key)
        if hit is not None and hit[0] is info:
            return hit[1]
        terms = parse_terms(info)
        self._parsed[info.key] = (info, terms)
        return terms

    def prune(self, snapshot: Snapshot) -> None:
        """Drop the pods gone from the snapshot once the cache has doubled, so pod churn cannot grow it."""
        if len(self._parsed) <= self._limit:
            return
        live = {key for n in snapshot.nodes_with_pod_affinity() for key in n.pods_with_affinity}
        self._parsed = {key: hit for key, hit in self._parsed.items() if key in live}
        self._limit = max(_MIN_CACHE, 2 * len(self._parsed))
