"""What the informers' events do to the scheduler: kube-scheduler's ``addAllEventHandlers``.

One pod informer feeds two filtered handlers: bound pods (``spec.nodeName`` set, not finished) go to the
snapshot, pending pods this scheduler is responsible for (their ``schedulerName`` is a profile's) go to the
scheduling queue; a pod that gets bound leaves the queue and joins the snapshot by the filters' own
update-becomes-add/delete rule. Nodes go to the snapshot. Events that may let a parked pod fit (a node
added, a node's scheduling properties changed, a bound pod deleted) move the unschedulable pods back.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from componentbase import informers
from componentbase_examples.scheduler import queue as q
from componentbase_examples.scheduler.podinfo import PodInfo, pod_key
from componentbase_examples.scheduler.snapshot import Snapshot

__all__ = ["SchedulerHandlers", "is_assigned", "is_terminal", "node_scheduling_changed", "pod_spec_changed"]

Obj = dict[str, Any]
_TERMINAL = ("Succeeded", "Failed")


def is_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in _TERMINAL


def is_assigned(pod: Obj) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def pod_spec_changed(old: Obj, new: Obj) -> bool:
    """Whether a pending pod changed in a way scheduling can see: not its status or resourceVersion.

    The scheduler's own ``PodScheduled`` patch must not send a parked pod round again (kube's
    ``isPodUpdated``).
    """
    if old.get("spec") != new.get("spec"):
        return True
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    return any(om.get(k) != nm.get(k) for k in ("labels", "annotations", "deletionTimestamp", "uid"))


def _node_view(node: Obj) -> tuple[Any, ...]:
    spec = node.get("spec") or {}
    return ((node.get("metadata") or {}).get("labels"), spec.get("taints"), bool(spec.get("unschedulable")),
            (node.get("status") or {}).get("allocatable"))


def node_scheduling_changed(old: Obj, new: Obj) -> bool:
    """Labels, taints, cordon or allocatable changed: heartbeats and condition updates do not count."""
    return _node_view(old) != _node_view(new)


class SchedulerHandlers:
    """The handlers, bound to one snapshot and one queue."""

    def __init__(self, snapshot: Snapshot, queue: q.SchedulingQueue, scheduler_names: Collection[str]) -> None:
        self.snapshot = snapshot
        self.queue = queue
        self.scheduler_names = frozenset(scheduler_names)

    def register(self, pods: informers.SharedInformer, nodes: informers.SharedInformer) -> None:
        pods.add_event_handler(self.assigned_added, self.assigned_updated, self.assigned_deleted,
                               filter=self.is_bound)
        pods.add_event_handler(self.pending_added, self.pending_updated, self.pending_deleted,
                               filter=self.is_pending_for_us)
        nodes.add_event_handler(self.node_added, self.node_updated, self.node_deleted)

    # filters

    @staticmethod
    def is_bound(pod: Obj) -> bool:
        return is_assigned(pod) and not is_terminal(pod)

    def is_pending_for_us(self, pod: Obj) -> bool:
        return (not is_assigned(pod) and not is_terminal(pod)
                and ((pod.get("spec") or {}).get("schedulerName") or "default-scheduler") in self.scheduler_names)

    # bound pods: the snapshot

    def assigned_added(self, pod: Obj) -> None:
        info = PodInfo(pod)
        self.snapshot.add_pod(info)  # confirms the pod if this scheduler assumed it
        self.queue.assigned_pod_added(info)

    def assigned_updated(self, old: Obj, new: Obj) -> None:
        self.snapshot.update_pod(PodInfo(new))
        # Labels (topology spread, pod affinity), terminating or spec; a status write moves nothing.
        if pod_spec_changed(old, new):
            self.queue.move_all_to_active_or_backoff(q.ASSIGNED_POD_UPDATE)

    def assigned_deleted(self, pod: Obj | informers.DeletedFinalStateUnknown) -> None:
        self.snapshot.remove_pod(pod_key(informers.deleted_object(pod)))
        self.queue.move_all_to_active_or_backoff(q.POD_DELETE)

    # pending pods: the queue

    def pending_added(self, pod: Obj) -> None:
        self.queue.add(PodInfo(pod))

    def pending_updated(self, old: Obj, new: Obj) -> None:
        if pod_spec_changed(old, new):
            self.queue.update(PodInfo(new))

    def pending_deleted(self, pod: Obj | informers.DeletedFinalStateUnknown) -> None:
        """Deleted, finished, or bound (then the bound-pod handler, called first, has confirmed it)."""
        key = pod_key(informers.deleted_object(pod))
        self.queue.delete(key)
        self.snapshot.forget_pod(key)  # deleted while its binding was in flight: what it held is free

    # nodes: the snapshot

    def node_added(self, node: Obj) -> None:
        self.snapshot.add_node(node)
        self.queue.move_all_to_active_or_backoff(q.NODE_ADD)

    def node_updated(self, old: Obj, new: Obj) -> None:
        self.snapshot.update_node(new)
        if node_scheduling_changed(old, new):
            self.queue.move_all_to_active_or_backoff(q.NODE_UPDATE)

    def node_deleted(self, node: Obj | informers.DeletedFinalStateUnknown) -> None:
        name = (informers.deleted_object(node).get("metadata") or {}).get("name", "")
        self.snapshot.remove_node(name)
        self.queue.move_all_to_active_or_backoff(q.NODE_DELETE)
