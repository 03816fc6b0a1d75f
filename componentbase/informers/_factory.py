"""``InformerFactory``: one shared informer per (resource, namespace, selectors), as client-go's
``SharedInformerFactory``, so every controller in a process reads the same cache over one watch.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from componentbase.client import ResourceMapping, RESTMapper
from componentbase.informers._informer import SharedInformer
from componentbase.informers._listwatch import ListWatch
from componentbase.informers._multi import MultiNamespaceInformer
from componentbase.util import Backoff

__all__ = ["RESOURCES", "InformerFactory"]


def _core(resource: str, kind: str, namespaced: bool = True, group: str = "") -> ResourceMapping:
    return ResourceMapping(group, "v1", resource, kind, namespaced)


#: The resources with a shortcut (``factory.pods()``, ``factory.informer("pods")``): where each is served,
#: known without discovery. Listing through the URL path, not the generated ``CoreV1Api`` methods, matters
#: at start-up: that class builds a pydantic validator for each of its ~400 methods when first imported,
#: about 1 s of CPU in every process that touches it.
RESOURCES: dict[str, ResourceMapping] = {
    "pods": _core("pods", "Pod"),
    "nodes": _core("nodes", "Node", namespaced=False),
    "namespaces": _core("namespaces", "Namespace", namespaced=False),
    "configmaps": _core("configmaps", "ConfigMap"),
    "secrets": _core("secrets", "Secret"),
    "services": _core("services", "Service"),
    "endpoints": _core("endpoints", "Endpoints"),
    "events": _core("events", "Event"),
    "leases": _core("leases", "Lease", group="coordination.k8s.io"),
    "replicationcontrollers": _core("replicationcontrollers", "ReplicationController"),
    "replicasets": _core("replicasets", "ReplicaSet", group="apps"),
    "statefulsets": _core("statefulsets", "StatefulSet", group="apps"),
    "persistentvolumeclaims": _core("persistentvolumeclaims", "PersistentVolumeClaim"),
    "persistentvolumes": _core("persistentvolumes", "PersistentVolume", namespaced=False),
    "storageclasses": _core("storageclasses", "StorageClass", namespaced=False, group="storage.k8s.io"),
    "csinodes": _core("csinodes", "CSINode", namespaced=False, group="storage.k8s.io"),
    "poddisruptionbudgets": _core("poddisruptionbudgets", "PodDisruptionBudget", group="policy"),
}


def list_watch_for(api_client: Any, resource: str, namespace: str | None = None, *,
                   label_selector: str = "", field_selector: str = "") -> ListWatch:
    """A ``ListWatch`` for a resource named in ``RESOURCES``; ``namespace=None`` means all namespaces."""
    mapping = RESOURCES.get(resource)
    if mapping is None:
        raise ValueError(f"unknown resource {resource!r}; known: {', '.join(sorted(RESOURCES))}")
    return ListWatch.for_mapping(api_client, mapping, namespace, label_selector=label_selector,
                                 field_selector=field_selector)


class InformerFactory:
    """Shared informers for one API client: ``factory.pods(field_selector="spec.nodeName=n1")``.

    Asking twice for the same resource, namespace and selectors returns the same informer. ``start``
    starts every informer made so far (call it again after making more); ``resync`` is their resync
    period in seconds. Other keyword arguments go to each ``SharedInformer``.

    ``namespace`` scopes namespaced kinds asked for without a namespace: one name, or several (one informer
    per namespace behind a ``MultiNamespaceInformer``, as controller-runtime's ``DefaultNamespaces``);
    ``None`` is all namespaces. Cluster-scoped kinds are not affected.
    """

    def __init__(self, api_client: Any, resync: float = 0.0, *, namespace: str | Sequence[str] | None = None,
                 page_size: int = 500, watch_timeout: float = 300.0, list_timeout: float = 60.0,
                 backoff: Backoff | None = None, inactivity_timeout: float | None = None,
                 transform: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.api_client = api_client
        self.resync = resync
        names = [namespace] if isinstance(namespace, str) else list(dict.fromkeys(namespace or ()))
        #: The namespaces namespaced kinds are cached from by default; empty for all namespaces.
        self.default_namespaces: list[str] = [n for n in names if n]
        #: The one default namespace, or None (all namespaces, or several: see ``default_namespaces``).
        self.namespace = self.default_namespaces[0] if len(self.default_namespaces) == 1 else None
        self._options: dict[str, Any] = {"page_size": page_size, "watch_timeout": watch_timeout,
                                         "list_timeout": list_timeout, "inactivity_timeout": inactivity_timeout,
                                         "transform": transform}
        self._backoff = backoff
        self._lock = threading.Lock()
        self._informers: dict[tuple[str, str, str, str], SharedInformer] = {}
        self._views: dict[tuple[str, str, str], MultiNamespaceInformer] = {}
        self._stop: threading.Event | None = None
        self._mapper: RESTMapper | None = None

    def informer(self, resource: str, namespace: str | None = None, *, label_selector: str = "",
                 field_selector: str = "") -> SharedInformer:
        """The shared informer for ``resource`` (a key of ``RESOURCES``); made on first use."""
        spec = RESOURCES.get(resource)

        def one(ns: str | None) -> SharedInformer:
            key = (resource, ns or "", label_selector, field_selector)
            return self._shared(key, lambda: list_watch_for(self.api_client, resource, ns,
                                                            label_selector=label_selector,
                                                            field_selector=field_selector))

        if spec is not None and spec.namespaced and namespace is None:
            return self._scoped((resource, label_selector, field_selector), one)
        return one(namespace)

    def for_kind(self, api_version: str, kind: str, namespace: str | None = None, *, label_selector: str = "",
                 field_selector: str = "") -> SharedInformer:
        """The shared informer of any served kind, built-in or custom (``"apps/v1", "Deployment"``).

        The kind is found through discovery (``UnknownKind`` names close matches when it is not served).
        ``namespace=None`` means the factory's namespace, or all namespaces.
        """
        mapping = self.mapper.mapping(api_version, kind)
        resource = f"{mapping.api_version}/{mapping.resource}"

        def one(ns: str | None) -> SharedInformer:
            key = (resource, ns or "", label_selector, field_selector)
            return self._shared(key, lambda: ListWatch.for_mapping(self.api_client, mapping, ns,
                                                                   label_selector=label_selector,
                                                                   field_selector=field_selector))

        if mapping.namespaced and namespace is None:
            return self._scoped((resource, label_selector, field_selector), one)
        return one(namespace)

    def _scoped(self, key: tuple[str, str, str], one: Callable[[str | None], SharedInformer]) -> SharedInformer:
        """A namespaced kind asked for without a namespace: the factory's namespace, all of them, or (with
        several) one informer per namespace behind one ``MultiNamespaceInformer``, made once."""
        if len(self.default_namespaces) < 2:
            return one(self.namespace)
        with self._lock:
            view = self._views.get(key)
        if view is None:
            made = MultiNamespaceInformer({ns: one(ns) for ns in self.default_namespaces})
            with self._lock:
                view = self._views.setdefault(key, made)
        return view

    @property
    def mapper(self) -> RESTMapper:
        """The discovery cache that ``for_kind`` resolves kinds with."""
        with self._lock:
            if self._mapper is None:
                self._mapper = RESTMapper(self.api_client)
            return self._mapper

    def _shared(self, key: tuple[str, str, str, str], list_watch: Callable[[], ListWatch]) -> SharedInformer:
        with self._lock:
            informer = self._informers.get(key)
            if informer is None:
                backoff = None if self._backoff is None else self._backoff.copy()  # each informer steps its own
                informer = SharedInformer(list_watch(), self.resync, backoff=backoff, **self._options)
                self._informers[key] = informer
            return informer

    def pods(self, namespace: str | None = None, *, label_selector: str = "",
             field_selector: str = "") -> SharedInformer:
        return self.informer("pods", namespace, label_selector=label_selector, field_selector=field_selector)

    def nodes(self, *, label_selector: str = "", field_selector: str = "") -> SharedInformer:
        return self.informer("nodes", label_selector=label_selector, field_selector=field_selector)

    def namespaces(self, *, label_selector: str = "", field_selector: str = "") -> SharedInformer:
        return self.informer("namespaces", label_selector=label_selector, field_selector=field_selector)

    def configmaps(self, namespace: str | None = None, *, label_selector: str = "",
                   field_selector: str = "") -> SharedInformer:
        return self.informer("configmaps", namespace, label_selector=label_selector,
                             field_selector=field_selector)

    def secrets(self, namespace: str | None = None, *, label_selector: str = "",
                field_selector: str = "") -> SharedInformer:
        return self.informer("secrets", namespace, label_selector=label_selector, field_selector=field_selector)

    def services(self, namespace: str | None = None, *, label_selector: str = "",
                 field_selector: str = "") -> SharedInformer:
        return self.informer("services", namespace, label_selector=label_selector,
                             field_selector=field_selector)

    def leases(self, namespace: str | None = None, *, label_selector: str = "",
               field_selector: str = "") -> SharedInformer:
        return self.informer("leases", namespace, label_selector=label_selector, field_selector=field_selector)

    def informers(self) -> list[SharedInformer]:
        """Every informer made, one per namespace for a multi-namespace view (not the views themselves)."""
        with self._lock:
            return list(self._informers.values())

    def start(self, stop: threading.Event) -> None:
        """Start every informer made so far that is not running yet."""
        self._stop = stop
        for informer in self.informers():
            informer.start(stop)

    def join(self, timeout: float | None = None) -> bool:
        """After ``stop`` is set, wait for every informer's threads to end; True if they all did."""
        deadline = None if timeout is None else time.monotonic() + timeout
        ended = True
        for informer in self.informers():
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ended = informer.join(left) and ended
        return ended

    def wait_for_cache_sync(self, timeout: float | None = None) -> bool:
        """Wait until every started informer has listed and its handlers have seen that state.

        False if ``timeout`` passed first or the factory was stopped.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        for informer in self.informers():
            if not informer.started:
                continue
            while not (informer.has_synced() and informer.handlers_synced()):
                if self._stop is not None and self._stop.is_set():
                    return False
                left = 0.1 if deadline is None else min(0.1, deadline - time.monotonic())
                if left <= 0:
                    return False
                if informer.has_synced():  # listed: its handlers are still being handed the list
                    informer.wait_for_handlers_sync(left)
                else:
                    informer.wait_for_sync(left)
        return True

    @property
    def started(self) -> bool:
        """Whether ``start`` was called."""
        return self._stop is not None

    def unsynced(self) -> list[SharedInformer]:
        """Informers that have not listed yet, to name them when a sync times out."""
        return [i for i in self.informers() if i.started and not (i.has_synced() and i.handlers_synced())]
