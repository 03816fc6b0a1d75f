"""The args types of the default plugins, kube's in-tree plugin args scheme, apart from the plugins.

Config defaulting and validation (``--help``, ``--version`` and ``--write-config-to`` default a config too)
need only these types; the plugins themselves (~25 ms to import) are loaded when a scheduler is built.
"""

from __future__ import annotations

from typing import Any

import attrs

import componentbase
from componentbase import field
from componentbase.componentconfig import Int32
from componentbase.util import Duration
from componentbase_examples.scheduler import features
from componentbase_examples.scheduler.plugins.podtopologyspreadargs import PodTopologySpreadArgs
from componentbase_examples.scheduler.plugins.resourcespec import ResourceSpec, default_resources, validate_resources

__all__ = [
    "IN_TREE_ARGS",
    "LEAST_ALLOCATED",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MAX_HARD_POD_AFFINITY_WEIGHT",
    "MAX_UTILIZATION",
    "MIN_HARD_POD_AFFINITY_WEIGHT",
    "MOST_ALLOCATED",
    "RATIO",
    "DefaultPreemptionArgs",
    "DynamicResourcesArgs",
    "InterPodAffinityArgs",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "RequestedToCapacityRatioParam",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "VolumeBindingArgs",
]

MIN_HARD_POD_AFFINITY_WEIGHT, MAX_HARD_POD_AFFINITY_WEIGHT = 0, 100
LEAST_ALLOCATED, MOST_ALLOCATED, RATIO = "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100


@attrs.define(kw_only=True)


class NodeResourcesBalancedAllocationArgs:
    resources: list[ResourceSpec] = attrs.field(factory=default_resources)

    def validate(self, path: field.Path) -> list[Exception]:
        """kube's: each resource once, each weighing 1 (a weight of 0 was defaulted to 1)."""
        errs: list[Exception] = []
        seen: set[str] = set()
        for i, r in enumerate(self.resources):
            rpath = path.child("resources").index(i)
            if r.name in seen:
                errs.append(field.duplicate(rpath.child("name"), r.name))
            seen.add(r.name)
            if r.weight != 1:
                errs.append(field.invalid(rpath.child("weight"), r.weight, "must be 1"))
        return errs


@attrs.define(kw_only=True)


class DefaultPreemptionArgs:
    """kube's ``DefaultPreemptionArgs`` with its v1 defaults and validation."""

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    def validate(self, path: field.Path) -> list[Exception]:
        pct, absolute = self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        pct_path, abs_path = path.child("minCandidateNodesPercentage"), path.child("minCandidateNodesAbsolute")
        errs: list[Exception] = []
        if not 0 <= pct <= 100:
            errs.append(field.invalid(pct_path, pct, "not in valid range [0, 100]"))
        if absolute < 0:
            errs.append(field.invalid(abs_path, absolute, "not in valid range [0, inf)"))
        if pct == 0 and absolute == 0:
            why = "cannot be zero at the same time as "
            errs += [field.invalid(pct_path, pct, why + "minCandidateNodesAbsolute"),
                     field.invalid(abs_path, absolute, why + "minCandidateNodesPercentage")]
        return errs


@attrs.define(kw_only=True)


class InterPodAffinityArgs:
    hard_pod_affinity_weight: Int32 = Int32(1)
    ignore_preferred_terms_of_existing_pods: bool = False

    def validate(self, path: field.Path) -> list[Exception]:
        w = self.hard_pod_affinity_weight
        if MIN_HARD_POD_AFFINITY_WEIGHT <= w <= MAX_HARD_POD_AFFINITY_WEIGHT:
            return []
        detail = f"not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]"
        return [field.invalid(path.child("hardPodAffinityWeight"), w, detail)]


@attrs.define(kw_only=True)


class NodeAffinityArgs:
    added_affinity: dict[str, Any] | None = None

    def validate(self, path: field.Path) -> list[Exception]:
        """kube's ``ValidateNodeAffinityArgs``: the terms parse as component-helpers' ``NewNodeSelector`` and
        ``NewPreferredSchedulingTerms`` parse them (empty terms, and preferred ones of weight 0, skipped)."""
        if self.added_affinity is None:
            return []
        from componentbase_examples.scheduler.plugins.selectorparse import term_errors  # not for --help

        required_key, preferred_key = ("requiredDuringSchedulingIgnoredDuringExecution",
                                       "preferredDuringSchedulingIgnoredDuringExecution")
        errs: list[Exception] = [field.invalid(path.child("addedAffinity", k), k, "unknown field")
                                 for k in self.added_affinity if k not in (required_key, preferred_key)]
        added = path.child("addedAffinity")
        required = self.added_affinity.get(required_key) or {}
        for i, term in enumerate(required.get("nodeSelectorTerms") or ()):
            if term.get("matchExpressions") or term.get("matchFields"):
                tpath = added.child(required_key, "nodeSelectorTerms").index(i)
                errs += [ValueError(e) for e in term_errors(term, tpath)]
        for i, pref in enumerate(self.added_affinity.get(preferred_key) or ()):
            term = pref.get("preference") or {}
            if pref.get("weight") and (term.get("matchExpressions") or term.get("matchFields")):
                errs += [ValueError(e) for e in term_errors(term, added.child(preferred_key).index(i))]
        return errs


@attrs.define(kw_only=True)


class UtilizationShapePoint:
    utilization: Int32
    score: Int32


@attrs.define(kw_only=True)


class RequestedToCapacityRatioParam:
    shape: list[UtilizationShapePoint] = attrs.field(factory=list)


@attrs.define(kw_only=True)


class ScoringStrategy:
    type: str = LEAST_ALLOCATED
    resources: list[ResourceSpec] = attrs.field(factory=default_resources)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


@attrs.define(kw_only=True)


class NodeResourcesFitArgs:
    ignored_resources: list[str] = attrs.field(factory=list)
    ignored_resource_groups: list[str] = attrs.field(factory=list)
    scoring_strategy: ScoringStrategy = attrs.field(factory=ScoringStrategy)

    def validate(self, path: field.Path) -> list[Exception]:
        errs: list[Exception] = []
        qualified = componentbase.util.validation.qualified_name
        for i, res in enumerate(self.ignored_resources):
            errs += [field.invalid(path.child("ignoredResources").index(i), res, m) for m in qualified(res)]
        for i, group in enumerate(self.ignored_resource_groups):
            if "/" in group:
                errs.append(field.invalid(path.child("ignoredResourceGroups").index(i), group,
                                          "resource group name can't contain '/'"))
            errs += [field.invalid(path.child("ignoredResourceGroups").index(i), group, m) for m in qualified(group)]
        spath = path.child("scoringStrategy")
        strategy = self.scoring_strategy
        if strategy.type not in (LEAST_ALLOCATED, MOST_ALLOCATED, RATIO):
            errs.append(field.not_supported(spath.child("type"), strategy.type,
                                            [LEAST_ALLOCATED, MOST_ALLOCATED, RATIO]))
        errs += validate_resources(strategy.resources, spath.child("resources"))
        if strategy.type == RATIO:
            rpath = spath.child("requestedToCapacityRatio")
            if strategy.requested_to_capacity_ratio is None:
                errs.append(field.required(rpath, "required for RequestedToCapacityRatio"))
            else:  # kube's path, without requestedToCapacityRatio
                errs += _validate_shape(strategy.requested_to_capacity_ratio.shape, spath.child("shape"))
        return errs


def _validate_shape(shape: list[UtilizationShapePoint], path: field.Path) -> list[Exception]:
    if not shape:
        return [field.required(path, "at least one point must be specified")]
    errs: list[Exception] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(field.invalid(path.index(i).child("utilization"), shape[i].utilization,
                                      "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errs.append(field.invalid(path.index(i).child("utilization"), point.utilization,
                                      "not in valid range [0, 100]"))
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(field.invalid(path.index(i).child("score"), point.score, "not in valid range [0, 10]"))
    return errs


@attrs.define(kw_only=True)


class VolumeBindingArgs:
    """kube's VolumeBindingArgs: ``shape`` maps the utilization of a node's matching volumes to a score when
    StorageCapacityScoring is on (then it defaults to kube's: 0% -> 10, 100% -> 0, the emptier the better)."""

    bind_timeout_seconds: int = 600
    shape: list[UtilizationShapePoint] | None = attrs.field(factory=lambda: default_volume_shape())

    def validate(self, path: field.Path) -> list[Exception]:
        errs: list[Exception] = []
        if self.bind_timeout_seconds < 0:
            errs.append(field.invalid(path.child("bindTimeoutSeconds"), self.bind_timeout_seconds,
                                      "invalid BindTimeoutSeconds, should not be a negative value"))
        if features.enabled(features.STORAGE_CAPACITY_SCORING):
            errs += _validate_shape(self.shape or [], path.child("shape"))
        elif self.shape is not None:
            errs.append(field.invalid(path.child("shape"), self.shape, "unexpected field `shape`, remove it or turn "
                                      "on the feature gate StorageCapacityScoring"))
        return errs


def _duration(seconds: float) -> Any:
    return attrs.field(default=Duration(seconds), converter=Duration)


@attrs.define(kw_only=True)
class DynamicResourcesArgs:
    """kube's ``DynamicResourcesArgs`` with 1.37's defaults (DRASchedulerFilterTimeout and the binding conditions'
    gates on): read, defaulted, validated and written as kube's, though no claim is allocated here."""

    filter_timeout: Duration = _duration(10)
    binding_timeout: Duration = _duration(600)

    def validate(self, path: field.Path) -> list[Exception]:
        errs: list[Exception] = []
        if self.filter_timeout < 0:
            errs.append(field.invalid(path.child("filterTimeout"), self.filter_timeout, "must be zero or positive"))
        if self.binding_timeout < 1:
            errs.append(field.invalid(path.child("bindingTimeout"), self.binding_timeout, "must be at least 1 second"))
        return errs


def default_volume_shape() -> list[UtilizationShapePoint] | None:
    """kube's ``SetDefaults_VolumeBindingArgs`` shape: with StorageCapacityScoring, empty volumes score most."""
    if not features.enabled(features.STORAGE_CAPACITY_SCORING):
        return None
    return [UtilizationShapePoint(utilization=Int32(0), score=Int32(MAX_CUSTOM_PRIORITY_SCORE)),
            UtilizationShapePoint(utilization=Int32(MAX_UTILIZATION), score=Int32(0))]


#: The args type of each default plugin by name: what kube's plugin args scheme knows.
IN_TREE_ARGS: dict[str, type] = {
    "DefaultPreemption": DefaultPreemptionArgs,
    "DynamicResources": DynamicResourcesArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "NodeAffinity": NodeAffinityArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "NodeResourcesFit": NodeResourcesFitArgs,
    "PodTopologySpread": PodTopologySpreadArgs,
    "VolumeBinding": VolumeBindingArgs,
}
