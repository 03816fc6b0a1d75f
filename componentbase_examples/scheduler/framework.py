"""The scheduling framework on pluggy: one hook per extension point, one ``Framework`` per profile.

A scheduler plugin is a class with a ``name`` and ``@componentbase.hookimpl`` methods named after the
extension points it extends (``scheduler_filter``, ``scheduler_score``...). It is registered with the
component's plugin manager like any componentbase plugin: the default plugins are passed to the
``Command`` exactly as a program embedding the scheduler passes its own, and a package can add one through
the ``componentbase.scheduler.plugins`` entry point group. pluggy checks each method's arguments against
the hook specification when the plugin is registered.

Why not call the hooks through pluggy: a profile enables its own plugins in its own order, with its own
args, and a pluggy call per node per plugin costs more than the plugin's work. So pluggy is the registry
and the contract, and ``Framework`` is built once per profile from the registered implementations: a list
of bound methods per extension point, called directly. Filter and Score also take a whole batch of nodes
per call, so a cycle over 500 nodes makes a handful of calls, not thousands.

The contract a plugin sees (the hooks, ``Status``, ``Code``) is in ``interface`` and re-exported here;
this module is the runtime: the registry of plugins and the per-profile call lists. It names no plugin (the
plugins import it): the default plugins and a plugin manager holding them are in ``registry``.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
import pluggy

import componentbase
from componentbase import field
from componentbase_examples.scheduler.interface import (
    ENTRY_POINT_GROUP,
    EXTENSION_POINTS,
    MAX_NODE_SCORE,
    SKIP,
    SKIPPED_FILTERS,
    Code,
    CycleState,
    NodeToStatus,
    PluginError,
    PostFilterResult,
    PreFilterResult,
    SchedulerHooks,
    StateNotFound,
    Status,
)
from componentbase_examples.scheduler.nominator import Nominator
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo, Snapshot
from componentbase_examples.scheduler.waitingpods import WaitingPods

__all__ = [
    "ENTRY_POINT_GROUP",
    "EXTENSION_POINTS",
    "MAX_NODE_SCORE",
    "SKIP",
    "SKIPPED_FILTERS",
    "Code",
    "CycleState",
    "Framework",
    "Handle",
    "NodeToStatus",
    "Plugin",
    "PluginEntry",
    "PluginError",
    "PostFilterResult",
    "PreFilterResult",
    "Registry",
    "RegistryError",
    "SchedulerHooks",
    "StateNotFound",
    "Status",
    "build_framework",
]

#: Binds a pod to a node through the API; the scheduler's wiring provides it, a simulation records it.
Binder = Callable[[PodInfo, str], None]


@attrs.define
class Handle:
    """What a plugin may use of the scheduler, kube's ``framework.Handle``."""

    snapshot: Snapshot
    profile_name: str = ""
    binder: Binder | None = None
    #: A namespace's labels by name, from the scheduler's Namespace informer (``{}`` when unknown or absent).
    namespace_labels: Callable[[str], Mapping[str, str]] | None = None
    #: The Services and controllers selecting pods (``plugins.spreaddefaults.WorkloadListers``), from which
    #: PodTopologySpread's default constraints take their selector; ``None``: no default constraint applies.
    workloads: Any = None
    #: ``informer(api_version, kind)``: a shared informer (``get(key)``, ``list()``) of the cluster's objects,
    #: requested when a plugin is built (kube's ``SharedInformerFactory``); None in a dry run.
    informer: Callable[[str, str], Any] | None = None
    #: The API client for a plugin's own writes (kube's ``ClientSet``): the scheduler's fenced client.
    client: Any = None
    #: The pods nominated to nodes by preemption (one per scheduler, shared by its profiles).
    nominator: Nominator | None = None
    #: The pods Permit plugins hold (``waitingpods.WaitingPods``, one per scheduler): kube's
    #: ``GetWaitingPod``, ``IterateOverWaitingPods`` and ``RejectWaitingPod``.
    waiting_pods: WaitingPods | None = None
    #: The config's HTTP extenders (``extender.HTTPExtender``): DefaultPreemption asks those with a
    #: ``preemptVerb`` which candidates to keep.
    extenders: Sequence[Any] = ()
    #: The scheduler's metrics (``metrics.SchedulerMetrics``): DefaultPreemption counts its attempts there.
    metrics: Any = None
    #: The cluster's policy/v1 PodDisruptionBudgets, as the API's JSON (the scheduler's informer cache).
    pdbs: Callable[[], list[dict[str, Any]]] | None = None
    #: Carries out a preemption (``preemption.Preemptor``); without one, a PostFilter only nominates.
    preemptor: Any = None
    #: This profile's ``Framework``, set once it is built (preemption re-runs its filters).
    framework: Any = None


class Plugin:
    """A convenient base for plugin classes: the framework builds one per profile as ``cls(args, handle)``.

    ``Args`` (an attrs class) declares the plugin's ``pluginConfig`` args, decoded strictly from the config
    file (camelCase there, snake_case here); an optional ``Args.validate(path)`` returns ``FieldError``s.
    """

    name: str = ""
    Args: type | None = None

    def __init__(self, args: Any, handle: Handle) -> None:
        self.args = args
        self.handle = handle


@attrs.frozen
class PluginEntry:
    """A registered plugin: its name, what to build it from, and the extension points it implements."""

    name: str
    factory: Any  # a class built per profile, or an instance shared by all
    points: frozenset[str]

    @property
    def args_type(self) -> type | None:
        return getattr(self.factory, "Args", None) if isinstance(self.factory, type) else None

    def decode_args(self, args: Mapping[str, Any], path: field.Path) -> tuple[Any, list[Exception]]:
        """The plugin's args from its ``pluginConfig`` entry (``{}`` for none), strictly, with field paths."""
        body = {k: v for k, v in args.items() if k not in ("apiVersion", "kind")}
        errs: list[Exception] = []
        kind = args.get("kind")
        if kind is not None and kind != f"{self.name}Args":  # kube decodes by kind, then refuses the other type
            errs.append(field.invalid(path, kind, "has to match plugin args"))
        cls = self.args_type
        if cls is None:
            errs += [field.invalid(path.child(k), v, f"plugin {self.name} takes no args") for k, v in body.items()]
            return None, errs
        try:
            decoded: Any = componentbase.componentconfig.structure(body, cls, str(path))
        except componentbase.DecodeError as e:
            return None, [*errs, *(_under_args(err) for err in e.errors if isinstance(err, Exception))]
        validate = getattr(decoded, "validate", None)
        if validate is not None:
            errs += validate(path)
        return decoded, errs


def _under_args(err: Exception) -> Exception:
    """``...args: a.b: Invalid value...`` as kube's one path, ``...args.a.b: Invalid value...``."""
    source, message = getattr(err, "source", None), str(getattr(err, "message", ""))
    head, sep, _ = message.partition(": ")
    if source is None or not sep or " " in head:
        return err
    return ValueError(f"{source}.{message}")


class RegistryError(ValueError):
    """Registered plugins that cannot make a scheduler (no name, two plugins of one name)."""


class Registry:
    """The scheduler plugins registered with a plugin manager, by name (kube's ``frameworkruntime.Registry``)."""

    def __init__(self, entries: Iterable[PluginEntry] = ()) -> None:
        self.entries: dict[str, PluginEntry] = {e.name: e for e in entries}

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def __getitem__(self, name: str) -> PluginEntry:
        return self.entries[name]

    @classmethod
    def from_plugin_manager(cls, pm: pluggy.PluginManager) -> Registry:
        points: dict[int, tuple[Any, set[str]]] = {}
        for point, (hook, _) in EXTENSION_POINTS.items():
            caller = getattr(pm.hook, hook, None)
            for impl in caller.get_hookimpls() if caller is not None else ():
                points.setdefault(id(impl.plugin), (impl.plugin, set()))[1].add(point)
        entries: dict[str, PluginEntry] = {}
        problems: list[str] = []
        for plugin, implemented in points.values():
            name = getattr(plugin, "name", "")
            if not isinstance(name, str) or not name:
                problems.append(f"scheduler plugin {pm.get_name(plugin)} has no name")
            elif name in entries:
                problems.append(f"a plugin named {name} already exists")
            else:
                entries[name] = PluginEntry(name, plugin, frozenset(implemented))
        if problems:
            raise RegistryError("; ".join(problems))
        return cls(entries.values())


@attrs.define
class ScorePlugin:
    name: str
    score: Callable[..., list[int]]
    normalize: Callable[..., None] | None
    weight: int


@attrs.define
class Framework:
    """One profile's plugins, as direct call lists per extension point in the profile's order."""

    profile_name: str
    percentage_of_nodes_to_score: int | None = None
    plugins: dict[str, Any] = attrs.field(factory=dict)
    queue_sort: Callable[..., bool] | None = None
    pre_enqueue: list[tuple[str, Callable[..., Status | None]]] = attrs.field(factory=list)
    pre_filter: list[tuple[str, Callable[..., Any]]] = attrs.field(factory=list)
    filter: list[tuple[str, Callable[..., list[NodeInfo]]]] = attrs.field(factory=list)
    post_filter: list[tuple[str, Callable[..., Any]]] = attrs.field(factory=list)
    pre_score: list[tuple[str, Callable[..., Any]]] = attrs.field(factory=list)
    score: list[ScorePlugin] = attrs.field(factory=list)
    reserve: list[tuple[str, Callable[..., Status | None], Callable[..., None] | None]] = attrs.field(factory=list)
    permit: list[tuple[str, Callable[..., Status | None]]] = attrs.field(factory=list)
    pre_bind: list[tuple[str, Callable[..., Status | None]]] = attrs.field(factory=list)
    bind: list[tuple[str, Callable[..., Status | None]]] = attrs.field(factory=list)
    post_bind: list[tuple[str, Callable[..., Any]]] = attrs.field(factory=list)

    # the binding cycle, for the wiring and the simulation

    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Reserve in order; on a failure, unreserve every reserve plugin (kube does all of them) and return it."""
        for name, reserve, _ in self.reserve:
            status = reserve(state=state, pod=pod, node_name=node_name)
            if status is not None and not status.is_success():
                status.plugin = status.plugin or name
                self.run_unreserve(state, pod, node_name)
                return status
        return None

    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for _, _, unreserve in reversed(self.reserve):
            if unreserve is not None:
                unreserve(state=state, pod=pod, node_name=node_name)

    def run_permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, dict[str, float]]:
        """kube's ``RunPermitPlugins``: the first rejection or error, else the waits asked (plugin -> seconds)."""
        waits: dict[str, float] = {}
        for name, permit in self.permit:
            status = permit(state=state, pod=pod, node_name=node_name)
            if status is None or status.is_success():
                continue
            if status.code == Code.WAIT:
                waits[name] = status.timeout
                continue
            status.plugin = status.plugin or name
            return status, {}
        return None, waits

    def run_bind(self, state: CycleState, pod: PodInfo, node_name: str,
                 extenders_bind: Callable[[PodInfo, str], Status | None] | None = None) -> Status | None:
        """PreBind, then the first Bind plugin that does not skip, then PostBind; the first failure returns.

        ``extenders_bind`` binds in place of the plugins when it returns a ``Status`` (an extender did).
        """
        for name, pre_bind in self.pre_bind:
            status = pre_bind(state=state, pod=pod, node_name=node_name)
            if status is not None and not status.is_success():
                status.plugin = status.plugin or name
                return status
        by_extender = extenders_bind(pod, node_name) if extenders_bind is not None else None
        if by_extender is not None and not by_extender.is_success():
            return by_extender
        for name, bind in () if by_extender is not None else self.bind:
            status = bind(state=state, pod=pod, node_name=node_name)
            if status is not None and status.is_skip():
                continue
            if status is not None and not status.is_success():
                status.plugin = status.plugin or name
                return status
            break
        else:
            if by_extender is None:
                return Status(Code.ERROR, "no bind plugin bound the pod")
        for _, post_bind in self.post_bind:
            post_bind(state=state, pod=pod, node_name=node_name)
        return None


def _method(instance: Any, hook: str) -> Callable[..., Any] | None:
    """The plugin's implementation of ``hook``, called with keywords; as with pluggy, a plugin may declare
    only the arguments it uses, so those are the ones it gets."""
    method = getattr(instance, hook, None)
    if not callable(method):
        return None
    params = inspect.signature(method).parameters
    wanted = tuple(params)
    if wanted == _spec_args(hook):
        return method  # type: ignore[no-any-return]
    if len(wanted) > 1 and all(p.kind == p.POSITIONAL_OR_KEYWORD for p in params.values()):
        pick = operator.itemgetter(*wanted)  # the arguments picked in C: a call per node batch, many per cycle

        def positional(**kwargs: Any) -> Any:
            return method(*pick(kwargs))

        return positional

    def call(**kwargs: Any) -> Any:
        return method(**{name: kwargs[name] for name in wanted})

    return call


@functools.cache
def _spec_args(hook: str) -> tuple[str, ...]:
    return tuple(inspect.signature(getattr(SchedulerHooks, hook)).parameters)[1:]


def build_framework(profile_name: str, enabled: Mapping[str, Sequence[tuple[str, int]]], args: Mapping[str, Any],
                    registry: Registry, handle: Handle, percentage_of_nodes_to_score: int | None = None) -> Framework:
    """Instantiate a profile's plugins (once each, whatever the number of points) and list their methods.

    ``enabled`` maps an extension point to its ``(name, weight)`` list, as ``profiles.resolve`` gives it;
    ``args`` maps a plugin name to its decoded args.
    """
    fw = Framework(profile_name, percentage_of_nodes_to_score)
    if handle.framework is None:
        handle.framework = fw
    for point in EXTENSION_POINTS:
        for name, _ in enabled.get(point, ()):
            if name not in fw.plugins:
                factory = registry[name].factory
                fw.plugins[name] = factory(args.get(name), handle) if isinstance(factory, type) else factory
    for point, (hook, _) in EXTENSION_POINTS.items():
        for name, weight in enabled.get(point, ()):
            plugin = fw.plugins[name]
            method = _method(plugin, hook)
            if method is None:
                continue
            if point == "queueSort":
                fw.queue_sort = method
            elif point == "score":
                fw.score.append(ScorePlugin(name, method, _method(plugin, "scheduler_normalize_score"), weight))
            elif point == "reserve":
                fw.reserve.append((name, method, _method(plugin, "scheduler_unreserve")))
            else:
                getattr(fw, _FIELDS[point]).append((name, method))
    return fw


_FIELDS = {"preEnqueue": "pre_enqueue",
           "preFilter": "pre_filter", "filter": "filter", "postFilter": "post_filter", "preScore": "pre_score",
           "permit": "permit", "preBind": "pre_bind", "bind": "bind", "postBind": "post_bind"}
