"""A small thread-safe cache of decisions, each kept for its own time to live.

Delegated authentication and authorization cache the API server's answers (upstream: 10s), so a scraper
hitting ``/metrics`` every few seconds costs one review per TTL, not one per request. Bounded: when full,
expired entries go first, then the oldest.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

from componentbase.util._clock import REAL_CLOCK, Clock

__all__ = ["TTLCache"]

V = TypeVar("V")


class TTLCache(Generic[V]):
    """Values that expire each at its own time, at most ``max_entries`` of them (see the module doc)."""

    def __init__(self, max_entries: int = 4096, clock: Clock = REAL_CLOCK) -> None:
        self._max = max_entries
        self._clock = clock
        self._lock = threading.Lock()
        self._items: OrderedDict[Hashable, tuple[float, V]] = OrderedDict()

    def get(self, key: Hashable) -> V | None:
        """Lock-free: a dict read is atomic, and a lock taken by every request convoys the serving threads."""
        found = self._items.get(key)
        if found is None:
            return None
        expires, value = found
        if expires <= self._clock.monotonic():
            with self._lock:
                if self._items.get(key) is found:
                    del self._items[key]
            return None
        return value

    def put(self, key: Hashable, value: V, ttl: float) -> None:
        if ttl <= 0:
            return
        with self._lock:
            now = self._clock.monotonic()
            self._items[key] = (now + ttl, value)
            self._items.move_to_end(key)
            if len(self._items) > self._max:
                for k in [k for k, (expires, _) in self._items.items() if expires <= now]:
                    del self._items[k]
                while len(self._items) > self._max:
                    self._items.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
