"""Which parked pods a cluster event sends back to scheduling: kube's ``isPodWorthRequeuing`` per profile.

Each profile's plugins register the events that can undo their rejections, with a hint each
(``events.ClusterEventWithHint``): from the plugin's ``scheduler_events_to_register`` hook, else, for the
default plugins, from ``plugins.hints.DEFAULT_EVENTS``; a plugin with neither is retried on every event,
as kube treats a plugin without ``EnqueueExtensions``. The queue then asks, per parked pod, only the
plugins that rejected it. ``PreEnqueue`` plugins (scheduling gates) are listed here too, per profile.
"""

from __future__ import annotations

import enum
import functools
import itertools
import logging
from collections import deque
from collections.abc import Callable, Collection, Mapping
from typing import Any

import attrs

from componentbase_examples.scheduler.events import (
    WILDCARD_EVENT,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from componentbase_examples.scheduler.framework import Framework, Status
from componentbase_examples.scheduler.plugins.hints import DEFAULT_EVENTS
from componentbase_examples.scheduler.podinfo import PodInfo

__all__ = ["InFlightEvents", "ProfileHints", "QueuedPodInfo", "QueueingHints", "Strategy", "priority_less",
           "profile_hints"]

log = logging.getLogger("componentbase_examples.scheduler")


@functools.total_ordering
class QueuedPodInfo:
    """A pod in the queue: when it came, how often it was tried, which plugins rejected or gate it."""

    __slots__ = ("_less", "attempts", "backoff_expiry", "consecutive_errors", "gating_events", "gating_plugin",
                 "initial_attempt", "pod", "timestamp", "unschedulable_count", "unschedulable_plugins")

    def __init__(self, pod: PodInfo, now: float, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        self.pod = pod
        self.timestamp = now
        self.initial_attempt: float | None = None
        self.attempts = 0
        self.backoff_expiry: float | None = None  # whole second; computed once per failure
        self.unschedulable_plugins: frozenset[str] = frozenset()
        self.gating_plugin = ""
        self.gating_events: tuple[ClusterEvent, ...] = ()
        self.unschedulable_count = 0
        self.consecutive_errors = 0
        self._less = less

    def gated(self) -> bool:
        return bool(self.gating_plugin)

    def __lt__(self, other: QueuedPodInfo) -> bool:
        return self._less(self, other)

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.pod.namespace}/{self.pod.name}, attempts={self.attempts})"


def priority_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """PrioritySort's order: higher priority first, then first queued."""
    pa, pb = a.pod.priority, b.pod.priority
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


class Strategy(enum.IntEnum):
    """Where a parked pod goes after an event (kube's ``queueingStrategy``)."""

    SKIP = 0  # stays parked
    AFTER_BACKOFF = 1  # backoffQ while its backoff lasts, else activeQ


@attrs.frozen
class RegisteredHint:
    plugin: str
    event: ClusterEvent
    fn: Callable[..., QueueingHint] | None


@attrs.define
class ProfileHints:
    """One profile's registered hints and PreEnqueue plugins (in the profile's order)."""

    hints: list[RegisteredHint] = attrs.field(factory=list)
    pre_enqueue: list[tuple[str, Callable[..., Status | None]]] = attrs.field(factory=list)
    _by_event: dict[ClusterEvent, list[RegisteredHint]] = attrs.field(factory=dict, init=False)

    def matching(self, event: ClusterEvent) -> list[RegisteredHint]:
        """The hints registered for ``event``, found once per distinct event (there are few)."""
        found = self._by_event.get(event)
        if found is None:
            found = self._by_event[event] = [h for h in self.hints if h.event.matches(event)]
        return found

    def events_of(self, plugin: str) -> tuple[ClusterEvent, ...]:
        """The events ``plugin`` registered (a gated pod waits for one of its gating plugin's)."""
        return tuple(h.event for h in self.hints if h.plugin == plugin)


def _registered(name: str, plugin: Any) -> list[ClusterEventWithHint]:
    own = getattr(plugin, "scheduler_events_to_register", None)
    if callable(own):
        return list(own())
    if name in DEFAULT_EVENTS:
        return DEFAULT_EVENTS[name](plugin)
    return [ClusterEventWithHint(WILDCARD_EVENT)]


def profile_hints(fw: Framework) -> ProfileHints:
    """The hints of every plugin ``fw`` runs, and its PreEnqueue plugins."""
    found = ProfileHints(pre_enqueue=list(fw.pre_enqueue))
    for name, plugin in fw.plugins.items():
        found.hints += [RegisteredHint(name, e.event, e.hint) for e in _registered(name, plugin)]
    return found


class QueueingHints:
    """The hints of all profiles, by scheduler name; no profiles: every event retries every pod."""

    def __init__(self, profiles: Mapping[str, ProfileHints] | None = None) -> None:
        self.profiles = dict(profiles or {})
        self._events = {h.event for p in self.profiles.values() for h in p.hints}

    @classmethod
    def from_frameworks(cls, frameworks: Mapping[str, Framework]) -> QueueingHints:
        """The hints of each profile's framework, by scheduler name."""
        return cls({name: profile_hints(fw) for name, fw in frameworks.items()})

    def pre_enqueue(self, pod: PodInfo) -> list[tuple[str, Callable[..., Status | None]]]:
        """The PreEnqueue plugins of ``pod``'s profile."""
        profile = self.profiles.get(pod.scheduler_name)
        return profile.pre_enqueue if profile is not None else []

    def events_of(self, pod: PodInfo, plugin: str) -> tuple[ClusterEvent, ...]:
        """The events ``plugin`` registered in ``pod``'s profile."""
        profile = self.profiles.get(pod.scheduler_name)
        return profile.events_of(plugin) if profile is not None else ()

    def of_interest(self, event: ClusterEvent) -> bool:
        """Whether any plugin of any profile registered ``event`` (kube's ``isEventOfInterest``)."""
        if not self.profiles or event.is_wildcard():
            return True
        return any(registered.matches(event) for registered in self._events)

    def worth_requeuing(self, pod: PodInfo, rejectors: Collection[str], event: ClusterEvent, old: Any,
                        new: Any) -> Strategy:
        """Ask the hints of the plugins that rejected ``pod`` about ``event``; the first ``QUEUE`` wins."""
        if not rejectors:
            return Strategy.AFTER_BACKOFF  # an error, not a verdict: any event may do
        if event.is_wildcard():
            uid = (new.get("metadata") or {}).get("uid") if isinstance(new, Mapping) else None
            mine = (pod.pod.get("metadata") or {}).get("uid")
            return Strategy.SKIP if uid is not None and uid != mine else Strategy.AFTER_BACKOFF
        profile = self.profiles.get(pod.scheduler_name)
        if profile is None:
            return Strategy.AFTER_BACKOFF
        for registered in profile.matching(event):
            if registered.plugin not in rejectors:
                continue
            if registered.fn is None or (old is None and new is None):
                return Strategy.AFTER_BACKOFF  # no hint, or nothing to judge by: queue, as kube does
            try:
                hint = registered.fn(pod, old, new)
            except Exception:  # a hint's bug must not strand the pod: queue it, as kube does
                log.exception("queueing hint of %s for %s failed", registered.plugin, event.label)
                hint = QueueingHint.QUEUE
            if hint is QueueingHint.QUEUE:
                return Strategy.AFTER_BACKOFF
        return Strategy.SKIP


class InFlightEvents:
    """The events seen while pods were being scheduled, kept until the last of those pods is done (kube's
    ``inFlightPods``/``inFlightEvents``): a pod that fails is asked about the ones since it was popped."""

    def __init__(self) -> None:
        self._seq = itertools.count()
        self._pods: dict[str, int] = {}
        self._events: deque[tuple[int, ClusterEvent, Any, Any]] = deque()

    def __bool__(self) -> bool:
        return bool(self._pods)

    def popped(self, key: str) -> None:
        """``key``'s cycle starts: events from now on concern it."""
        self._pods[key] = next(self._seq)

    def add(self, event: ClusterEvent, old: Any, new: Any) -> None:
        """Keep ``event`` if a pod is in flight (kube's ``addEventIfAnyInFlight``)."""
        if self._pods:
            self._events.append((next(self._seq), event, old, new))

    def since(self, key: str) -> list[tuple[ClusterEvent, Any, Any]]:
        """The events since ``key`` was popped, with their objects."""
        start = self._pods.get(key, -1)
        return [(event, old, new) for seq, event, old, new in self._events if seq > start]

    def done(self, key: str) -> None:
        """``key``'s cycle is over; events older than every pod still in flight are dropped."""
        if self._pods.pop(key, None) is None:
            return
        oldest = min(self._pods.values(), default=None)
        while self._events and (oldest is None or self._events[0][0] < oldest):
            self._events.popleft()
