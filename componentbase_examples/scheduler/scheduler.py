"""The scheduler against a cluster: informers in, ``scheduleOne`` in a loop, bindings out, as kube-scheduler.

One thread runs the scheduling cycles (the algorithm is CPU-bound Python: more threads would only take
turns on the GIL). Each placement is assumed in the snapshot at once, so the next cycle counts it, and its
binding cycle (Permit, PreBind, Bind, PostBind) runs on one of ``parallelism`` binder threads, where API
calls overlap. A failed binding is undone (unreserve, forget the assumed pod) and the pod goes back to the
queue with backoff; the informer seeing the pod bound confirms the assumption. A pod no node fits gets a
``FailedScheduling`` event, its ``PodScheduled`` condition set to False (only when that changes), and waits
for a cluster event that may help it.

It runs on a ``componentbase.controller.Manager``: informers from its cache on every replica, the loop and
the binding pool while leading, writes through its fenced client; a lost lease drops the queued bindings and
the process exits 1, as kube-scheduler does.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Literal

from componentbase import (
    events,
    informers,
    workqueue,
)
from componentbase.client import is_conflict
from componentbase.controller import Manager
from componentbase_examples.scheduler import config, profiles
from componentbase_examples.scheduler import queue as q
from componentbase_examples.scheduler.algorithm import FitError, NoNodesAvailable, SchedulingAlgorithm, ScoreError
from componentbase_examples.scheduler.binder import APIBinder, unschedulable_condition
from componentbase_examples.scheduler.events import EVENT_ASSIGNED_POD_DELETE, EVENT_FORCE_ACTIVATE
from componentbase_examples.scheduler.extender import (
    ExtenderError,
    bind_with_extenders,
    extenders_from_config,
    ignore_extender_resources,
)
from componentbase_examples.scheduler.framework import (
    CycleState,
    Framework,
    Handle,
    PluginError,
    Registry,
    RegistryError,
    Status,
)
from componentbase_examples.scheduler.handlers import SchedulerHandlers, is_assigned
from componentbase_examples.scheduler.metrics import ERROR, SCHEDULED, SchedulerMetrics
from componentbase_examples.scheduler.metrics import UNSCHEDULABLE as NO_FIT
from componentbase_examples.scheduler.nominator import Nominator, NominatorHandlers
from componentbase_examples.scheduler.plugininformers import PluginInformers
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.preemption import Preemptor
from componentbase_examples.scheduler.queueing import QueueingHints
from componentbase_examples.scheduler.snapshot import Snapshot
from componentbase_examples.scheduler.waitingpods import WaitingPods
from componentbase_examples.scheduler.workloads import workload_listers

__all__ = ["SCHEDULER_ERROR", "UNSCHEDULABLE", "Scheduler", "run"]

log = logging.getLogger("componentbase_examples.scheduler")

UNSCHEDULABLE = "Unschedulable"
SCHEDULER_ERROR = "SchedulerError"
#: kube truncates event messages to this many characters; the pod condition keeps the whole message.
EVENT_MESSAGE_LIMIT = 1024
#: How often pods parked unschedulable for too long are retried anyway (kube's 30 s).
LEFTOVER_FLUSH_PERIOD = 30.0
#: How long a stopping leader waits for bindings already sent (those not sent yet are dropped at once).
BINDING_GRACE = 1.0


class Scheduler:
    """kube-scheduler's ``Scheduler`` on a ``componentbase.controller.Manager``: build it, then ``run(stop)``.

    The manager's cache feeds the snapshot and the queue on every replica (a standby keeps them current, so
    it schedules at once when it leads); the scheduling loop, its binding pool and the leftover flush are
    leader-only runnables. Bindings and status patches go through ``mgr.client``, which refuses them once
    this replica may no longer lead; what is queued then is dropped, not sent.
    """

    def __init__(self, mgr: Manager, cfg: config.KubeSchedulerConfiguration, registry: Registry, *,
                 rng: random.Random | None = None, hostname: str | None = None,
                 event_sink: Literal["thread", "process", "auto"] = "thread",
                 max_in_unschedulable: float = q.UNSCHEDULABLE_TIMEOUT) -> None:
        self.cfg = cfg
        self.mgr = mgr
        self.snapshot = Snapshot()
        self.binder = APIBinder(mgr.client)
        # Namespace labels for InterPodAffinity's namespaceSelector, read from the cache when a term is matched;
        # the objects selecting pods for PodTopologySpread's default constraints (workloads.py); the informers
        # plugins ask for when they are built (plugininformers.py: the volume plugins' storage kinds); the
        # pods preemption nominated, the PodDisruptionBudgets it respects, and what carries it out.
        self.namespaces = mgr.cache.namespaces()
        plugin_informers = PluginInformers(mgr)
        self.nominator = Nominator()
        self.pdbs = mgr.cache.informer("poddisruptionbudgets")
        self.waiting = WaitingPods()  # pods a Permit plugin holds
        self.metrics = SchedulerMetrics(mgr.metrics, lambda: self.queue.pending_counts())
        extenders = extenders_from_config(cfg)
        preemptor = Preemptor(self.binder, self._submit, lambda name: self.recorders[name], self._retry_now,
                              self.waiting)
        handle = Handle(self.snapshot, binder=self.binder.bind, namespace_labels=self._namespace_labels,
                        workloads=workload_listers(mgr.cache), informer=plugin_informers, client=mgr.client,
                        nominator=self.nominator, pdbs=self.pdbs.list, preemptor=preemptor,
                        waiting_pods=self.waiting, extenders=extenders, metrics=self.metrics)
        self.frameworks: dict[str, Framework] = profiles.build_frameworks(cfg, registry, handle)
        sort = next(iter(self.frameworks.values())).queue_sort  # validation: every profile has the same one
        less = None if sort is None else (lambda a, b: bool(sort(a=a, b=b)))  # keywords: a plugin may name fewer
        self.queue = q.SchedulingQueue(initial_backoff=float(cfg.pod_initial_backoff_seconds),
                                       max_backoff=float(cfg.pod_max_backoff_seconds), less=less,
                                       hints=QueueingHints.from_frameworks(self.frameworks),
                                       max_in_unschedulable=max_in_unschedulable,
                                       incoming=self.metrics.queue_incoming)
        plugin_informers.register(self.queue)
        self.algorithm = SchedulingAlgorithm(self.snapshot, cfg.percentage_of_nodes_to_score, rng)
        self.algorithm.extenders = extenders
        ignore_extender_resources(cfg, self.frameworks)
        self.algorithm.nominator = self.nominator
        self.pods = mgr.cache.pods()
        self.nodes = mgr.cache.nodes()
        handlers = SchedulerHandlers(self.snapshot, self.queue, self.frameworks)
        handlers.register(self.pods, self.nodes)
        self.pods.add_event_handler(on_delete=self._pod_deleted)
        nominations = NominatorHandlers(self.nominator)
        self.pods.add_event_handler(nominations.pending_added, nominations.pending_updated,
                                    nominations.pending_deleted, filter=handlers.is_pending_for_us)
        # Events are not fenced: a child process may send them, and only the leader's work records any.
        self.broadcaster = events.EventBroadcaster(mgr.api_client, sink=event_sink)
        host = socket.gethostname() if hostname is None else hostname
        self.recorders = {name: self.broadcaster.new_recorder(name, host) for name in self.frameworks}
        self._workers: workqueue.TaskPool | None = None
        self._work_stop = threading.Event()  # the leader's work was told to stop: drop what is queued
        mgr.add(self._schedule_loop, needs_leader=True)
        mgr.add(self._flush_leftovers, needs_leader=True)
        mgr.add(self.waiting.run_timeouts, needs_leader=True)

    def _pod_deleted(self, obj: Any) -> None:
        """A deleted pod waiting at Permit is rejected (kube's ``RejectWaitingPod``), freeing its node."""
        uid = (informers.deleted_object(obj).get("metadata") or {}).get("uid")
        if uid:
            self.waiting.reject(uid)

    def _namespace_labels(self, name: str) -> dict[str, str]:
        return ((self.namespaces.get(name) or {}).get("metadata") or {}).get("labels") or {}

    # --- running -------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> int:
        """Run the manager until ``stop`` (0) or a lost lease (1); the event sender starts first."""
        self.broadcaster.start()
        try:
            return self.mgr.run(stop)
        finally:
            self.broadcaster.shutdown(5.0)

    def _schedule_loop(self, stop: threading.Event) -> None:
        """The leader's scheduling loop and its binding pool; on stop, queued bindings are dropped."""
        log.info("Caches synced: %d nodes, scheduling for %s", len(self.snapshot), ", ".join(sorted(self.frameworks)))
        self._work_stop = stop
        self._workers = workqueue.TaskPool(self.cfg.parallelism, "binder")
        try:
            while not stop.is_set():
                self.schedule_one()  # returns at once when the stop closes the queue
        finally:
            self.waiting.reject_all("the scheduler stopped leading")  # their bindings are dropped below
            # Queued bindings return at once (dropped); a call already sent may take its time: not waited for
            # longer than this, so a stopping leader releases its lease promptly.
            if not self._workers.close(BINDING_GRACE):
                log.info("bindings still in flight %gs after stopping; not waiting for them", BINDING_GRACE)

    def _flush_leftovers(self, stop: threading.Event) -> None:
        """Every 30 s, retry pods parked too long; on stop, close the queue so the loop's ``pop`` returns."""
        while not stop.wait(LEFTOVER_FLUSH_PERIOD):
            self.queue.flush_unschedulable_leftover()
        self.queue.close()

    # --- the scheduling cycle ------------------------------------------------------------------

    def schedule_one(self, timeout: float | None = None) -> bool:
        """Pop one pod and place it (or explain why not); False if no pod came within ``timeout``."""
        qp = self.queue.pop(timeout)
        if qp is None:
            return False
        start = time.monotonic()
        cycle = self.queue.scheduling_cycle
        pod = qp.pod
        fw = self.frameworks.get(pod.scheduler_name)
        if fw is None or (pod.pod.get("metadata") or {}).get("deletionTimestamp"):
            self.queue.done(pod.key)  # not ours, or being deleted: kube's skipPodSchedule
            return True
        if self.snapshot.is_assumed(pod.key):
            # Updated while its binding is in flight: look again after a backoff, by when it is bound
            # (and leaves the queue) or its binding failed.
            self.queue.add_unschedulable_if_not_present(qp, cycle, error=True)
            return True
        state = CycleState()
        try:
            result = self.algorithm.schedule_pod(fw, state, pod)
        except FitError as e:
            nominated = e.diagnosis.nominated_node_name
            if nominated is not None:  # PostFilter (preemption) nominated the pod, or cleared its nomination
                self.nominator.add(pod, nominated)
            self._failed(fw, qp, cycle, UNSCHEDULABLE, str(e), e.diagnosis.unschedulable_plugins, start=start,
                         nominated=nominated)
            return True
        except NoNodesAvailable as e:
            self._failed(fw, qp, cycle, UNSCHEDULABLE, str(e), (), start=start)
            return True
        except (ExtenderError, ScoreError, PluginError) as e:  # kube's error status, no traceback
            self._failed(fw, qp, cycle, SCHEDULER_ERROR, str(e), (), error=True, start=start)
            return True
        except Exception as e:  # a plugin's bug fails this attempt, not the scheduler
            log.exception("scheduling %s/%s failed", pod.namespace, pod.name)
            self._failed(fw, qp, cycle, SCHEDULER_ERROR, str(e), (), error=True, start=start)
            return True
        host = result.suggested_host
        try:
            self.snapshot.assume_pod(pod, host)
        except ValueError as e:
            self._failed(fw, qp, cycle, SCHEDULER_ERROR, str(e), (), error=True, start=start)
            return True
        self.nominator.delete(pod.key)  # it runs where it was nominated to, or elsewhere
        status = fw.run_reserve(state, pod, host)
        waits: dict[str, float] = {}
        if status is None:
            status, waits = fw.run_permit(state, pod, host)
            if status is not None:
                fw.run_unreserve(state, pod, host)
        if status is not None:
            self.snapshot.forget_pod(pod.key)
            point = "Reserve" if status.plugin in {n for n, _, _ in fw.reserve} else "Permit"
            reason = UNSCHEDULABLE if status.is_rejected() else SCHEDULER_ERROR
            self._failed(fw, qp, cycle, reason, _plugin_message(point, status), (status.plugin,),
                         error=not status.is_rejected(), start=start)
            return True
        assert self._workers is not None, "schedule_one runs inside run()"
        if waits:  # the binding cycle starts once the pod is allowed, rejected or its wait runs out
            log.debug("Pod %s/%s waits at Permit for %s", pod.namespace, pod.name, ", ".join(sorted(waits)))
            waited_from = time.monotonic()

            def decided(rejected: Status | None) -> None:
                self.metrics.permit_wait("Unschedulable" if rejected else "Success", time.monotonic() - waited_from)
                self._submit(lambda: self._binding_cycle(fw, state, qp, cycle, host, start, rejected))

            self.waiting.add(pod, waits, decided)
            return True
        self._workers.submit(lambda: self._binding_cycle(fw, state, qp, cycle, host, start))
        return True

    def _submit(self, work: Callable[[], None]) -> None:
        """Run ``work`` on the binder pool (the preemptor's API calls), or here outside ``run()``."""
        if self._workers is None:
            work()
        else:
            self._workers.submit(work)

    def _retry_now(self, pod: PodInfo) -> None:
        """A preemption's eviction failed: the preemptor must not wait for a deletion that will not come."""
        self.queue.move_all_to_active_or_backoff(EVENT_FORCE_ACTIVATE, None, pod.pod)  # this pod only

    def _deposed(self) -> bool:
        """Whether this replica's work was told to stop or its writes are fenced: drop, do not retry."""
        return self._work_stop.is_set() or not self.mgr.fence.allows()

    def _binding_cycle(self, fw: Framework, state: CycleState, qp: q.QueuedPodInfo, cycle: int, host: str,
                       start: float, rejected: Status | None = None) -> None:
        """PreBind, Bind, PostBind; or, for a pod ``rejected`` while waiting at Permit, its failure."""
        pod = qp.pod
        if self._deposed():  # queued when leadership ended: dropped, never sent
            self._forget(fw, state, pod, host)
            self.queue.done(pod.key)
            return
        if rejected is not None:  # kube: a FitError over the one node it was assumed on
            self._forget(fw, state, pod, host)
            self._failed(fw, qp, cycle, UNSCHEDULABLE, f"0/1 nodes are available: 1 {rejected.message()}.",
                         (rejected.plugin,) if rejected.plugin else (), start=start)
            # After _failed, as kube: the freed room is not an in-flight event of the pod's own
            self._room_freed(pod, host, exclude=pod.key)
            return
        extenders = self.algorithm.extenders
        by_extenders = (lambda p, n: bind_with_extenders(extenders, p, n)) if extenders else None
        status = fw.run_bind(state, pod, host, by_extenders)
        if status is None:
            self.queue.done(pod.key)
            self.metrics.attempt(SCHEDULED, fw.profile_name, time.monotonic() - start)
            self.recorders[fw.profile_name].event(
                pod.pod, events.NORMAL, "Scheduled", f"Successfully assigned {pod.namespace}/{pod.name} to {host}",
                action="Binding")
            return
        self._forget(fw, state, pod, host)
        if self._deposed():  # refused by the fence (or sent as leadership ended): nothing to retry here
            log.info("binding %s/%s to %s dropped: no longer the leader", pod.namespace, pod.name, host)
            self.queue.done(pod.key)
            return
        self._room_freed(pod, host)
        point = "Bind" if status.plugin in {n for n, _ in fw.bind} else "PreBind"
        self._failed(fw, qp, cycle, SCHEDULER_ERROR, _plugin_message(point, status), (), error=True, start=start)

    def _forget(self, fw: Framework, state: CycleState, pod: PodInfo, host: str) -> None:
        """Undo the assumption: Unreserve, and the node no longer counts the pod."""
        fw.run_unreserve(state, pod, host)
        self.snapshot.forget_pod(pod.key)

    def _room_freed(self, pod: PodInfo, host: str, exclude: str = "") -> None:
        """What the assumed pod held on ``host`` is free again: parked pods retry as if it were deleted."""
        assumed = {**pod.pod, "spec": {**pod.spec, "nodeName": host}}
        self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, assumed, None, exclude=exclude)

    def _failed(self, fw: Framework, qp: q.QueuedPodInfo, cycle: int, reason: str, message: str,
                plugins: Iterable[str], error: bool = False, start: float | None = None,
                nominated: str | None = None) -> None:
        """kube's ``handleSchedulingFailure``: requeue, record ``FailedScheduling``, set the pod's condition.

        A pod deleted meanwhile is dropped; one bound meanwhile (by someone else) is not retried and keeps
        its condition, but still gets the event that says this scheduler's binding failed.
        """
        pod = qp.pod
        if start is not None:
            result = ERROR if reason == SCHEDULER_ERROR else NO_FIT
            self.metrics.attempt(result, fw.profile_name, time.monotonic() - start)
        cached = self.pods.get(f"{pod.namespace}/{pod.name}")
        if cached is None or (cached.get("metadata") or {}).get("uid") != (pod.pod.get("metadata") or {}).get("uid"):
            log.info("Pod %s/%s doesn't exist in informer cache; not retried", pod.namespace, pod.name)
            self.queue.done(pod.key)
            return
        recorder = self.recorders[fw.profile_name]
        if is_assigned(cached):
            log.info("Pod %s/%s has been assigned to node %s; not retried", pod.namespace, pod.name,
                     cached["spec"]["nodeName"])
            self.queue.done(pod.key)
            recorder.event(cached, events.WARNING, "FailedScheduling", _truncate(message), action="Scheduling")
            return
        if cached is not pod.pod:
            qp.pod = PodInfo(cached)
        self.queue.add_unschedulable_if_not_present(qp, cycle, plugins, error=error)
        if reason == UNSCHEDULABLE:
            log.debug("Unable to schedule %s/%s: %s", pod.namespace, pod.name, message)
        else:
            log.error("Error scheduling %s/%s, retrying: %s", pod.namespace, pod.name, message)
        recorder.event(cached, events.WARNING, "FailedScheduling", _truncate(message), action="Scheduling")
        condition = unschedulable_condition(cached, reason, message)
        if nominated == ((cached.get("status") or {}).get("nominatedNodeName") or ""):
            nominated = None  # kube's updatePod writes the nomination only when it changes
        if (condition is not None or nominated is not None) and self._workers is not None:
            self._workers.submit(lambda: self._write_condition(cached, condition, nominated))

    def _write_condition(self, pod: dict[str, Any], condition: dict[str, Any] | None,
                         nominated: str | None = None) -> None:
        if self._deposed():
            return
        try:
            self.binder.patch_condition(pod, condition, nominated)
        except Exception as e:  # a conflict means the pod moved on (bound, changed): nothing to correct
            meta = pod.get("metadata") or {}
            log.log(logging.INFO if is_conflict(e) else logging.ERROR,
                    "Error updating pod %s/%s: %s", meta.get("namespace"), meta.get("name"), e)


def _plugin_message(point: str, status: Status) -> str:
    return f'running {point} plugin "{status.plugin}": {status.message()}' if status.plugin else status.message()


def _truncate(message: str) -> str:
    if len(message) <= EVENT_MESSAGE_LIMIT:
        return message
    return message[:EVENT_MESSAGE_LIMIT - 3] + "..."


def run(completed: Any, stop: threading.Event, *, max_in_unschedulable: float = q.UNSCHEDULABLE_TIMEOUT) -> int:
    """The scheduler's work for ``componentbase.run_component``: a ``CompletedConfig`` in, an exit code out.

    The ``Manager`` elects the leader itself (after its caches synced: a hot standby), so this function is
    marked ``elects_leader`` where the command is made. ``max_in_unschedulable`` is the deprecated
    ``--pod-max-in-unschedulable-pods-duration`` (not part of the config file, as in kube).
    """
    cfg = completed.config.component_config
    try:
        registry = Registry.from_plugin_manager(completed.config.plugins)
        # Events move to a child process when a burst of pods keeps them coming: each one is then an API call
        # this process's GIL need not pay for; a scheduler that binds a few pods a minute never starts it.
        scheduler = Scheduler(Manager.from_config(completed), cfg, registry, event_sink="auto",
                              max_in_unschedulable=max_in_unschedulable)
    except (RegistryError, profiles.ProfileError) as e:  # validation catches these first; a program may not
        for line in str(e).splitlines():
            log.error("%s", line)
        return 1
    return scheduler.run(stop)
