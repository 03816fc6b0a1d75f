"""kube-scheduler's v1 defaulting of a profile: the default plugins merged in, every plugin's args filled.

As upstream's ``setDefaults_KubeSchedulerProfile``: the profile's ``plugins`` are merged into the default
set per extension point (``mergePlugins``; a default named in ``enabled`` is re-configured in place,
``disabled`` drops it, ``"*"`` drops all), then every enabled plugin whose args type is known here (the
default plugins', as kube's in-tree scheme) gets a ``pluginConfig`` entry with its defaulted args, in name
order, and the args already given are defaulted. So ``--write-config-to`` shows what the scheduler runs.
A plugin that names no weight keeps none (v1's ``*int32``, left out when written), as upstream's defaulted
v1 config: ``weight: 0`` would read back as an explicit zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import componentbase
from componentbase.componentconfig import Int32, Int64
from componentbase_examples.scheduler import profileconfig
from componentbase_examples.scheduler.plugins.args import IN_TREE_ARGS, VolumeBindingArgs, default_volume_shape
from componentbase_examples.scheduler.plugins.resourcespec import ResourceSpec, default_resources

__all__ = ["IN_TREE_ARGS", "default_args", "set_defaults_profile"]

_POINTS = tuple(a for a in ("pre_enqueue", "queue_sort", "pre_filter", "filter", "post_filter", "pre_score", "score",
                            "reserve", "permit", "pre_bind", "bind", "post_bind"))


def _merge(defaults: list[profileconfig.Plugin], custom: profileconfig.PluginSet) -> profileconfig.PluginSet:
    """kube's ``mergePluginSet``: defaults less the disabled (custom entries replace theirs in place), then
    the other custom entries; the disabled list is kept, names only."""
    enabled, _ = profileconfig.merge_plugin_set(defaults, custom)
    disabled = [profileconfig.Plugin(name=p.name) for p in custom.disabled]
    kept = [profileconfig.Plugin(name=p.name, weight=p.weight) for p in enabled]
    return profileconfig.PluginSet(enabled=kept, disabled=disabled)


def _drop_nulls(value: Any) -> Any:
    """``null`` in args is an unset Go pointer or slice: the default applies, as if the field were absent."""
    if isinstance(value, Mapping):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _default_resources(resources: list[ResourceSpec]) -> list[ResourceSpec]:
    """No resources means cpu and memory; a weight of 0 (or none) means 1."""
    if not resources:
        return default_resources()
    for spec in resources:
        spec.weight = spec.weight or Int64(1)
    return resources


def _set_defaults_args(args: Any) -> None:
    """The defaulting kube's ``SetDefaults_*Args`` do beyond what the attrs defaults give."""
    strategy = getattr(args, "scoring_strategy", None)
    if strategy is not None:
        strategy.resources = _default_resources(strategy.resources)
    if isinstance(getattr(args, "resources", None), list):
        args.resources = _default_resources(args.resources)
    if getattr(args, "shape", None) == [] and isinstance(args, VolumeBindingArgs):  # len(shape) == 0: kube's default
        args.shape = default_volume_shape()
    if getattr(args, "defaulting_type", None) == "":
        args.defaulting_type = "System"


def default_args(name: str, args: Mapping[str, Any]) -> dict[str, Any] | None:
    """The defaulted wire form of a known plugin's args (``apiVersion`` and ``kind`` first), or ``None``
    when the args do not decode (validation reports them with their paths) or the plugin is unknown."""
    cls = IN_TREE_ARGS.get(name)
    if cls is None:
        return None
    body = {k: v for k, v in _drop_nulls(args).items() if k not in ("apiVersion", "kind")}
    try:  # no args: the attrs defaults, without loading the codec (``--help`` defaults a config too)
        decoded: Any = componentbase.componentconfig.structure(body, cls) if body else cls()
    except componentbase.DecodeError:
        return None
    _set_defaults_args(decoded)
    return {"apiVersion": profileconfig.API_VERSION, "kind": f"{name}Args",
            **componentbase.componentconfig.to_dict(decoded)}


def set_defaults_profile(profile: profileconfig.KubeSchedulerProfile) -> None:
    """Fill ``profile`` as kube's v1 defaulting does (idempotent: a written config reads back equal)."""
    plugins = profile.plugins or profileconfig.Plugins()
    defaults = [profileconfig.Plugin(name=n, weight=Int32(w) if w is not None else None)
                for n, w in profileconfig.DEFAULT_MULTI_POINT]
    filled = profileconfig.Plugins(multi_point=_merge(defaults, plugins.multi_point),
                            **{point: _merge([], getattr(plugins, point)) for point in _POINTS})
    profile.plugins = filled
    configured: set[str] = set()
    for pc in profile.plugin_config:
        configured.add(pc.name)
        if pc.args.get("kind") not in (None, f"{pc.name}Args"):
            continue  # a wrong kind is validation's to report
        defaulted = default_args(pc.name, pc.args)
        if defaulted is not None:
            pc.args = defaulted
    enabled = sorted({p.name for point in (*_POINTS, "multi_point") for p in getattr(filled, point).enabled})
    for name in enabled:
        if name not in configured:
            defaulted = default_args(name, {})
            if defaulted is not None:
                profile.plugin_config.append(profileconfig.PluginConfig(name=name, args=defaulted))
