"""``CacheSyncCheck``: the ``/readyz`` check "informer-sync", failing until a component's caches are synced.

A replica whose caches are still listing would act on a partial view (or, as a standby, take over without
one), so it is not ready. An informer that must relist (its position meant nothing to the server, its watch
failed) is not synced until the list is in its cache (``SharedInformer.has_synced``): unready again till then.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from componentbase.informers._factory import InformerFactory

__all__ = ["CacheSyncCheck"]


class CacheSyncCheck:
    """A health check (``name``, ``check()``) over the informer factories it was given with ``watch``.

    Made before serving starts (a component's options put it in ``Config.readyz_checks``) and given the
    factory once there is one (``Manager.from_config`` does): until then it fails, "not started".
    """

    name = "informer-sync"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._factories: list[InformerFactory] = []

    def watch(self, factory: InformerFactory) -> None:
        with self._lock:
            self._factories.append(factory)

    def check(self) -> None:
        with self._lock:
            factories = list(self._factories)
        if not factories or not all(f.started for f in factories):
            raise RuntimeError("informers not started")
        waiting = [i.list_watch.describe() for f in factories for i in f.unsynced()]
        if waiting:
            raise RuntimeError(f"{len(waiting)} informers not synced: {', '.join(sorted(waiting))}")
