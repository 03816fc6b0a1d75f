"""Telling ``on_new_leader`` about each newly observed holder, off the election's own thread."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

__all__ = ["Notifier"]

log = logging.getLogger("componentbase.leaderelection._elector")


class Notifier:
    """Delivers ``on_new_leader`` in order on one thread, so a slow callback never delays renewals."""

    def __init__(self, callback: Callable[[str], None]) -> None:
        self._callback = callback
        self._queue: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._mu = threading.Lock()

    def notify(self, identity: str) -> None:
        with self._mu:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="leaderelection-notify", daemon=True)
                self._thread.start()
        self._queue.put(identity)

    def _loop(self) -> None:
        while True:
            identity = self._queue.get()
            try:
                self._callback(identity)
            except Exception:
                log.exception("on_new_leader callback failed")
