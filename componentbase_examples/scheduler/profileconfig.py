"""The profile part of ``KubeSchedulerConfiguration`` v1 (``Plugin``, ``PluginSet``, ``Plugins``,
``PluginConfig``, ``KubeSchedulerProfile``) and kube's default plugin set with its merge.

Defaulting (``v1defaults``) and resolving a profile (``profiles``) both need them, and ``config`` holds the
whole configuration and calls defaulting: so they sit below all three, and no import goes round in a circle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from componentbase.componentconfig import Int32, pointer

__all__ = ["API_VERSION", "DEFAULT_MULTI_POINT", "EXTENSION_POINTS", "KubeSchedulerProfile", "Plugin", "PluginConfig",
           "PluginSet", "Plugins", "merge_plugin_set"]

API_VERSION = "kubescheduler.config.k8s.io/v1"


@attrs.define(kw_only=True)
class Plugin:
    name: str
    weight: Int32 | None = pointer(None, omitempty=True)  # v1's *int32 `json:"weight,omitempty"`


@attrs.define(kw_only=True)
class PluginSet:
    enabled: list[Plugin] = pointer(factory=list)
    disabled: list[Plugin] = pointer(factory=list)


EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
                    "reserve", "permit", "preBind", "bind", "postBind", "multiPoint")


@attrs.define(kw_only=True)
class Plugins:
    pre_enqueue: PluginSet = attrs.field(factory=PluginSet)
    queue_sort: PluginSet = attrs.field(factory=PluginSet)
    pre_filter: PluginSet = attrs.field(factory=PluginSet)
    filter: PluginSet = attrs.field(factory=PluginSet)
    post_filter: PluginSet = attrs.field(factory=PluginSet)
    pre_score: PluginSet = attrs.field(factory=PluginSet)
    score: PluginSet = attrs.field(factory=PluginSet)
    reserve: PluginSet = attrs.field(factory=PluginSet)
    permit: PluginSet = attrs.field(factory=PluginSet)
    pre_bind: PluginSet = attrs.field(factory=PluginSet)
    bind: PluginSet = attrs.field(factory=PluginSet)
    post_bind: PluginSet = attrs.field(factory=PluginSet)
    multi_point: PluginSet = attrs.field(factory=PluginSet)


@attrs.define(kw_only=True)
class PluginConfig:
    name: str
    args: dict[str, Any] = pointer(factory=dict)


@attrs.define(kw_only=True)
class KubeSchedulerProfile:
    scheduler_name: str = pointer("")
    percentage_of_nodes_to_score: Int32 | None = None
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] = pointer(factory=list)



#: kube-scheduler's default multiPoint set, restricted to the plugins this scheduler has, with its weights.
DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
    ("NodeDeclaredFeatures", None),
)


def merge_plugin_set(defaults: Sequence[Plugin],
                     custom: PluginSet) -> tuple[list[Plugin], set[str]]:
    """v1 ``mergePluginSet``: defaults (minus disabled, re-configured in place), then the custom additions."""
    disabled = {p.name for p in custom.disabled}
    by_name = {p.name: i for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    merged: list[Plugin] = []
    if "*" not in disabled:
        for plugin in defaults:
            if plugin.name in disabled:
                continue
            if plugin.name in by_name:
                replaced.add(by_name[plugin.name])
                plugin = custom.enabled[by_name[plugin.name]]
            merged.append(plugin)
    merged += [p for i, p in enumerate(custom.enabled) if i not in replaced]
    return merged, disabled
