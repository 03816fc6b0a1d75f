"""``SharedInformer``: one list+watch feeding a local indexed cache and any number of event handlers.

As client-go's ``SharedIndexInformer``: the reflector thread keeps the cache equal to the server, a
dispatch thread calls handlers (so they never block the watch), a relist turns into the adds, updates
and deletes (``DeletedFinalStateUnknown``) that make the handlers' view match, and a resync period
re-delivers ``on_update(obj, obj)`` for every cached object. Cached objects are the server's JSON as
plain dicts, shared by everyone: treat them as read-only and copy before changing one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from componentbase.informers._cache import (
    DeletedFinalStateUnknown,
    Indexer,
    IndexFunc,
)
from componentbase.informers._dispatch import (
    ADD,
    DELETE,
    UPDATE,
    Dispatcher,
    HandlerRegistration,
    Note,
)
from componentbase.informers._listwatch import ListWatch
from componentbase.informers._reflector import Reflector
from componentbase.util import Backoff

__all__ = ["SharedInformer", "strip_managed_fields"]

Obj = dict[str, Any]
_List = list  # the class below has a list() method


def _rv(obj: Obj) -> Any:
    return obj["metadata"].get("resourceVersion")


def _uid(obj: Obj) -> Any:
    return obj["metadata"].get("uid")


def strip_managed_fields(obj: Obj) -> Obj:
    """A transform dropping ``metadata.managedFields``: often the largest part of a cached object, and
    rarely read by a controller (as controller-runtime users do with ``cache.TransformStripManagedFields``)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return obj


class SharedInformer:
    """List+watch one resource into an ``Indexer`` and tell event handlers about every change.

    ``resync_period`` (seconds, 0 for never) re-delivers every cached object as ``on_update(obj, obj)``,
    so controllers periodically re-check their work. ``watch_timeout`` is the shortest server-side watch
    timeout (each watch picks one between it and twice it, as client-go does).
    """

    def __init__(self, list_watch: ListWatch, resync_period: float = 0.0, *,
                 indexers: Mapping[str, IndexFunc] | None = None, page_size: int = 500,
                 watch_timeout: float = 300.0, list_timeout: float = 60.0,
                 backoff: Backoff | None = None, inactivity_timeout: float | None = None,
                 transform: Callable[[Obj], Obj] | None = None) -> None:
        self.list_watch = list_watch
        #: Applied to every object before it is cached (and handed to handlers): drop what is not needed
        #: (``strip_managed_fields``) to bound memory.
        self.transform = transform
        self.resync_period = resync_period
        self.indexer = Indexer(indexers)
        self._lock = threading.Lock()  # orders cache writes with notification batches
        self._synced = threading.Event()  # the cache holds the server's state (cleared while a relist is due)
        self._listed = False  # a first list was filed
        self._started = False
        self._dispatcher = Dispatcher(list_watch.describe(), resync_period, self._resync)
        self._reflector = Reflector(list_watch, self, page_size=page_size, watch_timeout=watch_timeout,
                                    list_timeout=list_timeout, backoff=backoff,
                                    inactivity_timeout=inactivity_timeout, on_stale=self._synced.clear)
        self._threads: _List[threading.Thread] = []

    def __repr__(self) -> str:
        return f"SharedInformer({self.list_watch.describe()})"

    # --- handlers and cache --------------------------------------------------------------------

    def add_event_handler(self, on_add: Callable[[Obj], None] | None = None,
                          on_update: Callable[[Obj, Obj], None] | None = None,
                          on_delete: Callable[[Obj | DeletedFinalStateUnknown], None] | None = None, *,
                          filter: Callable[[Obj], bool] | None = None) -> HandlerRegistration:
        """Register handlers; added to a running informer, they first get every cached object as an add.

        With ``filter``, only objects it accepts are seen: an update that makes an object pass is an
        add, one that makes it fail is a delete (client-go's ``FilteringResourceEventHandler``).
        ``on_delete`` may receive a ``DeletedFinalStateUnknown`` (see ``deleted_object``).
        """
        def make(seq: int) -> HandlerRegistration:
            return HandlerRegistration(on_add, on_update, on_delete, filter, seq)

        with self._lock:
            return self._dispatcher.register(make, self.indexer.list())

    def remove_event_handler(self, registration: HandlerRegistration) -> None:
        self._dispatcher.unregister(registration)

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        self.indexer.add_indexers(indexers)

    def get(self, key: str) -> Obj | None:
        return self.indexer.get(key)

    def list(self) -> _List[Obj]:
        return self.indexer.list()

    def by_index(self, index_name: str, value: str) -> _List[Obj]:
        return self.indexer.by_index(index_name, value)

    @property
    def last_sync_resource_version(self) -> str:
        return self._reflector.resource_version

    @property
    def reflector(self) -> Reflector:
        return self._reflector

    # --- running -------------------------------------------------------------------------------

    def start(self, stop: threading.Event) -> None:
        """Start the watch and dispatch threads (once); they end when ``stop`` is set."""
        if self._started:
            return
        self._started = True
        name = self.list_watch.resource
        self._threads = [
            threading.Thread(target=self._reflector.run, name=f"reflector-{name}", daemon=True),
            threading.Thread(target=self._dispatcher.run, name=f"informer-{name}", daemon=True),
            threading.Thread(target=self._stop_on, args=(stop,), name=f"informer-stop-{name}", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def run(self, stop: threading.Event) -> None:
        """Start, then block until ``stop`` is set and the threads have ended."""
        self.start(stop)
        stop.wait()
        self.join(5.0)

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the threads to end after a stop; True if they all did."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self._threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)

    def _stop_on(self, stop: threading.Event) -> None:
        stop.wait()
        self._reflector.stop()
        self._dispatcher.stop()

    def has_synced(self) -> bool:
        """True once a list is in the cache; False again from a failed watch (or a history gone backwards)
        until the relist is in (handlers: see their registration's ``has_synced``)."""
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self._synced.wait(timeout)

    def handlers_synced(self) -> bool:
        """True once every registered handler has been handed the state of the first list."""
        return self._dispatcher.handlers_synced()

    def wait_for_handlers_sync(self, timeout: float) -> bool:
        """Block until every registered handler has been handed the first list, at most ``timeout`` seconds."""
        return self._dispatcher.wait_handlers_synced(timeout)

    @property
    def started(self) -> bool:
        return self._started

    # --- the reflector's sink (its thread only) ------------------------------------------------

    def replace(self, items: _List[Obj], resource_version: str) -> None:
        """A fresh list: file it and tell handlers what changed since the cache's last state."""
        if self.transform is not None:
            items = [self.transform(obj) for obj in items]
        key_of = self.indexer.key_func
        with self._lock:
            before = self.indexer.snapshot()
            changes: _List[tuple[str, Obj | None]] = []
            notes: _List[Note] = []
            for obj in items:
                key = key_of(obj)
                old = before.pop(key, None)
                if old is None:
                    changes.append((key, obj))
                    notes.append((ADD, None, obj))
                elif _rv(old) != _rv(obj) or _uid(old) != _uid(obj):  # a restored server reuses versions
                    changes.append((key, obj))
                    notes.append((UPDATE, old, obj))
            for key, old in before.items():
                changes.append((key, None))
                notes.append((DELETE, DeletedFinalStateUnknown(key, old), None))
            self.indexer.apply(changes)
            first = not self._listed
            self._listed = True
            self._synced.set()
            self._dispatcher.push(notes, synced=first)

    def apply(self, events: _List[Obj]) -> None:
        """Watch events (``{"type", "object"}``), in order."""
        if self.transform is not None:
            events = [{"type": ev["type"], "object": self.transform(ev["object"])} for ev in events]
        key_of = self.indexer.key_func
        changes: _List[tuple[str, Obj | None]] = []
        for ev in events:
            obj = ev["object"]
            changes.append((key_of(obj), None if ev["type"] == "DELETED" else obj))
        with self._lock:
            olds = self.indexer.apply(changes)
            notes: _List[Note] = []
            for ev, old in zip(events, olds, strict=True):
                obj = ev["object"]
                if ev["type"] == "DELETED":
                    notes.append((DELETE, obj, None))
                elif old is None:
                    notes.append((ADD, None, obj))
                else:
                    notes.append((UPDATE, old, obj))
            self._dispatcher.push(notes)

    def _resync(self) -> None:
        with self._lock:
            self._dispatcher.push([(UPDATE, obj, obj) for obj in self.indexer.list()])
