"""The informers plugins ask for through ``Handle.informer``: from the Manager's cache, made only when a
plugin asks (a profile without the volume plugins watches no PVCs), each one's add and update events
offered to the queue, which moves back the parked pods whose rejecting plugins registered that event
(kube's ``addAllEventHandlers`` for the kinds plugins registered).
"""

from __future__ import annotations

from typing import Any

from componentbase import informers
from componentbase.controller import Manager
from componentbase_examples.scheduler import queue as q
from componentbase_examples.scheduler.events import ActionType, ClusterEvent

__all__ = ["PluginInformers"]

#: Kinds the informer factory serves without discovery, so a scheduler starts without asking the API.
_BUILT_IN = {("v1", "PersistentVolumeClaim"): "persistentvolumeclaims", ("v1", "PersistentVolume"): "persistentvolumes",
             ("storage.k8s.io/v1", "StorageClass"): "storageclasses", ("storage.k8s.io/v1", "CSINode"): "csinodes"}


class PluginInformers:
    """``Handle.informer`` in a cluster; call ``register(queue)`` once the queue exists."""

    def __init__(self, mgr: Manager) -> None:
        self.mgr = mgr
        self.requested: dict[str, informers.SharedInformer] = {}

    def __call__(self, api_version: str, kind: str) -> informers.SharedInformer:
        if (api_version, kind) == ("v1", "Pod"):
            return self.mgr.cache.pods()  # the scheduler's own pod informer, not a second one
        resource = _BUILT_IN.get((api_version, kind))
        informer = self.mgr.cache.informer(resource) if resource else self.mgr.informer(api_version, kind)
        self.requested[kind] = informer
        return informer

    def register(self, queue: q.SchedulingQueue) -> None:
        for kind, informer in self.requested.items():
            added, updated = ClusterEvent(kind, ActionType.ADD), ClusterEvent(kind, ActionType.UPDATE)

            def on_add(obj: Any, event: ClusterEvent = added) -> None:
                queue.move_all_to_active_or_backoff(event, None, obj)

            def on_update(old: Any, new: Any, event: ClusterEvent = updated) -> None:
                if (old.get("metadata") or {}).get("resourceVersion") != (new.get("metadata") or {}).get(
                        "resourceVersion"):  # not a resync
                    queue.move_all_to_active_or_backoff(event, old, new)

            informer.add_event_handler(on_add, on_update)
