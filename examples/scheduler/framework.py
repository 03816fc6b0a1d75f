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
"""

from __future__ import annotations

import enum
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
import pluggy

import componentbase
from componentbase import field
from examples.scheduler.podinfo import PodInfo
from examples.scheduler.snapshot import NodeInfo, Snapshot

__all__ = [
    "ENTRY_POINT_GROUP",
    "EXTENSION_POINTS",
    "MAX_NODE_SCORE",
    "Code",
    "CycleState",
    "Framework",
    "Handle",
    "Plugin",
    "PluginEntry",
    "PreFilterResult",
    "Registry",
    "SchedulerHooks",
    "Status",
]

ENTRY_POINT_GROUP = "componentbase.scheduler.plugins"
MAX_NODE_SCORE = 100

#: Per-cycle scratch space shared by a profile's plugins; each keys its data by its own name.
CycleState = dict[str, Any]


class Code(enum.IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5


class Status:
    """A plugin's verdict, kube's ``framework.Status``: a code and the reasons shown to users."""

    __slots__ = ("code", "plugin", "reasons")

    def __init__(self, code: Code, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons = reasons
        self.plugin = plugin

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def __repr__(self) -> str:
        return f"Status({self.code.name}, {self.message()!r}, plugin={self.plugin!r})"


SKIP = Status(Code.SKIP)


@attrs.frozen
class PreFilterResult:
    """PreFilter narrowing the nodes worth filtering (``None`` node names: all of them)."""

    node_names: frozenset[str] | None = None


class SchedulerHooks:
    """The extension points. Batch hooks get ``nodes`` (a list of ``NodeInfo``) and must keep their order."""

    @componentbase.hookspec
    def scheduler_less(self, a: Any, b: Any) -> bool:  # type: ignore[empty-body]
        """QueueSort: whether queued pod ``a`` pops before ``b``."""

    @componentbase.hookspec
    def scheduler_pre_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> Any:
        """Prepare Filter; return ``None``, a ``Status`` (``SKIP`` skips this plugin's Filter, a rejection
        fails the pod on every node) or a ``PreFilterResult``."""

    @componentbase.hookspec
    def scheduler_filter(  # type: ignore[empty-body]
        self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], rejected: dict[str, Status],
    ) -> list[NodeInfo]:
        """Return the nodes that fit, in order; record each other node's ``Status`` in ``rejected[name]``."""

    @componentbase.hookspec
    def scheduler_post_filter(self, state: CycleState, pod: PodInfo, statuses: Mapping[str, Status]) -> Any:
        """After the pod fit nowhere (preemption's place); a ``Status`` message joins the FitError."""

    @componentbase.hookspec
    def scheduler_pre_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        """Prepare Score; ``SKIP`` leaves this plugin out of scoring for the pod."""

    @componentbase.hookspec
    def scheduler_score(  # type: ignore[empty-body]
        self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
    ) -> list[int]:
        """One score per node, in order; within 0..100 unless ``scheduler_normalize_score`` maps them there."""

    @componentbase.hookspec
    def scheduler_normalize_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
                                  scores: list[int]) -> None:
        """Rescale this plugin's ``scores`` in place to 0..100."""

    @componentbase.hookspec
    def scheduler_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """The pod is assumed on ``node_name``: claim what the plugin tracks."""

    @componentbase.hookspec
    def scheduler_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Undo ``scheduler_reserve`` (a later step failed)."""

    @componentbase.hookspec
    def scheduler_permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Allow (``None``) or reject the binding after Reserve; waiting (``WAIT``) is not supported here."""

    @componentbase.hookspec
    def scheduler_pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Before binding (volumes and the like)."""

    @componentbase.hookspec
    def scheduler_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Bind the pod; ``SKIP`` hands it to the next bind plugin."""

    @componentbase.hookspec
    def scheduler_post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """After a successful bind (informational)."""


#: Config extension point -> (hook, kube's plugin interface name, used in messages).
EXTENSION_POINTS: dict[str, tuple[str, str]] = {
    "queueSort": ("scheduler_less", "QueueSortPlugin"),
    "preFilter": ("scheduler_pre_filter", "PreFilterPlugin"),
    "filter": ("scheduler_filter", "FilterPlugin"),
    "postFilter": ("scheduler_post_filter", "PostFilterPlugin"),
    "preScore": ("scheduler_pre_score", "PreScorePlugin"),
    "score": ("scheduler_score", "ScorePlugin"),
    "reserve": ("scheduler_reserve", "ReservePlugin"),
    "permit": ("scheduler_permit", "PermitPlugin"),
    "preBind": ("scheduler_pre_bind", "PreBindPlugin"),
    "bind": ("scheduler_bind", "BindPlugin"),
    "postBind": ("scheduler_post_bind", "PostBindPlugin"),
}
_COMPANION_HOOKS = ("scheduler_normalize_score", "scheduler_unreserve")

#: Binds a pod to a node through the API; the scheduler's wiring provides it, a simulation records it.
Binder = Callable[[PodInfo, str], None]


@attrs.define
class Handle:
    """What a plugin may use of the scheduler, kube's ``framework.Handle``."""

    snapshot: Snapshot
    profile_name: str = ""
    binder: Binder | None = None


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
        if kind is not None and kind != f"{self.name}Args":
            errs.append(field.invalid(path.child("kind"), kind, f'must be "{self.name}Args"'))
        cls = self.args_type
        if cls is None:
            errs += [field.invalid(path.child(k), v, f"plugin {self.name} takes no args") for k, v in body.items()]
            return None, errs
        try:
            decoded: Any = componentbase.componentconfig.structure(body, cls, str(path))
        except componentbase.DecodeError as e:
            return None, [*errs, *(err for err in e.errors if isinstance(err, Exception))]
        validate = getattr(decoded, "validate", None)
        if validate is not None:
            errs += validate(path)
        return decoded, errs


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


def new_plugin_manager(plugins: Iterable[object] = (), entry_point_group: str | None = ENTRY_POINT_GROUP,
                       with_defaults: bool = True) -> pluggy.PluginManager:
    """A manager with the scheduler's hooks, the default plugins, ``plugins``, then entry-point plugins."""
    from examples.scheduler.plugins import DEFAULT_PLUGINS

    chosen = [*DEFAULT_PLUGINS, *plugins] if with_defaults else list(plugins)
    return componentbase.util.new_plugin_manager([SchedulerHooks], chosen, entry_point_group)


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

    def run_permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Every Permit plugin must allow; the first other answer is returned (``WAIT`` becomes an error)."""
        for name, permit in self.permit:
            status = permit(state=state, pod=pod, node_name=node_name)
            if status is None or status.is_success():
                continue
            if status.code == Code.WAIT:
                status = Status(Code.ERROR, "waiting on permit is not supported by this scheduler")
            status.plugin = status.plugin or name
            return status
        return None

    def run_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """PreBind, then the first Bind plugin that does not skip, then PostBind; the first failure returns."""
        for name, pre_bind in self.pre_bind:
            status = pre_bind(state=state, pod=pod, node_name=node_name)
            if status is not None and not status.is_success():
                status.plugin = status.plugin or name
                return status
        for name, bind in self.bind:
            status = bind(state=state, pod=pod, node_name=node_name)
            if status is not None and status.is_skip():
                continue
            if status is not None and not status.is_success():
                status.plugin = status.plugin or name
                return status
            break
        else:
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
    wanted = tuple(inspect.signature(method).parameters)
    if wanted == _spec_args(hook):
        return method  # type: ignore[no-any-return]

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


_FIELDS = {"preFilter": "pre_filter", "filter": "filter", "postFilter": "post_filter", "preScore": "pre_score",
           "permit": "permit", "preBind": "pre_bind", "bind": "bind", "postBind": "post_bind"}
