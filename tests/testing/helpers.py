"""Shared by the loopback server's tests that drive the library's informers against it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from componentbase.informers import InformerFactory


@contextmanager
def informing(factory: InformerFactory) -> Iterator[None]:
    """Run ``factory``'s informers, synced, for the ``with`` block; stop and join them after."""
    stop = threading.Event()
    try:
        factory.start(stop)
        assert factory.wait_for_cache_sync(10)
        yield
    finally:
        stop.set()
        factory.join(10)
