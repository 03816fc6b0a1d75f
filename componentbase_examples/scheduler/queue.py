"""The scheduling queue, kube-scheduler's ``PriorityQueue``: activeQ, backoffQ and the unschedulable pods.

* activeQ pops in the profile's QueueSort order (PrioritySort: priority, then time queued).
* A pod that failed waits out its backoff in backoffQ: ``podInitialBackoffSeconds`` doubled per attempt
  up to ``podMaxBackoffSeconds``; ``pop`` moves pods whose backoff is over into activeQ itself.
* A pod no node fits waits in the unschedulable pods until a cluster event that could help it
  (``move_all_to_active_or_backoff``), or at most 5 minutes (``flush_unschedulable_leftover``).
  An event helps when it is one the rejecting plugins registered (``plugin_events``), as kube does
  without queueing hints; a pod rejected by no known plugin moves on any event.
* An event during a pod's cycle sends that pod to backoffQ rather than to the unschedulable pods, so the
  event is not missed (``moveRequestCycle``).

Pure logic, thread-safe, with an injectable clock; nothing here calls the API.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Mapping

import attrs

from componentbase.util import exponential_delay
from componentbase_examples.scheduler.podinfo import PodInfo

__all__ = [
    "ASSIGNED_POD_ADD",
    "ASSIGNED_POD_UPDATE",
    "NODE_ADD",
    "NODE_DELETE",
    "NODE_UPDATE",
    "POD_DELETE",
    "UNSCHEDULABLE_TIMEOUT",
    "ClusterEvent",
    "QueuedPodInfo",
    "SchedulingQueue",
    "default_plugin_events",
]

#: podMaxInUnschedulablePodsDuration: how long a pod waits for an event before it is retried anyway.
UNSCHEDULABLE_TIMEOUT = 300.0


@attrs.frozen
class ClusterEvent:
    resource: str
    action: str

    def __str__(self) -> str:
        return f"{self.resource}{self.action}"


NODE_ADD = ClusterEvent("Node", "Add")
NODE_UPDATE = ClusterEvent("Node", "Update")
NODE_DELETE = ClusterEvent("Node", "Delete")
POD_DELETE = ClusterEvent("Pod", "Delete")
ASSIGNED_POD_ADD = ClusterEvent("Pod", "Add")
ASSIGNED_POD_UPDATE = ClusterEvent("Pod", "Update")
PVC_ADD = ClusterEvent("PersistentVolumeClaim", "Add")
PVC_UPDATE = ClusterEvent("PersistentVolumeClaim", "Update")
PV_ADD = ClusterEvent("PersistentVolume", "Add")
PV_UPDATE = ClusterEvent("PersistentVolume", "Update")
STORAGE_CLASS_ADD = ClusterEvent("StorageClass", "Add")
STORAGE_CLASS_UPDATE = ClusterEvent("StorageClass", "Update")
CSINODE_ADD = ClusterEvent("CSINode", "Add")
CSINODE_UPDATE = ClusterEvent("CSINode", "Update")
#: An event every plugin is interested in (kube's WildCardEvent, used by the leftover flush).
WILDCARD = ClusterEvent("*", "*")
UNSCHEDULABLE_TIMEOUT_EVENT = ClusterEvent("UnschedulableTimeout", "")


def default_plugin_events() -> dict[str, set[ClusterEvent]]:
    """The events that can make each default plugin change its mind (their ``EventsToRegister``)."""
    node_changes = {NODE_ADD, NODE_UPDATE}
    return {
        "NodeUnschedulable": node_changes,
        "NodeName": {NODE_ADD},
        "TaintToleration": node_changes,
        "NodeAffinity": node_changes,
        "NodePorts": {POD_DELETE, NODE_ADD},
        "NodeResourcesFit": {POD_DELETE, NODE_ADD, NODE_UPDATE, ASSIGNED_POD_UPDATE},
        # A pod's labels or place, or a node's labels, change which domains match and how many pods count.
        "PodTopologySpread": {ASSIGNED_POD_ADD, ASSIGNED_POD_UPDATE, POD_DELETE, NODE_ADD, NODE_UPDATE, NODE_DELETE},
        "InterPodAffinity": {ASSIGNED_POD_ADD, ASSIGNED_POD_UPDATE, POD_DELETE, NODE_ADD, NODE_UPDATE},
        # A claim created, bound or provisioned, a PV or class appearing, a node's labels (PV affinity, zones).
        "VolumeBinding": {PVC_ADD, PVC_UPDATE, PV_ADD, PV_UPDATE, STORAGE_CLASS_ADD, STORAGE_CLASS_UPDATE,
                          NODE_ADD, NODE_UPDATE},
        "VolumeRestrictions": {POD_DELETE, PVC_ADD, NODE_ADD, NODE_UPDATE},
        "VolumeZone": {PVC_ADD, PVC_UPDATE, PV_ADD, PV_UPDATE, STORAGE_CLASS_ADD, NODE_ADD, NODE_UPDATE},
        "NodeVolumeLimits": {POD_DELETE, PVC_ADD, CSINODE_ADD, CSINODE_UPDATE},
    }


@functools.total_ordering
class QueuedPodInfo:
    """A pod in the queue: when it came, how often it was tried, which plugins rejected it last."""

    __slots__ = ("_less", "attempts", "backoff_expiry", "initial_attempt", "pod", "timestamp",
                 "unschedulable_plugins", "unschedulable_since")

    def __init__(self, pod: PodInfo, now: float, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        self.pod = pod
        self.timestamp = now
        self.initial_attempt: float | None = None
        self.attempts = 0
        self.backoff_expiry = 0.0
        self.unschedulable_since = 0.0
        self.unschedulable_plugins: frozenset[str] = frozenset()
        self._less = less

    def __lt__(self, other: QueuedPodInfo) -> bool:
        return self._less(self, other)

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.pod.namespace}/{self.pod.name}, attempts={self.attempts})"


def _priority_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    pa, pb = a.pod.priority, b.pod.priority
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


class SchedulingQueue:
    """activeQ, backoffQ and unschedulable pods behind one lock; ``pop`` blocks until a pod is ready."""

    def __init__(self, *, initial_backoff: float = 1.0, max_backoff: float = 10.0,
                 less: Callable[[QueuedPodInfo, QueuedPodInfo], bool] | None = None,
                 plugin_events: Mapping[str, Iterable[ClusterEvent]] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.less = less or _priority_less
        self.plugin_events = {k: set(v) for k, v in (plugin_events or default_plugin_events()).items()}
        self.clock = clock
        self._cond = threading.Condition()
        self._active: list[QueuedPodInfo] = []  # heap by ``less``
        self._backoff: list[tuple[float, int, QueuedPodInfo]] = []  # heap by expiry
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._where: dict[str, str] = {}  # key -> "active" | "backoff" | "unschedulable" | "flight"
        self._info: dict[str, QueuedPodInfo] = {}
        self._seq = itertools.count()
        self.scheduling_cycle = 0
        self._move_request_cycle = -1
        self._closed = False

    # what the informers call

    def add(self, pod: PodInfo) -> None:
        """A new pending pod goes straight to activeQ."""
        with self._cond:
            if pod.key in self._where:
                self._update_locked(pod)
                return
            self._push_active(QueuedPodInfo(pod, self.clock(), self.less))

    def update(self, pod: PodInfo) -> None:
        """A pending pod changed: updated where it is; if it was parked unschedulable, it gets another try."""
        with self._cond:
            if pod.key not in self._where:
                self._push_active(QueuedPodInfo(pod, self.clock(), self.less))
            else:
                self._update_locked(pod)

    def delete(self, key: str) -> None:
        with self._cond:
            where = self._where.pop(key, None)
            qp = self._info.pop(key, None)
            if qp is None:
                return
            if where == "active":
                self._active.remove(qp)
                heapq.heapify(self._active)
            elif where == "backoff":
                self._backoff = [e for e in self._backoff if e[2] is not qp]
                heapq.heapify(self._backoff)
            elif where == "unschedulable":
                del self._unschedulable[key]

    def assigned_pod_added(self, pod: PodInfo) -> None:
        """A pod got a node: retry the pods its arrival can help (pod affinity and topology spread wait for one)."""
        self.move_all_to_active_or_backoff(ASSIGNED_POD_ADD)

    def move_all_to_active_or_backoff(self, event: ClusterEvent) -> int:
        """Move the unschedulable pods ``event`` may help to activeQ (backoffQ while backing off)."""
        with self._cond:
            now = self.clock()
            moved = [qp for qp in self._unschedulable.values() if self._interested(qp, event)]
            for qp in moved:
                del self._unschedulable[qp.pod.key]
                self._requeue(qp, now)
            self._move_request_cycle = self.scheduling_cycle
            return len(moved)

    # what the scheduling loop calls

    def pop(self, timeout: float | None = None) -> QueuedPodInfo | None:
        """The next pod to schedule, waiting up to ``timeout`` seconds (``None``: until one comes or close)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                self._flush_backoff_completed_locked()
                if self._active:
                    qp = heapq.heappop(self._active)
                    self._where[qp.pod.key] = "flight"
                    qp.attempts += 1
                    if qp.initial_attempt is None:
                        qp.initial_attempt = self.clock()
                    self.scheduling_cycle += 1
                    return qp
                if self._closed:
                    return None
                wait = self._next_backoff_wait()
                if deadline is not None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return None
                    wait = remaining if wait is None else min(wait, remaining)
                self._cond.wait(wait)

    def add_unschedulable_if_not_present(self, qp: QueuedPodInfo, pod_scheduling_cycle: int,
                                         unschedulable_plugins: Iterable[str] = (), error: bool = False) -> None:
        """After a failed cycle: to backoffQ if it errored or an event came meanwhile, else park it."""
        with self._cond:
            key = qp.pod.key
            if self._where.get(key) != "flight":
                return  # deleted, or re-added by an update while in flight
            now = self.clock()
            qp.unschedulable_plugins = frozenset(unschedulable_plugins)
            qp.backoff_expiry = now + self.backoff_duration(qp)
            if error or self._move_request_cycle >= pod_scheduling_cycle:
                self._push_backoff(qp)
            else:
                qp.unschedulable_since = now
                self._unschedulable[key] = qp
                self._where[key] = "unschedulable"

    def done(self, key: str) -> None:
        """The pod's cycle is over (scheduled and bound, or handed back): forget it if it is still in flight."""
        with self._cond:
            if self._where.get(key) == "flight":
                del self._where[key]
                self._info.pop(key, None)

    def flush_unschedulable_leftover(self) -> int:
        """Retry the pods parked longer than ``UNSCHEDULABLE_TIMEOUT`` (kube runs this every 30 s)."""
        with self._cond:
            now = self.clock()
            stale = [qp for qp in self._unschedulable.values() if now - qp.unschedulable_since > UNSCHEDULABLE_TIMEOUT]
            for qp in stale:
                del self._unschedulable[qp.pod.key]
                self._requeue(qp, now)
            return len(stale)

    def flush_backoff_completed(self) -> int:
        with self._cond:
            return self._flush_backoff_completed_locked()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def backoff_duration(self, qp: QueuedPodInfo) -> float:
        """``initial * 2^(attempts-1)``, at most ``max`` (kube-scheduler's ``calculateBackoffDuration``)."""
        return exponential_delay(self.initial_backoff, qp.attempts - 1, self.max_backoff)

    def lengths(self) -> tuple[int, int, int]:
        """``(active, backoff, unschedulable)``, for metrics and tests."""
        with self._cond:
            return len(self._active), len(self._backoff), len(self._unschedulable)

    def pending(self) -> dict[str, str]:
        """Where each queued pod is, by key."""
        with self._cond:
            return {k: v for k, v in self._where.items() if v != "flight"}

    # internals

    def _interested(self, qp: QueuedPodInfo, event: ClusterEvent) -> bool:
        if event == WILDCARD or not qp.unschedulable_plugins:
            return True
        for name in qp.unschedulable_plugins:
            events = self.plugin_events.get(name)
            if events is None or event in events or WILDCARD in events:
                return True
        return False

    def _requeue(self, qp: QueuedPodInfo, now: float) -> None:
        if qp.backoff_expiry > now:
            self._push_backoff(qp)
        else:
            self._push_active(qp)

    def _push_active(self, qp: QueuedPodInfo) -> None:
        heapq.heappush(self._active, qp)
        self._where[qp.pod.key] = "active"
        self._info[qp.pod.key] = qp
        self._cond.notify()

    def _push_backoff(self, qp: QueuedPodInfo) -> None:
        heapq.heappush(self._backoff, (qp.backoff_expiry, next(self._seq), qp))
        self._where[qp.pod.key] = "backoff"
        self._info[qp.pod.key] = qp
        self._cond.notify()

    def _flush_backoff_completed_locked(self) -> int:
        now = self.clock()
        moved = 0
        while self._backoff and self._backoff[0][0] <= now:
            _, _, qp = heapq.heappop(self._backoff)
            self._push_active(qp)
            moved += 1
        return moved

    def _next_backoff_wait(self) -> float | None:
        if not self._backoff:
            return None
        return max(self._backoff[0][0] - self.clock(), 0.001)

    def _update_locked(self, pod: PodInfo) -> None:
        key = pod.key
        qp = self._info.get(key)
        where = self._where.get(key)
        if qp is None or where == "flight":
            if where == "flight":
                # changed during its cycle: queue the new version; the cycle's outcome is dropped
                del self._where[key]
                self._push_active(QueuedPodInfo(pod, self.clock(), self.less))
            return
        qp.pod = pod
        if where == "active":
            heapq.heapify(self._active)
        elif where == "unschedulable":
            del self._unschedulable[key]
            self._requeue(qp, self.clock())
