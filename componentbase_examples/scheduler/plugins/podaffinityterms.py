"""Pod affinity terms parsed once per pod: the pods a term selects, its topology key and weight.

InterPodAffinity matches every placed pod's terms against each incoming pod, so the parse is cached per
``PodInfo`` object; this module is that parse and that cache, kube's ``framework.AffinityTerm``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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

__all__ = ["NO_TERMS", "NamespaceLabels", "PodTerms", "Term", "TermCache", "no_namespace_labels", "parse_terms"]

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
#: Parsed terms are kept for this many pods at least before the cache drops pods that are gone.
_MIN_CACHE = 1024


#: A namespace's labels by its name (``{}`` for a namespace the scheduler does not know).
NamespaceLabels = Callable[[str], Mapping[str, str]]


def no_namespace_labels(name: str) -> Mapping[str, str]:
    return {}


def _requirements(selector: Mapping[str, Any] | None) -> tuple[Requirement, ...] | None:
    """A ``LabelSelector``'s requirements (``()`` selects everything), or ``None`` (nil) for nothing; raises
    ``SelectorError`` with kube's message for an invalid key, value or operator."""
    return None if selector is None else selector_requirements(selector)


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


class Term:
    """A parsed ``PodAffinityTerm`` (kube's ``AffinityTerm``): the pods it selects, its topology key, and its
    weight if preferred. It covers the namespaces it lists (its pod's own when it lists none and has no
    ``namespaceSelector``) and those whose labels its ``namespaceSelector`` selects (``{}``: every one)."""

    __slots__ = ("namespace_labels", "namespace_selector", "namespaces", "requirements", "topology_key", "weight")

    def __init__(self, owner: PodInfo, term: Mapping[str, Any], weight: int = 0,
                 namespace_labels: NamespaceLabels = no_namespace_labels) -> None:
        selector = term.get("namespaceSelector")
        listed = term.get("namespaces")
        self.requirements = _with_label_keys(_requirements(term.get("labelSelector")), term, owner.labels)
        ns_requirements = _requirements(selector)
        self.namespaces: frozenset[str] | None = (
            None if ns_requirements == () else frozenset(listed or ()) if listed or selector is not None
            else frozenset((owner.namespace,)))
        self.namespace_selector = ns_requirements or None  # None: no namespace beyond the listed ones
        self.namespace_labels = namespace_labels
        self.topology_key: str = term.get("topologyKey") or ""
        self.weight = weight

    def matches(self, pod: PodInfo) -> bool:
        namespaces = self.namespaces
        if namespaces is not None and pod.namespace not in namespaces:
            selector = self.namespace_selector
            if selector is None or not labels_match(selector, self.namespace_labels(pod.namespace)):
                return False
        return _selects(self.requirements, pod.labels)


@attrs.frozen
class PodTerms:
    """A pod's parsed pod affinity and anti-affinity, kube's ``PodInfo.Required/Preferred(Anti)AffinityTerms``."""

    required_affinity: tuple[Term, ...] = ()
    required_anti_affinity: tuple[Term, ...] = ()
    preferred_affinity: tuple[Term, ...] = ()
    preferred_anti_affinity: tuple[Term, ...] = ()
    #: Why some terms could not be parsed (kube's NewPodInfo error); "" when all were.
    error: str = ""


NO_TERMS = PodTerms()


_KINDS = (("requiredAffinityTerms", "podAffinity", _REQUIRED),
          ("requiredAntiAffinityTerms", "podAntiAffinity", _REQUIRED),
          ("preferredAffinityTerms", "podAffinity", _PREFERRED),
          ("preferredAntiAffinityTerms", "podAntiAffinity", _PREFERRED))


def parse_terms(info: PodInfo, namespace_labels: NamespaceLabels = no_namespace_labels) -> PodTerms:
    """The pod's affinity and anti-affinity terms (``NO_TERMS``, shared, for a pod without any). A kind of
    terms with an invalid selector is left empty and named in ``error``, as kube's ``NewPodInfo``."""
    affinity = info.spec.get("affinity") or {}
    if not affinity.get("podAffinity") and not affinity.get("podAntiAffinity"):
        return NO_TERMS
    parsed: list[tuple[Term, ...]] = []
    errors: list[str] = []
    for kind, block_name, field_name in _KINDS:
        entries = (affinity.get(block_name) or {}).get(field_name) or ()
        try:
            if field_name == _REQUIRED:
                parsed.append(tuple(Term(info, t, 0, namespace_labels) for t in entries))
            else:
                parsed.append(tuple(Term(info, w.get("podAffinityTerm") or {}, int(w.get("weight") or 0),
                                         namespace_labels) for w in entries))
        except SelectorError as e:
            parsed.append(())
            errors.append(f"{kind}: {e}")
    error = "" if not errors else errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return PodTerms(parsed[0], parsed[1], parsed[2], parsed[3], error=error)


class TermCache:
    """Parsed terms per pod, reused while its ``PodInfo`` is the same object (an update makes a new one),
    so a placed pod's terms are parsed once, not once per cycle; PodInfo is shared and has no room for them."""

    def __init__(self, namespace_labels: NamespaceLabels = no_namespace_labels) -> None:
        self.namespace_labels = namespace_labels
        self._parsed: dict[str, tuple[PodInfo, PodTerms]] = {}
        self._limit = _MIN_CACHE

    def __len__(self) -> int:
        return len(self._parsed)

    def get(self, info: PodInfo) -> PodTerms:
        hit = self._parsed.get(info.key)
        if hit is not None and hit[0] is info:
            return hit[1]
        terms = parse_terms(info, self.namespace_labels)
        self._parsed[info.key] = (info, terms)
        return terms

    def prune(self, snapshot: Snapshot) -> None:
        """Drop the pods gone from the snapshot once the cache has doubled, so pod churn cannot grow it."""
        if len(self._parsed) <= self._limit:
            return
        live = {key for n in snapshot.nodes_with_pod_affinity() for key in n.pods_with_affinity}
        self._parsed = {key: hit for key, hit in self._parsed.items() if key in live}
        self._limit = max(_MIN_CACHE, 2 * len(self._parsed))
