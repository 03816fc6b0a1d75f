"""The scheduling queue, kube-scheduler's ``PriorityQueue`` with queueing hints: activeQ, backoffQ, parked pods.

* activeQ pops in the profile's QueueSort order (PrioritySort: priority, then time queued). A pod enters it
  only past the profile's PreEnqueue plugins; one they hold (scheduling gates) is parked, ``gated``.
* A pod that failed backs off ``podInitialBackoffSeconds`` doubled per attempt up to ``podMaxBackoffSeconds``,
  counted from the failure, until the next whole second (kube's one-second ordering windows).
  When activeQ is empty, ``pop`` takes the next pod rejected by plugins from backoffQ at once, as kube's
  SchedulerPopFromBackoffQ does; pods that failed with an error always wait their backoff out.
* A pod the plugins rejected is parked until a cluster event whose queueing hint, from one of the plugins
  that rejected it, says the change can help (``queueing.QueueingHints``), or for at most
  ``podMaxInUnschedulablePodsDuration`` (``flush_unschedulable_leftover``).
* Events that arrive while pods are being scheduled are kept and, if a pod then fails, asked about it:
  a change that came mid-cycle is not missed (kube's in-flight events).

Pure logic, thread-safe, with an injectable clock; nothing here calls the API.
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from componentbase.util import exponential_delay
from componentbase_examples.scheduler.events import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    ClusterEvent,
    pod_events,
)
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.queueing import (
    InFlightEvents,
    QueuedPodInfo,
    QueueingHints,
    Strategy,
    priority_less,
)

__all__ = ["UNSCHEDULABLE_TIMEOUT", "QueuedPodInfo", "SchedulingQueue"]

#: podMaxInUnschedulablePodsDuration: how long a pod waits for an event before it is retried anyway.
UNSCHEDULABLE_TIMEOUT = 300.0
#: The event of a pod whose backoff ended (kube's ``framework.BackoffComplete``).
BACKOFF_COMPLETE = "BackoffComplete"
ACTIVE, BACKOFF, UNSCHEDULABLE, FLIGHT = "active", "backoff", "unschedulable", "flight"


class SchedulingQueue:
    """activeQ, backoffQ and parked pods behind one lock; ``pop`` blocks until a pod is ready."""

    def __init__(self, *, initial_backoff: float = 1.0, max_backoff: float = 10.0,
                 less: Callable[[QueuedPodInfo, QueuedPodInfo], bool] | None = None,
                 hints: QueueingHints | None = None, max_in_unschedulable: float = UNSCHEDULABLE_TIMEOUT,
                 clock: Callable[[], float] = time.monotonic,
                 incoming: Callable[[str, str], None] | None = None) -> None:
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.less = less or priority_less
        self.hints = hints or QueueingHints()
        self.max_in_unschedulable = max_in_unschedulable
        self.clock = clock
        #: ``incoming(queue, event)`` for each pod entering a queue (``scheduler_queue_incoming_pods_total``).
        self.incoming = incoming or (lambda queue, event: None)
        self._cond = threading.Condition()
        self._active: list[QueuedPodInfo] = []  # heap by ``less``
        self._backoff: list[tuple[float, int, QueuedPodInfo]] = []  # rejected pods: heap by (expiry, order)
        self._error_backoff: list[tuple[float, int, QueuedPodInfo]] = []  # pods that failed with an error
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._where: dict[str, str] = {}
        self._info: dict[str, QueuedPodInfo] = {}
        self._seq = itertools.count()
        self.scheduling_cycle = 0
        self._in_flight = InFlightEvents()
        self._closed = False

    # what the informers call

    def add(self, pod: PodInfo) -> None:
        """A new pending pod: to activeQ, unless a PreEnqueue plugin holds it."""
        with self._cond:
            if pod.key in self._where:
                self._update_locked(pod, None)
            else:
                self._move_to_active(QueuedPodInfo(pod, self.clock(), self.less), "PodAdd")

    def update(self, pod: PodInfo, old: Any = None) -> None:
        """A pending pod changed (``old``: its previous object): updated where it is; a parked one is
        retried if a hint of a plugin that rejected it says this change can help (gates removed...)."""
        with self._cond:
            if pod.key not in self._where:
                self._move_to_active(QueuedPodInfo(pod, self.clock(), self.less), "PodUpdate")
            else:
                self._update_locked(pod, old)

    def delete(self, key: str) -> None:
        with self._cond:
            where = self._where.pop(key, None)
            qp = self._info.pop(key, None)
            if qp is None:
                return
            if where == ACTIVE:
                self._active.remove(qp)
                heapq.heapify(self._active)
            elif where == BACKOFF:
                self._remove_backoff(qp)
            elif where == UNSCHEDULABLE:
                del self._unschedulable[key]

    def assigned_pod_added(self, pod: PodInfo) -> None:
        """A pod got a node: retry the pods its arrival can help (pod affinity and topology spread wait for one)."""
        self.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_ADD, None, pod.pod)

    def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any = None, new: Any = None, *,
                                      exclude: str = "") -> int:
        """Move the parked pods ``event`` can help (but the one keyed ``exclude``), by their rejectors' hints;
        keep the event for pods in flight."""
        with self._cond:
            if not self.hints.of_interest(event):
                return 0
            moved = self._move([qp for qp in self._unschedulable.values() if qp.pod.key != exclude], event, old, new)
            self._in_flight.add(event, old, new)
            return moved

    # what the scheduling loop calls

    def pop(self, timeout: float | None = None) -> QueuedPodInfo | None:
        """The next pod to schedule, waiting up to ``timeout`` seconds (``None``: until one comes or close)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                self._flush_backoff_completed_locked()
                qp = heapq.heappop(self._active) if self._active else self._pop_backoff()
                if qp is not None:
                    key = qp.pod.key
                    self._where[key] = FLIGHT
                    self._info[key] = qp
                    qp.attempts += 1
                    qp.backoff_expiry = None
                    self.scheduling_cycle += 1
                    self._in_flight.popped(key)
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

    def add_unschedulable_if_not_present(self, qp: QueuedPodInfo, pod_scheduling_cycle: int = 0,
                                         unschedulable_plugins: Iterable[str] = (), error: bool = False) -> None:
        """After a failed cycle: parked if the plugins rejected it and nothing that came meanwhile helps;
        to backoffQ if such an event came, or if it failed with an error (``error``: plugins ignored)."""
        with self._cond:
            key = qp.pod.key
            if self._where.get(key) != FLIGHT:
                return  # deleted meanwhile
            plugins = frozenset() if error else frozenset(unschedulable_plugins)
            qp.unschedulable_plugins = plugins
            if plugins:
                qp.unschedulable_count += 1
                qp.consecutive_errors = 0
            else:
                qp.consecutive_errors += 1
            qp.timestamp = self.clock()
            qp.backoff_expiry = None
            strategy = self._in_flight_strategy(qp)
            del self._where[key]
            self._requeue(qp, strategy, "ScheduleAttemptFailure")
            self._in_flight.done(key)

    def done(self, key: str) -> None:
        """The pod's cycle is over (scheduled and bound, or handed back): forget it if it is still in flight."""
        with self._cond:
            if self._where.get(key) == FLIGHT:
                del self._where[key]
                self._info.pop(key, None)
            self._in_flight.done(key)

    def flush_unschedulable_leftover(self) -> int:
        """Retry the pods parked longer than ``max_in_unschedulable`` (kube runs this every 30 s)."""
        with self._cond:
            now = self.clock()
            stale = [qp for qp in self._unschedulable.values() if now - qp.timestamp > self.max_in_unschedulable]
            return self._move(stale, EVENT_UNSCHEDULABLE_TIMEOUT, None, None)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def backoff_duration(self, qp: QueuedPodInfo) -> float:
        """``initial * 2^(attempts-1)``, at most ``max`` (kube-scheduler's ``calculateBackoffDuration``)."""
        if qp.attempts == 0:
            return 0.0
        return exponential_delay(self.initial_backoff, qp.attempts - 1, self.max_backoff)

    def lengths(self) -> tuple[int, int, int]:
        """``(active, backoff, unschedulable)``, gated pods counted as unschedulable, for tests."""
        with self._cond:
            return len(self._active), len(self._backoff) + len(self._error_backoff), len(self._unschedulable)

    def pending_counts(self) -> dict[str, int]:
        """kube's ``scheduler_pending_pods`` by queue: active, backoff, unschedulable and gated."""
        with self._cond:
            gated = sum(1 for qp in self._unschedulable.values() if qp.gated())
            return {"active": len(self._active), "backoff": len(self._backoff) + len(self._error_backoff),
                    "unschedulable": len(self._unschedulable) - gated, "gated": gated}

    def pending(self) -> dict[str, str]:
        """Where each queued pod is, by key (a gated pod is ``unschedulable``)."""
        with self._cond:
            return {k: v for k, v in self._where.items() if v != FLIGHT}

    # internals (the lock is held)

    def _move(self, pods: list[QueuedPodInfo], event: ClusterEvent, old: Any, new: Any) -> int:
        """kube's ``movePodsToActiveOrBackoffQueue``: each parked pod the event can help leaves the parking."""
        moved = 0
        for qp in pods:
            if qp.gated() and not any(e.matches(event) for e in qp.gating_events):
                continue  # only its gate's events can let it in
            strategy = self.hints.worth_requeuing(qp.pod, qp.unschedulable_plugins, event, old, new)
            if strategy is Strategy.SKIP:
                continue
            del self._unschedulable[qp.pod.key]
            del self._where[qp.pod.key]
            moved += self._requeue(qp, strategy, event.label) != UNSCHEDULABLE
        return moved

    def _in_flight_strategy(self, qp: QueuedPodInfo) -> Strategy:
        """Whether an event that came while ``qp`` was scheduled can help it (kube's
        ``determineSchedulingHintForInFlightPod``)."""
        if not qp.unschedulable_plugins:
            return Strategy.AFTER_BACKOFF
        for event, old, new in self._in_flight.since(qp.pod.key):
            if self.hints.worth_requeuing(qp.pod, qp.unschedulable_plugins, event, old, new) is not Strategy.SKIP:
                return Strategy.AFTER_BACKOFF
        return Strategy.SKIP

    def _requeue(self, qp: QueuedPodInfo, strategy: Strategy, event: str) -> str:
        """Park, back off or activate ``qp`` (not in any queue now); returns where it went."""
        if strategy is Strategy.SKIP:
            self._park(qp, event)
            return UNSCHEDULABLE
        if self._backing_off(qp):
            return BACKOFF if self._move_to_backoff(qp, event) else UNSCHEDULABLE
        return ACTIVE if self._move_to_active(qp, event) else UNSCHEDULABLE

    def _park(self, qp: QueuedPodInfo, event: str) -> None:
        if event and qp.pod.key not in self._unschedulable:
            self.incoming("unschedulable", event)
        self._unschedulable[qp.pod.key] = qp
        self._where[qp.pod.key] = UNSCHEDULABLE
        self._info[qp.pod.key] = qp

    def _run_pre_enqueue(self, qp: QueuedPodInfo) -> None:
        """kube's ``runPreEnqueuePlugins``: the gating plugin first; the first refusal gates the pod."""
        plugins = self.hints.pre_enqueue(qp.pod)
        if not plugins:
            qp.gating_plugin = ""
            return
        ordered = sorted(plugins, key=lambda p: p[0] != qp.gating_plugin)
        for name, pre_enqueue in ordered:
            status = pre_enqueue(pod=qp.pod)
            if status is not None and not status.is_success():
                qp.unschedulable_plugins = qp.unschedulable_plugins | {name}
                qp.gating_plugin = name
                qp.gating_events = self.hints.events_of(qp.pod, name)
                return
        qp.gating_plugin = ""
        qp.gating_events = ()

    def _gated(self, qp: QueuedPodInfo, event: str) -> bool:
        """Run PreEnqueue; a pod it holds is parked (unless it is queued already)."""
        self._run_pre_enqueue(qp)
        if qp.gated() and qp.pod.key not in self._where:
            self._park(qp, event)
        return qp.gated()

    def _move_to_active(self, qp: QueuedPodInfo, event: str) -> bool:
        # PreEnqueue ran when the pod entered backoffQ: not again when it leaves (kube's BackoffComplete)
        if event != BACKOFF_COMPLETE and self._gated(qp, event):
            return False
        if qp.initial_attempt is None:
            qp.initial_attempt = self.clock()
        heapq.heappush(self._active, qp)
        self._where[qp.pod.key] = ACTIVE
        self._info[qp.pod.key] = qp
        self.incoming("active", event)
        self._cond.notify()
        return True

    def _move_to_backoff(self, qp: QueuedPodInfo, event: str) -> bool:
        if self._gated(qp, event):  # PreEnqueue runs on entering backoffQ, not again on leaving it
            return False
        heap = self._backoff if qp.unschedulable_plugins else self._error_backoff
        heapq.heappush(heap, (self._expiry(qp), next(self._seq), qp))
        self._where[qp.pod.key] = BACKOFF
        self._info[qp.pod.key] = qp
        if event:
            self.incoming("backoff", event)
        self._cond.notify()
        return True

    def _remove_backoff(self, qp: QueuedPodInfo) -> None:
        for name in ("_backoff", "_error_backoff"):
            heap = getattr(self, name)
            if any(e[2] is qp for e in heap):
                setattr(self, name, [e for e in heap if e[2] is not qp])
                heapq.heapify(getattr(self, name))

    def _expiry(self, qp: QueuedPodInfo) -> float:
        """The whole second the backoff ends in (kube aligns it to one-second windows)."""
        if qp.backoff_expiry is None:
            qp.backoff_expiry = float(math.floor(qp.timestamp + self.backoff_duration(qp)))
        return qp.backoff_expiry

    def _backing_off(self, qp: QueuedPodInfo) -> bool:
        return qp.attempts > 0 and self._expiry(qp) >= math.floor(self.clock())

    def _pop_backoff(self) -> QueuedPodInfo | None:
        """activeQ is empty: the next pod rejected by plugins, its backoff cut short (PopFromBackoffQ)."""
        if not self._backoff:
            return None
        return heapq.heappop(self._backoff)[2]

    def _flush_backoff_completed_locked(self) -> int:
        window = math.floor(self.clock())
        moved = 0
        for heap in (self._backoff, self._error_backoff):
            while heap and heap[0][0] < window:
                _, _, qp = heapq.heappop(heap)
                del self._where[qp.pod.key]
                moved += self._move_to_active(qp, BACKOFF_COMPLETE)
        return moved

    def _next_backoff_wait(self) -> float | None:
        heads = [heap[0][0] for heap in (self._backoff, self._error_backoff) if heap]
        if not heads:
            return None
        return max(min(heads) + 1 - self.clock(), 0.001)

    def _update_locked(self, pod: PodInfo, old: Any) -> None:
        key = pod.key
        qp = self._info.get(key)
        where = self._where.get(key)
        events = pod_events(old, pod.pod) if old is not None else []
        if qp is None or where == FLIGHT:
            # Being scheduled: the change is kept for when it fails (kube's addEventsIfPodInFlight).
            for event in events:
                self._in_flight.add(event, old, pod.pod)
            return
        qp.pod = pod
        if where == ACTIVE:
            heapq.heapify(self._active)
        elif where == BACKOFF:
            self._remove_backoff(qp)
            del self._where[key]
            self._move_to_backoff(qp, "")  # updated where it waits: not an incoming pod (kube counts none)
        elif where == UNSCHEDULABLE:
            for event in events:
                strategy = self.hints.worth_requeuing(pod, qp.unschedulable_plugins, event, old, pod.pod)
                if strategy is Strategy.SKIP:
                    continue
                del self._unschedulable[key]
                del self._where[key]
                if self._requeue(qp, strategy, event.label) != UNSCHEDULABLE:
                    break
