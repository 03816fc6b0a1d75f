"""Read-your-own-writes: the next reconcile of an object this process wrote waits until the cache has it.

An informer's cache lags the writes that go through the API server. A reconcile that runs again before its
own write came back through the watch sees the old object and would act on it twice (a second write, a
conflict). As kopf does after its own patches, the controller waits, bounded, for the written
resourceVersion to be seen.

A write whose answer the cache already holds is not waited for: its watch event came before the writer
recorded it, or the write changed nothing (kube answers a no-op with the stored resourceVersion, and sends
no event). Waiting for either would stall the object's next reconcile for the whole timeout.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Protocol

from componentbase.informers import deleted_object

__all__ = ["WriteTracker"]

Key = tuple[str, str, str]  # apiVersion, kind, namespace/name


def _key(obj: dict[str, Any]) -> Key | None:
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if not name or not obj.get("kind"):
        return None
    ns = meta.get("namespace") or ""
    return str(obj.get("apiVersion", "")), str(obj["kind"]), f"{ns}/{name}" if ns else str(name)


class Cache(Protocol):
    """What the tracker needs of an informer: its handlers and its cached objects by key."""

    def add_event_handler(self, on_add: Any = None, on_update: Any = None, on_delete: Any = None) -> Any: ...

    def get(self, key: str) -> dict[str, Any] | None: ...


class WriteTracker:
    """The resourceVersions this process wrote and its caches have not shown yet."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending: dict[Key, str] = {}
        self._caches: list[Cache] = []

    def track(self, cache: Cache) -> None:
        """Settle writes by ``cache``'s events, and ask it whether a write has come back already."""
        self._caches.append(cache)
        cache.add_event_handler(on_add=self.seen, on_update=lambda old, new: self.seen(new),
                                on_delete=lambda obj: self.forget(deleted_object(obj)))

    def _cached(self, key: Key, rv: str) -> bool:
        """Whether a cache holds this object at ``rv`` (caches update before their handlers run)."""
        api_version, kind, name = key
        for cache in self._caches:
            obj = cache.get(name)
            if obj is not None and obj.get("kind") == kind and obj.get("apiVersion") == api_version \
                    and (obj.get("metadata") or {}).get("resourceVersion") == rv:
                return True
        return False

    def wrote(self, obj: dict[str, Any]) -> None:
        """An object as the server answered a write: its cache must show this resourceVersion before the
        next reconcile of it, unless it does already."""
        key, rv = _key(obj), (obj.get("metadata") or {}).get("resourceVersion")
        if key is not None and rv:
            with self._cond:  # seen() takes it too: a cache updated after this check settles the write
                if not self._cached(key, str(rv)):
                    self._pending[key] = str(rv)

    def seen(self, obj: dict[str, Any]) -> None:
        """An object a cache now holds; it settles a write of the same resourceVersion."""
        key = _key(obj)
        if key is None:
            return
        with self._cond:
            if self._pending.get(key) == (obj.get("metadata") or {}).get("resourceVersion"):
                del self._pending[key]
                self._cond.notify_all()

    def forget(self, obj: dict[str, Any]) -> None:
        """The object is gone: nothing of it is pending any more."""
        key = _key(obj)
        if key is not None:
            with self._cond:
                if self._pending.pop(key, None) is not None:
                    self._cond.notify_all()

    def wait(self, cached: dict[str, Any], timeout: float) -> bool:
        """Until the cache shows this process's last write of ``cached`` (the object as the cache has it
        now); False if ``timeout`` passed first."""
        k = _key(cached)
        if k is None:
            return True
        deadline = time.monotonic() + timeout
        with self._cond:
            # The watch may bring the write back before the writer has recorded it: the cache has it already.
            if self._pending.get(k) == (cached.get("metadata") or {}).get("resourceVersion"):
                del self._pending[k]
            while k in self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True
