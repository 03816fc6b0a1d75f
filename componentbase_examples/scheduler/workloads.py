"""The scheduler's caches of the objects that select pods, as PodTopologySpread's default constraints read
them (kube-scheduler's Service, ReplicationController, ReplicaSet and StatefulSet listers).

One informer per kind on the Manager's cache, all namespaces, synced before the replica campaigns; the
Services are indexed by namespace, so building a pod's default selector reads only its namespace's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from componentbase import informers
from componentbase_examples.scheduler.plugins.spreaddefaults import WorkloadListers

__all__ = ["workload_listers"]

_RESOURCES = {"ReplicationController": "replicationcontrollers", "ReplicaSet": "replicasets",
              "StatefulSet": "statefulsets"}


def workload_listers(cache: informers.InformerFactory) -> WorkloadListers:
    """Listers over informers made on ``cache`` now (started with the Manager's others)."""
    services = cache.services()
    services.add_indexers({informers.NAMESPACE_INDEX: informers.meta_namespace_index})
    by_kind = {kind: cache.informer(resource) for kind, resource in _RESOURCES.items()}

    def get(kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        informer = by_kind.get(kind)
        return None if informer is None else informer.get(f"{namespace}/{name}")

    return WorkloadListers(services=lambda namespace: services.by_index(informers.NAMESPACE_INDEX, namespace),
                           get=get)
