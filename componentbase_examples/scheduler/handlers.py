"""What the informers' events do to the scheduler: kube-scheduler's ``addAllEventHandlers``.

One pod informer feeds two filtered handlers: bound pods (``spec.nodeName`` set, not finished) go to the
snapshot, pending pods this scheduler is responsible for (their ``schedulerName`` is a profile's) go to the
scheduling queue; a pod that gets bound leaves the queue and joins the snapshot by the filters' own
update-becomes-add/delete rule. Nodes go to the snapshot. Every change is also a cluster event, with its
old and new object, for the queue's hints: they decide which parked pods it can help.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from componentbase import informers
from componentbase_examples.scheduler import events as ev
from componentbase_examples.scheduler import queue as q
from componentbase_examples.scheduler.podinfo import PodInfo, pod_key
from componentbase_examples.scheduler.snapshot import Snapshot

__all__ = ["SchedulerHandlers", "is_assigned", "is_terminal", "pod_spec_changed"]

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
        # Labels (topology spread, pod affinity), a scale-down...; a status write moves nothing.
        if pod_spec_changed(old, new):
            for event in ev.pod_events(old, new):
                self.queue.move_all_to_active_or_backoff(event, old, new)

    def assigned_deleted(self, pod: Obj | informers.DeletedFinalStateUnknown) -> None:
        obj = informers.deleted_object(pod)
        self.snapshot.remove_pod(pod_key(obj))
        self.queue.move_all_to_active_or_backoff(ev.EVENT_ASSIGNED_POD_DELETE, obj, None)

    # pending pods: the queue

    def pending_added(self, pod: Obj) -> None:
        self.queue.add(PodInfo(pod))

    def pending_updated(self, old: Obj, new: Obj) -> None:
        if pod_spec_changed(old, new):
            self.queue.update(PodInfo(new), old)

    def pending_deleted(self, pod: Obj | informers.DeletedFinalStateUnknown) -> None:
        """Deleted, finished, or bound (then the bound-pod handler, called first, has confirmed it)."""
        key = pod_key(informers.deleted_object(pod))
        self.queue.delete(key)
        self.snapshot.forget_pod(key)  # deleted while its binding was in flight: what it held is free

    # nodes: the snapshot

    def node_added(self, node: Obj) -> None:
        self.snapshot.add_node(node)
        self.queue.move_all_to_active_or_backoff(ev.EVENT_NODE_ADD, None, node)

    def node_updated(self, old: Obj, new: Obj) -> None:
        self.snapshot.update_node(new)
        for event in ev.node_events(old, new):  # none for a heartbeat
            self.queue.move_all_to_active_or_backoff(event, old, new)

    def node_deleted(self, node: Obj | informers.DeletedFinalStateUnknown) -> None:
        obj = informers.deleted_object(node)
        self.snapshot.remove_node((obj.get("metadata") or {}).get("name", ""))
        self.queue.move_all_to_active_or_backoff(ev.EVENT_NODE_DELETE, obj, None)
