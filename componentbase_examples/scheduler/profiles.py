"""Which plugins a profile runs at each extension point, with which weights and args, as kube-scheduler decides.

Two steps, as upstream: v1 defaulting merges the profile's ``plugins`` into the default set (a default
named in ``enabled`` is re-configured in place, ``disabled: [{name: "*"}]`` drops all defaults of a
point), then the framework expands ``multiPoint`` into every point a plugin implements, unless that point
disables it or names it itself (its own entry, and weight, win). Every problem is a field error with its
path, so a bad config fails validation rather than the scheduler's start.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

import componentbase
from componentbase import field
from componentbase.componentconfig import Int32
from componentbase_examples.scheduler import config
from componentbase_examples.scheduler.interface import EXTENSION_POINTS
from componentbase_examples.scheduler.profileconfig import DEFAULT_MULTI_POINT, merge_plugin_set

if TYPE_CHECKING:  # the framework is the runtime (informers, queues): defaulting and --help need not load it
    from componentbase_examples.scheduler.framework import Handle, Registry

__all__ = ["DEFAULT_MULTI_POINT", "ProfileValidator", "ResolvedProfile", "build_frameworks", "merge_plugin_set",
           "resolve", "validate"]

_ATTRS = {"preEnqueue": "pre_enqueue",
          "queueSort": "queue_sort", "preFilter": "pre_filter", "filter": "filter", "postFilter": "post_filter",
          "preScore": "pre_score", "score": "score", "reserve": "reserve", "permit": "permit", "preBind": "pre_bind",
          "bind": "bind", "postBind": "post_bind", "multiPoint": "multi_point"}


@attrs.define
class ResolvedProfile:
    """A profile ready to build: ``enabled[point]`` is its ``(name, weight)`` list, ``args`` decoded per plugin."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    enabled: dict[str, list[tuple[str, int]]]
    args: dict[str, Any]


def _weight(plugin: config.Plugin) -> int:
    return plugin.weight or 1


def resolve(profile: config.KubeSchedulerProfile, registry: Registry, path: field.Path,
            ) -> tuple[ResolvedProfile, list[Exception]]:
    """The profile's plugins per extension point, and every problem with them."""
    errs: list[Exception] = []
    plugins = profile.plugins or config.Plugins()
    defaults = [config.Plugin(name=n, weight=None if w is None else Int32(w)) for n, w in DEFAULT_MULTI_POINT]
    multi, _ = merge_plugin_set(defaults, plugins.multi_point)
    ppath = path.child("plugins")
    mp_names = _check_names(multi, "multiPoint", plugins.multi_point, registry, ppath.child("multiPoint"), errs)
    enabled: dict[str, list[tuple[str, int]]] = {}
    for point in EXTENSION_POINTS:
        custom: config.PluginSet = getattr(plugins, _ATTRS[point])
        specific, disabled = merge_plugin_set((), custom)
        names = _check_names(specific, point, custom, registry, ppath.child(point), errs)
        own = {p.name: p for p in specific if p.name in names}
        if "*" in disabled:
            enabled[point] = [(p.name, _weight(p)) for p in own.values()]
            continue
        overrides: list[config.Plugin] = []
        expanded: list[config.Plugin] = []
        for p in multi:
            if p.name not in mp_names or point not in registry[p.name].points or p.name in disabled:
                continue
            (overrides if p.name in own else expanded).append(p)
        ordered = [own[p.name] for p in overrides] + expanded + [p for n, p in own.items()
                                                                 if n not in {o.name for o in overrides}]
        enabled[point] = [(p.name, _weight(p)) for p in ordered]
    if len(enabled["queueSort"]) > 1:
        errs.append(field.invalid(ppath.child("queueSort", "enabled"), [n for n, _ in enabled["queueSort"]],
                                  "only one queue sort plugin can be enabled"))
    if not enabled["bind"]:
        errs.append(field.required(ppath.child("bind", "enabled"), "at least one bind plugin is needed"))
    args = _decode_args(profile, registry, path, errs)
    resolved = ResolvedProfile(profile.scheduler_name, profile.percentage_of_nodes_to_score, enabled, args)
    return resolved, errs


def _check_names(plugins: Sequence[config.Plugin], point: str, custom: config.PluginSet, registry: Registry,
                 path: field.Path, errs: list[Exception]) -> set[str]:
    """The names that exist and implement ``point``; the rest are errors at the index the user wrote them."""
    good: set[str] = set()
    seen: set[str] = set()
    where = {p.name: i for i, p in reversed(list(enumerate(custom.enabled)))}
    kind = EXTENSION_POINTS[point][1] if point in EXTENSION_POINTS else ""
    for i, plugin in enumerate(custom.enabled):
        if plugin.name in seen:
            errs.append(field.duplicate(path.child("enabled").index(i).child("name"), plugin.name))
        seen.add(plugin.name)
        if plugin.weight is not None and plugin.weight < 0:
            errs.append(field.invalid(path.child("enabled").index(i).child("weight"), plugin.weight,
                                      "must be greater than or equal to 0"))
    for plugin in plugins:
        npath = path.child("enabled").index(where[plugin.name]).child("name") if plugin.name in where else path
        if plugin.name not in registry:
            what = f'{kind} "{plugin.name}"' if kind else f'plugin "{plugin.name}"'
            errs.append(field.invalid(npath, plugin.name, f"{what} does not exist"))
        elif kind and point not in registry[plugin.name].points:
            errs.append(field.invalid(npath, plugin.name, f'plugin "{plugin.name}" does not extend {kind} plugin'))
        else:
            good.add(plugin.name)
    return good


def _decode_args(profile: config.KubeSchedulerProfile, registry: Registry, path: field.Path,
                 errs: list[Exception]) -> dict[str, Any]:
    """Each plugin's args: from its ``pluginConfig`` entry (problems in the order written), else defaulted."""
    decoded: dict[str, Any] = {}
    for i, pc in enumerate(profile.plugin_config):
        if pc.name not in registry:
            errs.append(field.invalid(path.child("pluginConfig").index(i).child("name"), pc.name,
                                      f'plugin "{pc.name}" does not exist'))
        elif pc.name not in decoded:
            apath = path.child("pluginConfig").index(i).child("args")
            decoded[pc.name], problems = registry[pc.name].decode_args(pc.args or {}, apath)
            errs += problems
    for name, entry in registry.entries.items():
        if name not in decoded and entry.args_type is not None:
            decoded[name], problems = entry.decode_args({}, path.child("pluginConfig"))
            errs += problems
    return decoded


def validate(cfg: config.KubeSchedulerConfiguration, registry: Registry) -> list[Exception]:
    """Every plugin problem of every profile; all profiles must also share one queue sort, as upstream."""
    errs: list[Exception] = []
    first: list[tuple[str, int]] | None = None
    for i, profile in enumerate(cfg.profiles):
        path = field.Path("profiles").index(i)
        resolved, problems = resolve(profile, registry, path)
        errs += problems
        queue_sort = resolved.enabled["queueSort"]
        if first is None:
            first = queue_sort
        elif [n for n, _ in queue_sort] != [n for n, _ in first]:
            errs.append(field.invalid(path.child("plugins", "queueSort"), [n for n, _ in queue_sort],
                                      "queueSort must be the same for all profiles"))
    return errs


class ProfileError(ValueError):
    """A profile that cannot be built; one line per problem."""


def build_frameworks(cfg: config.KubeSchedulerConfiguration, registry: Registry, handle: Handle,
                     ) -> dict[str, Any]:
    """One ``Framework`` per profile, by scheduler name."""
    from componentbase_examples.scheduler.framework import build_framework

    frameworks: dict[str, Any] = {}
    for i, profile in enumerate(cfg.profiles):
        resolved, errs = resolve(profile, registry, field.Path("profiles").index(i))
        if errs:
            raise ProfileError("\n".join(str(e) for e in errs))
        profile_handle = attrs.evolve(handle, profile_name=profile.scheduler_name)
        frameworks[profile.scheduler_name] = build_framework(
            profile.scheduler_name, resolved.enabled, resolved.args, registry, profile_handle,
            resolved.percentage_of_nodes_to_score)
    return frameworks



class ProfileValidator:
    """Validates the profiles' plugins at the command's validation step (``componentbase_validate``),
    against the plugins registered with the command: the defaults, the program's and the entry points'."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.pm = pm

    @componentbase.hookimpl
    def componentbase_validate(self, options: Any) -> list[Exception]:
        cfg = getattr(options, "component_config", None)
        if not isinstance(cfg, config.KubeSchedulerConfiguration):
            return []
        from componentbase_examples.scheduler.framework import Registry, RegistryError

        try:
            registry = Registry.from_plugin_manager(self.pm)
        except RegistryError as e:
            return [e]
        return validate(cfg, registry)
