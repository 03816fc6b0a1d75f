"""A cache scoped to several namespaces: one informer per namespace behind one informer's face.

As controller-runtime's multi-namespace cache (``cache.Options.DefaultNamespaces``): a controller allowed to
read only a few namespaces cannot list a kind across the cluster, so each namespace gets its own list and
watch, and readers (``get``, ``list``, ``by_index``, event handlers, sync) see them as one informer.
Cluster-scoped kinds are not split: the factory gives them one informer as before.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from componentbase.informers._cache import NAMESPACE_INDEX, DeletedFinalStateUnknown, IndexFunc
from componentbase.informers._informer import SharedInformer

__all__ = ["MultiNamespaceInformer", "MultiNamespaceRegistration"]

Obj = dict[str, Any]
_List = list  # the class below has a list() method


class MultiNamespaceRegistration:
    """The registrations of one handler on each namespace's informer; synced once every one is."""

    def __init__(self, parts: Mapping[str, Any]) -> None:
        self.parts = dict(parts)

    def has_synced(self) -> bool:
        return all(p.has_synced() for p in self.parts.values())

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        return all(p.wait_for_sync(None if deadline is None else max(0.0, deadline - time.monotonic()))
                   for p in self.parts.values())


class MultiNamespaceInformer(SharedInformer):
    """One read view (a ``SharedInformer`` to its readers) over one shared informer per namespace.

    A key (``namespace/name``) is looked up in its namespace's informer only; an object of a namespace
    outside the set is not cached (``get`` returns None), as controller-runtime's cache refuses it. The
    underlying informers belong to the factory, which starts, syncs and joins them: their own lists and
    watches, their own ``list_watch`` and ``reflector`` (``by_namespace``).
    """

    def __init__(self, by_namespace: Mapping[str, SharedInformer]) -> None:  # no super(): nothing of its own
        if not by_namespace:
            raise ValueError("a multi-namespace informer needs at least one namespace")
        #: Each namespace's informer, in the order the namespaces were given.
        self.by_namespace = dict(by_namespace)
        self._handlers_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MultiNamespaceInformer({', '.join(i.list_watch.describe() for i in self.by_namespace.values())})"

    def describe(self) -> str:
        return ", ".join(i.list_watch.describe() for i in self.by_namespace.values())

    # --- handlers and cache --------------------------------------------------------------------

    def add_event_handler(self, on_add: Callable[[Obj], None] | None = None,
                          on_update: Callable[[Obj, Obj], None] | None = None,
                          on_delete: Callable[[Obj | DeletedFinalStateUnknown], None] | None = None, *,
                          filter: Callable[[Obj], bool] | None = None) -> Any:
        """The handler on every namespace's informer; each calls it from its own dispatch thread."""
        with self._handlers_lock:
            return MultiNamespaceRegistration({
                ns: i.add_event_handler(on_add, on_update, on_delete, filter=filter)
                for ns, i in self.by_namespace.items()})

    def remove_event_handler(self, registration: Any) -> None:
        for ns, part in registration.parts.items():
            self.by_namespace[ns].remove_event_handler(part)

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        for informer in self.by_namespace.values():
            informer.add_indexers(indexers)

    def get(self, key: str) -> Obj | None:
        namespace = key.split("/", 1)[0] if "/" in key else ""
        informer = self.by_namespace.get(namespace)
        return None if informer is None else informer.get(key)

    def list(self) -> _List[Obj]:
        return [obj for informer in self.by_namespace.values() for obj in informer.list()]

    def by_index(self, index_name: str, value: str) -> _List[Obj]:
        if index_name == NAMESPACE_INDEX:
            informer = self.by_namespace.get(value)
            return [] if informer is None else informer.by_index(index_name, value)
        return [obj for informer in self.by_namespace.values() for obj in informer.by_index(index_name, value)]

    @property
    def last_sync_resource_version(self) -> str:
        raise AttributeError("a multi-namespace informer has one resourceVersion per namespace: see by_namespace")

    # --- running -------------------------------------------------------------------------------

    def start(self, stop: threading.Event) -> None:
        for informer in self.by_namespace.values():
            informer.start(stop)

    def run(self, stop: threading.Event) -> None:
        self.start(stop)
        stop.wait()
        self.join(5.0)

    def join(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        return all([i.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
                    for i in self.by_namespace.values()])

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self.by_namespace.values())

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        return all(i.wait_for_sync(None if deadline is None else max(0.0, deadline - time.monotonic()))
                   for i in self.by_namespace.values())

    def handlers_synced(self) -> bool:
        return all(i.handlers_synced() for i in self.by_namespace.values())

    def wait_for_handlers_sync(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        return all(i.wait_for_handlers_sync(max(0.0, deadline - time.monotonic()))
                   for i in self.by_namespace.values())

    @property
    def started(self) -> bool:
        return all(i.started for i in self.by_namespace.values())
