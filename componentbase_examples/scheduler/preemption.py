"""Carrying out a preemption against the API, as kube-scheduler's preemption executor does.

For each victim, on the scheduler's binder pool (the scheduling loop does not wait on the API, kube's
asynchronous preemption): the ``DisruptionTarget`` condition (reason ``PreemptionByScheduler``) is patched
into its status first, so whoever watches the pod learns why it goes, then the pod is deleted gracefully
with its own grace period, and a ``Preempted`` event is recorded on it, the preemptor as its related
object. A victim already gone is not an error. Lower-priority pods that lose their nomination to the
preemptor get ``status.nominatedNodeName`` cleared. When an eviction fails, the preemptor is queued again
at once (kube activates it), so it does not wait for an event that will not come.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from componentbase import events
from componentbase.client import format_time
from componentbase_examples.scheduler.binder import APIBinder, BindError
from componentbase_examples.scheduler.plugins.victims import DISRUPTION_TARGET, PREEMPTION_BY_SCHEDULER
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.waitingpods import WaitingPods

#: The plugin named in a waiting victim's rejection (kube passes its preemption plugin's name).
PLUGIN_NAME = "DefaultPreemption"

__all__ = ["Preemptor", "disruption_condition"]

log = logging.getLogger("componentbase_examples.scheduler")


def disruption_condition(scheduler_name: str) -> dict[str, Any]:
    """The condition kube-scheduler sets on a victim before deleting it."""
    return {"type": DISRUPTION_TARGET, "status": "True", "reason": PREEMPTION_BY_SCHEDULER,
            "message": f"{scheduler_name}: preempting to accommodate a higher priority pod",
            "lastProbeTime": None, "lastTransitionTime": format_time()}


def _has_condition(pod: PodInfo, wanted: dict[str, Any]) -> bool:
    for c in (pod.pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == wanted["type"]:
            return all(c.get(k) == wanted[k] for k in ("status", "reason", "message"))
    return False


class Preemptor:
    """Evicts victims and clears nominations through ``binder``; ``submit`` runs work off the scheduling loop,
    ``recorder(profile)`` gives a profile's event recorder, ``retry(pod)`` requeues a preemptor at once; a
    victim among ``waiting`` (held at Permit, not yet bound) is rejected there instead of deleted, as kube."""

    def __init__(self, binder: APIBinder, submit: Callable[[Callable[[], None]], None],
                 recorder: Callable[[str], Any], retry: Callable[[PodInfo], None],
                 waiting: WaitingPods | None = None) -> None:
        self.binder = binder
        self.waiting = waiting
        self.submit = submit
        self.recorder = recorder
        self.retry = retry
        self._lock = threading.Lock()
        self._running: set[str] = set()  # preemptors whose evictions are not all sent yet

    def is_running(self, key: str) -> bool:
        """Whether the evictions for this preemptor are still being sent (kube's ``IsPodRunningPreemption``):
        it must not preempt again meanwhile."""
        return key in self._running

    def preempt(self, preemptor: PodInfo, node_name: str, victims: Sequence[PodInfo]) -> None:
        """Evict ``victims`` so that ``preemptor`` fits on ``node_name`` (returns at once)."""
        if victims:
            with self._lock:
                self._running.add(preemptor.key)
            self.submit(lambda: self._evict_all(preemptor, node_name, victims))

    def clear_nominations(self, pods: Sequence[PodInfo]) -> None:
        self.submit(lambda: self._clear(pods))

    def _evict_all(self, preemptor: PodInfo, node_name: str, victims: Sequence[PodInfo]) -> None:
        failed = False
        try:
            for victim in victims:
                try:
                    self.evict(preemptor, node_name, victim)
                except BindError as e:
                    failed = True
                    log.error("Preempting %s/%s for %s/%s failed: %s", victim.namespace, victim.name,
                              preemptor.namespace, preemptor.name, e)
        finally:
            with self._lock:
                self._running.discard(preemptor.key)
        if failed:
            self.retry(preemptor)

    def evict(self, preemptor: PodInfo, node_name: str, victim: PodInfo) -> None:
        """Condition, graceful delete, event; a victim already deleted is left alone."""
        waiting = self.waiting.get((victim.pod.get("metadata") or {}).get("uid", "")) if self.waiting else None
        if waiting is not None:
            waiting.reject(PLUGIN_NAME, "preempted")
            log.info("Preemptor %s/%s rejected waiting pod %s/%s on node %s", preemptor.namespace, preemptor.name,
                     victim.namespace, victim.name, node_name)
            self._record(preemptor, node_name, victim)
            return
        condition = disruption_condition(preemptor.scheduler_name)
        try:
            if not _has_condition(victim, condition):
                self.binder.patch_status(victim.pod, {"conditions": [condition]}, precondition=False)
            self.binder.delete_pod(victim.pod)
        except BindError as e:
            if e.status == 404:
                log.info("Victim %s/%s is already deleted", victim.namespace, victim.name)
                return
            raise
        log.info("Preemptor %s/%s preempted victim %s/%s on node %s", preemptor.namespace, preemptor.name,
                 victim.namespace, victim.name, node_name)
        self._record(preemptor, node_name, victim)

    def _record(self, preemptor: PodInfo, node_name: str, victim: PodInfo) -> None:
        uid = (preemptor.pod.get("metadata") or {}).get("uid", "")
        self.recorder(preemptor.scheduler_name).event(
            victim.pod, events.NORMAL, "Preempted", f"Preempted by pod {uid} on node {node_name}",
            action="Preempting", related=preemptor.pod)

    def _clear(self, pods: Sequence[PodInfo]) -> None:
        for pod in pods:
            try:
                self.binder.patch_status(pod.pod, {"nominatedNodeName": None}, precondition=False)
            except BindError as e:  # not critical, as upstream: the pod will be nominated again or bound
                log.info("Cannot clear the nominatedNodeName of %s/%s: %s", pod.namespace, pod.name, e)
