"""Read-your-own-writes: the next reconcile of an object this process wrote waits until the cache has it.

An informer's cache lags the writes that go through the API server. A reconcile that runs again before its
own write came back through the watch sees the old object and would act on it twice (a second write, a
conflict). As kopf does after its own patches, the controller waits, bounded, for the written
resourceVersion to be seen.
"""

from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["WriteTracker"]

Key = tuple[str, str, str]  # apiVersion, kind, namespace/name


def _key(obj: dict[str, Any]) -> Key | None:
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if not name or not obj.get("kind"):
        return None
    ns = meta.get("namespace") or ""
    return str(obj.get("apiVersion", "")), str(obj["kind"]), f"{ns}/{name}" if ns else str(name)


class WriteTracker:
    """The resourceVersions this process wrote and its caches have not shown yet."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending: dict[Key, str] = {}

    def wrote(self, obj: dict[str, Any]) -> None:
        """An object as the server answered a write: its cache must show this resourceVersion before the
        next reconcile of it."""
        key, rv = _key(obj), (obj.get("metadata") or {}).get("resourceVersion")
        if key is not None and rv:
            with self._cond:
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
