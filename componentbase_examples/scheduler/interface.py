"""The scheduling framework's contract with plugins, kube's ``framework/interface.go``: one pluggy hook per
extension point, and the verdicts (``Status``, ``Code``, ``PreFilterResult``) a plugin returns.

A plugin module needs only these names; ``framework`` re-exports them beside the runtime that calls them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs

import componentbase
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

__all__ = [
    "ENTRY_POINT_GROUP",
    "EXTENSION_POINTS",
    "MAX_NODE_SCORE",
    "SKIP",
    "SKIPPED_FILTERS",
    "Code",
    "CycleState",
    "NodeToStatus",
    "PluginError",
    "PostFilterResult",
    "PreFilterResult",
    "SchedulerHooks",
    "StateNotFound",
    "Status",
]

MAX_NODE_SCORE = 100

#: The entry point group through which a package adds scheduler plugins.
ENTRY_POINT_GROUP = "componentbase.scheduler.plugins"

class PluginError(Exception):
    """A plugin failed (kube's ``Error`` status from Score, which returns scores here): the attempt fails with
    its message, without a traceback."""


class StateNotFound(PluginError):
    """A plugin read what an earlier extension point of its own did not write (that point is disabled in
    the profile): kube's "not found" cycle-state error, which fails the attempt without a traceback."""


class CycleState(dict[str, Any]):
    """Per-cycle scratch space shared by a profile's plugins; each keys its data by its own name."""

    def __missing__(self, key: str) -> Any:
        raise StateNotFound(f'reading "{key}" from cycleState: not found')
#: The key under which the cycle's state holds the names of the plugins whose Filter PreFilter skipped.
SKIPPED_FILTERS = "framework/skippedFilters"


class Code(enum.IntEnum):
    """A ``Status`` code, kube's ``framework.Code``: the scheduler retries, skips or reports by it."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5


class Status:
    """A plugin's verdict, kube's ``framework.Status``: a code and the reasons shown to users."""

    __slots__ = ("code", "plugin", "reasons", "timeout")

    def __init__(self, code: Code, *reasons: str, plugin: str = "", timeout: float = 0.0) -> None:
        self.code = code
        self.reasons = reasons
        self.plugin = plugin
        self.timeout = timeout  # a Permit plugin's WAIT: how long it may take to allow the pod, in seconds

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


class NodeToStatus(dict[str, "Status"]):
    """Filter's verdict per rejected node; ``absent`` is that of the nodes not listed (PreFilter left them out)."""

    def __init__(self, statuses: Mapping[str, Status] | None = None, absent: Status | None = None) -> None:
        super().__init__(statuses or {})
        self.absent = absent

    def status_of(self, node_name: str) -> Status | None:
        return self.get(node_name, self.absent)


@attrs.frozen
class PostFilterResult:
    """What a PostFilter plugin decided: its ``Status`` and the node the pod is nominated to (``""`` clears
    the nomination, ``None`` leaves it as it is), kube's ``PostFilterResult``."""

    status: Status
    nominated_node_name: str | None = None


class SchedulerHooks:
    """The extension points. Batch hooks get ``nodes`` (a list of ``NodeInfo``) and must keep their order."""

    @componentbase.hookspec
    def scheduler_pre_enqueue(self, pod: PodInfo) -> Status | None:
        """PreEnqueue: ``None`` lets the pod into the active queue; any other verdict keeps it parked until
        an event this plugin registered lets it in (scheduling gates)."""

    @componentbase.hookspec
    def scheduler_events_to_register(self) -> list[Any]:  # type: ignore[empty-body]
        """EnqueueExtensions: the ``events.ClusterEventWithHint`` list of cluster events that can make a pod
        this plugin rejected schedulable. A plugin without it is retried on every event, as in kube."""

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
    def scheduler_post_filter(self, state: CycleState, pod: PodInfo, statuses: NodeToStatus) -> Any:
        """After the pod fit nowhere (preemption's place): a ``Status`` or a ``PostFilterResult``; a rejection's
        message joins the FitError, a success ends PostFilter."""

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
        """Allow (``None``), reject, or hold the binding after Reserve: ``Status(Code.WAIT, timeout=seconds)``
        waits until the plugin allows it through ``handle.waiting_pods`` (see ``waitingpods``)."""

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
    "preEnqueue": ("scheduler_pre_enqueue", "PreEnqueuePlugin"),
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
