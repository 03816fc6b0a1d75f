"""Pods a Permit plugin made wait, kube's ``waitingPodsMap``: the gang-scheduling hook of the framework.

A Permit plugin answers ``Status(Code.WAIT, timeout=seconds)``; once every Permit plugin allowed or asked to
wait, the pod is assumed on its node and waits here without holding a binder thread (kube's binding
goroutines are unbounded; ours are ``parallelism`` threads, and a gang larger than that would deadlock).
Another pod's cycle, or any plugin code, reaches it through ``handle.waiting_pods``: ``allow(plugin)`` by
every plugin it waits on starts its binding, ``reject(plugin, message)`` sends it back to the queue. A wait
that runs out rejects it with kube's ``rejected due to timeout after waiting 10s at plugin NAME``; a wait
is never longer than 15 minutes (kube's ``maxTimeout``).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator

from componentbase import workqueue
from componentbase.util import format_duration
from componentbase_examples.scheduler.interface import Code, Status
from componentbase_examples.scheduler.podinfo import PodInfo

__all__ = ["MAX_WAIT", "WaitingPod", "WaitingPods"]

#: kube's ``maxTimeout``: a longer wait asked by a plugin is cut to this.
MAX_WAIT = 15 * 60.0

#: Called once with the outcome: ``None`` (every plugin allowed) or the rejection.
Outcome = Callable[[Status | None], None]

_serials = itertools.count()


class WaitingPod:
    """One pod waiting at Permit: the plugins it still waits on, and how long each may take."""

    def __init__(self, pod: PodInfo, waits: dict[str, float], outcome: Outcome) -> None:
        self.pod = pod
        self.serial = next(_serials)  # a pod waits anew on each attempt: its old timers must not reject it
        self.waits = {name: min(max(timeout, 0.0), MAX_WAIT) for name, timeout in waits.items()}
        self._pending = set(self.waits)
        self._outcome: Outcome | None = outcome
        self._lock = threading.Lock()

    @property
    def uid(self) -> str:
        return str((self.pod.pod.get("metadata") or {}).get("uid") or self.pod.key)

    def pending_plugins(self) -> list[str]:
        """The plugins that have not allowed the pod yet."""
        with self._lock:
            return sorted(self._pending)

    def allow(self, plugin: str) -> None:
        """``plugin`` lets the pod bind; the last of its plugins to do so starts the binding."""
        with self._lock:
            self._pending.discard(plugin)
            outcome = self._take() if not self._pending else None
        if outcome is not None:
            outcome(None)

    def reject(self, plugin: str, message: str) -> None:
        """The pod goes back to the queue, unschedulable for ``message`` (a no-op once it was decided)."""
        with self._lock:
            outcome = self._take()
        if outcome is not None:
            outcome(Status(Code.UNSCHEDULABLE, message, plugin=plugin))

    def _take(self) -> Outcome | None:
        outcome, self._outcome = self._outcome, None
        return outcome


class WaitingPods:
    """The waiting pods of one scheduler (shared by its profiles, as kube's), by pod UID.

    ``run_timeouts`` is the leader's runnable that rejects pods whose waits ran out.
    """

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}
        self._lock = threading.Lock()
        self._timers: workqueue.WorkQueue[tuple[str, str, int]] | None = None

    def add(self, pod: PodInfo, waits: dict[str, float], outcome: Outcome) -> WaitingPod:
        """Make ``pod`` wait on ``waits`` (plugin -> seconds); ``outcome`` runs once, when it is decided."""

        def decided(status: Status | None) -> None:
            with self._lock:
                if self._pods.get(waiting.uid) is waiting:
                    del self._pods[waiting.uid]
            outcome(status)

        waiting = WaitingPod(pod, waits, decided)
        with self._lock:
            self._pods[waiting.uid] = waiting
            if self._timers is not None:
                self._arm(self._timers, waiting)
        return waiting

    def get(self, uid: str) -> WaitingPod | None:
        """kube's ``GetWaitingPod``."""
        with self._lock:
            return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        """kube's ``IterateOverWaitingPods``, over a copy: a callback may allow or reject."""
        with self._lock:
            return iter(list(self._pods.values()))

    def __len__(self) -> int:
        with self._lock:
            return len(self._pods)

    def reject(self, uid: str, message: str = "removed") -> bool:
        """kube's ``RejectWaitingPod`` (a deleted pod): True if ``uid`` was waiting."""
        waiting = self.get(uid)
        if waiting is None:
            return False
        waiting.reject("", message)
        return True

    def reject_all(self, message: str) -> None:
        """Leadership ended: nothing waiting may bind."""
        for waiting in self:
            waiting.reject("", message)

    def run_timeouts(self, stop: threading.Event) -> None:
        """Until ``stop``, reject each pod whose wait on a plugin ran out (a leader-only runnable)."""
        timers: workqueue.WorkQueue[tuple[str, str, int]] = workqueue.WorkQueue(name="permit-timeouts")
        with self._lock:
            self._timers = timers
            for waiting in self._pods.values():
                self._arm(timers, waiting)
        try:
            workqueue.run_workers(timers, 1, self._expire, stop, name="permit-timeouts").join()
        finally:
            with self._lock:
                self._timers = None

    def _arm(self, timers: workqueue.WorkQueue[tuple[str, str, int]], waiting: WaitingPod) -> None:
        for plugin, timeout in waiting.waits.items():
            timers.add_after((waiting.uid, plugin, waiting.serial), timeout)

    def _expire(self, item: tuple[str, str, int]) -> None:
        uid, plugin, serial = item
        waiting = self.get(uid)
        if waiting is not None and waiting.serial == serial and plugin in waiting.pending_plugins():
            after = format_duration(waiting.waits[plugin])
            waiting.reject(plugin, f"rejected due to timeout after waiting {after} at plugin {plugin}")
