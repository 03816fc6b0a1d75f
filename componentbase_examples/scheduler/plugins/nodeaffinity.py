"""NodeAffinity: ``nodeSelector`` and required node affinity filter; preferred terms score (normalized).

``addedAffinity`` in the plugin args applies to every pod of the profile, as upstream's NodeAffinityArgs.
A required term that only names nodes (``matchFields`` ``metadata.name In``) narrows the nodes filtered
at all (PreFilter), so the others are reported as ``node(s) didn't satisfy plugin(s) [NodeAffinity]``.
Terms are parsed as component-helpers does (``helpers.term_errors``): a required term that does not parse
matches no node (Filter's UnschedulableAndUnresolvable), a preferred one fails PreScore with its message.
"""

from __future__ import annotations

from typing import Any

import componentbase
from componentbase_examples.scheduler.framework import (
    SKIP,
    Code,
    CycleState,
    Plugin,
    PluginError,
    PreFilterResult,
    Status,
)
from componentbase_examples.scheduler.plugins.args import NodeAffinityArgs
from componentbase_examples.scheduler.plugins.helpers import (
    NodeSelector,
    PreferredTerms,
    RequiredNodeAffinity,
    default_normalize,
)
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"


def _required(pod: PodInfo) -> dict[str, Any] | None:
    affinity = (pod.spec.get("affinity") or {}).get("nodeAffinity") or {}
    return affinity.get("requiredDuringSchedulingIgnoredDuringExecution")


def _preferred(pod: PodInfo) -> list[dict[str, Any]]:
    affinity = (pod.spec.get("affinity") or {}).get("nodeAffinity") or {}
    return list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ())


def _named_nodes(required: dict[str, Any]) -> frozenset[str] | None:
    """Nodes the required terms restrict the pod to by name, or ``None`` if some term allows any name."""
    names: set[str] = set()
    for term in required.get("nodeSelectorTerms") or ():
        term_names: set[str] | None = None
        for f in term.get("matchFields") or ():
            if f.get("key") == "metadata.name" and f.get("operator") == "In":
                values = set(f.get("values") or ())
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names)


class NodeAffinity(Plugin):
    name = "NodeAffinity"
    Args = NodeAffinityArgs
    _REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD, plugin=name)
    _ENFORCED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED, plugin=name)

    def __init__(self, args: NodeAffinityArgs | None, handle: Any) -> None:
        super().__init__(args, handle)
        added = (args.added_affinity if args is not None else None) or {}
        required = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.added_selector = NodeSelector(required) if required is not None else None
        preferred = added.get("preferredDuringSchedulingIgnoredDuringExecution")
        self.added_preferred = PreferredTerms(preferred) if preferred else None

    @componentbase.hookimpl
    def scheduler_pre_filter(self, state: CycleState, pod: PodInfo) -> Status | PreFilterResult | None:
        required = _required(pod)
        if required is None and self.added_selector is None and not pod.spec.get("nodeSelector"):
            return SKIP
        state[self.name] = RequiredNodeAffinity(pod.spec)
        if required is None or not required.get("nodeSelectorTerms"):
            return None
        names = _named_nodes(required)
        if names is None:
            return None
        if not names:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT, plugin=self.name)
        return PreFilterResult(names)

    @componentbase.hookimpl
    def scheduler_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
                         rejected: dict[str, Status]) -> list[NodeInfo]:
        required: RequiredNodeAffinity = state.get(self.name) or RequiredNodeAffinity(pod.spec)
        added = self.added_selector
        if added is None:
            passed = required.matching(nodes)
            if len(passed) < len(nodes):
                fit = set(passed)
                rejected.update((n.name, self._REJECTED) for n in nodes if n not in fit)
            return passed
        passed = []
        for n in nodes:
            if added is not None and not added.match(n):
                rejected[n.name] = self._ENFORCED
            elif not required.match(n):
                rejected[n.name] = self._REJECTED
            else:
                passed.append(n)
        return passed

    @componentbase.hookimpl
    def scheduler_pre_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        if not nodes:
            return None
        preferred = _preferred(pod)
        terms = PreferredTerms(preferred)
        if terms.error:  # kube's getPodPreferredNodeAffinity error, as an Error status
            return Status(Code.ERROR, terms.error, plugin=self.name)
        if not preferred and self.added_preferred is None:
            return SKIP
        state[self.name + "/score"] = terms
        return None

    @componentbase.hookimpl
    def scheduler_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        terms: PreferredTerms | None = state.get(self.name + "/score")
        if terms is None:  # PreScore disabled: the pod's preferred terms parsed here, as kube's Score does
            terms = PreferredTerms(_preferred(pod))
            if terms.error:
                raise PluginError(terms.error)
        added = self.added_preferred
        if added is None:
            return terms.scores(nodes)
        return [terms.score(n) + added.score(n) for n in nodes]

    @componentbase.hookimpl
    def scheduler_normalize_score(self, scores: list[int]) -> None:
        default_normalize(scores, reverse=False)
