"""Delivering an informer's notifications to its event handlers, off the watch thread.

One thread per informer calls the handlers in the order they were added, so a slow handler delays
other handlers but never the watch, and every handler sees every change in the order the cache saw it.
Notifications travel in numbered batches; a handler added while the informer runs first receives the
cache's contents as adds, then only batches numbered after its registration, so it never sees a change
twice or a delete for an object it was never told about.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from componentbase.informers._cache import (
    DeletedFinalStateUnknown,
    deleted_object,
)

__all__ = ["ADD", "DELETE", "UPDATE", "Dispatcher", "HandlerRegistration", "Note"]

log = logging.getLogger("componentbase.informers")

Obj = dict[str, Any]
ADD, UPDATE, DELETE = "add", "update", "delete"
#: (kind, old, new): ADD (None, obj); UPDATE (old, new); DELETE (last state or tombstone, None).
Note = tuple[str, Any, Any]
_NOTES, _SYNCED, _REPLAY = 0, 1, 2


def _ignore(*_: Any) -> None:
    pass


class HandlerRegistration:
    """One handler's functions, returned by ``add_event_handler``; ``has_synced`` once it saw the initial state."""

    def __init__(self, on_add: Callable[[Obj], None] | None, on_update: Callable[[Obj, Obj], None] | None,
                 on_delete: Callable[[Obj | DeletedFinalStateUnknown], None] | None,
                 filter: Callable[[Obj], bool] | None, start_seq: int) -> None:
        self.on_add = on_add or _ignore
        self.on_update = on_update or _ignore
        self.on_delete = on_delete or _ignore
        self.filter = filter
        self.start_seq = start_seq
        self._synced = threading.Event()
        self._failures = 0

    def has_synced(self) -> bool:
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self._synced.wait(timeout)

    def deliver(self, kind: str, old: Any, new: Any) -> None:
        """Call the handler, as client-go's ``FilteringResourceEventHandler`` when there is a filter."""
        try:
            f = self.filter
            if kind == ADD:
                if f is None or f(new):
                    self.on_add(new)
            elif kind == UPDATE:
                if f is None:
                    self.on_update(old, new)
                else:
                    was, now = f(old), f(new)
                    if was and now:
                        self.on_update(old, new)
                    elif now:
                        self.on_add(new)
                    elif was:
                        self.on_delete(old)
            elif f is None or f(deleted_object(old)):
                self.on_delete(old)
            self._failures = 0
        except Exception:
            # A handler bug: say so (with its traceback the first time), and keep delivering.
            self._failures += 1
            if self._failures == 1:
                log.exception("event handler failed on %s", kind)
            else:
                log.error("event handler failed on %s (%d failures in a row)", kind, self._failures)


class Dispatcher:
    """The queue of notification batches and the thread that hands them to the handlers.

    The queue is a ``queue.SimpleQueue``: handing a batch to the sleeping dispatch thread is C code, where a
    ``threading.Condition`` costs about 20 us more of Python per wake-up, paid on every watch event.
    """

    def __init__(self, name: str, resync_period: float, resync: Callable[[], None]) -> None:
        self.name = name
        self.resync_period = resync_period
        self._resync = resync
        self._lock = threading.Lock()  # numbering and the list of handlers
        self._queue: queue.SimpleQueue[tuple[int, int, Any] | None] = queue.SimpleQueue()
        self._seq = 0
        self._handlers: tuple[HandlerRegistration, ...] = ()  # replaced, never changed: read without the lock
        self._synced = False  # the SYNCED batch has been delivered
        self._stopped = False

    # Called with the informer's lock held, so batch numbers follow the cache's order.

    def push(self, notes: list[Note], synced: bool = False) -> None:
        with self._lock:
            if notes:
                self._seq += 1
                self._queue.put((self._seq, _NOTES, notes))
            if synced:
                self._seq += 1
                self._queue.put((self._seq, _SYNCED, None))

    def register(self, reg_factory: Callable[[int], HandlerRegistration], snapshot: list[Obj] | None
                 ) -> HandlerRegistration:
        """Add a handler; ``snapshot`` (the cache now) is replayed to it as adds first."""
        with self._lock:
            reg = reg_factory(self._seq)
            self._handlers = (*self._handlers, reg)
            if snapshot is not None:
                self._seq += 1
                self._queue.put((self._seq, _REPLAY, (reg, snapshot)))
            return reg

    def unregister(self, reg: HandlerRegistration) -> None:
        with self._lock:
            self._handlers = tuple(h for h in self._handlers if h is not reg)

    def handlers_synced(self) -> bool:
        return all(h.has_synced() for h in self._handlers)

    def wait_handlers_synced(self, timeout: float) -> bool:
        """Block until every handler registered now has seen the first list, at most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        return all(h.wait_for_sync(max(0.0, deadline - time.monotonic())) for h in self._handlers)

    def stop(self) -> None:
        self._stopped = True
        self._queue.put(None)  # wakes the dispatch thread, which drops what is still queued

    # The dispatch thread.

    def run(self) -> None:
        period = self.resync_period
        next_resync = time.monotonic() + period if period > 0 else None
        get = self._queue.get
        while True:
            try:
                batch = get(True, None if next_resync is None else max(0.0, next_resync - time.monotonic()))
            except queue.Empty:
                batch = None
            if self._stopped:
                return
            if batch is not None:
                self._deliver(batch, self._handlers)
            if next_resync is not None and time.monotonic() >= next_resync:
                if self._synced:
                    self._resync()  # pushes a batch of update(obj, obj); delivered next round
                next_resync = time.monotonic() + period

    def _deliver(self, batch: tuple[int, int, Any], handlers: tuple[HandlerRegistration, ...]) -> None:
        seq, kind, payload = batch
        if kind == _NOTES:
            targets = [h for h in handlers if h.start_seq < seq]
            for note in payload:
                for h in targets:
                    h.deliver(*note)
        elif kind == _SYNCED:
            self._synced = True
            for h in handlers:
                if h.start_seq < seq:
                    h._synced.set()
        else:
            reg, snapshot = payload
            for obj in snapshot:
                reg.deliver(ADD, None, obj)
            if self._synced:
                reg._synced.set()
