"""``sink="auto"``: Events start on a thread of the component and move to a child process when their rate
stays high, so that only a component that records many of them pays for the child.

Measured on the project's loaded 2-core machine against the loopback server in its own process (1,500
Events, two rounds each): the thread sender costs the component 0.35-0.8 ms of CPU per Event (the API
call, under its GIL); handing one to the child costs it 0.01 ms. The child (``componentbase.events._process``)
costs 0.45-0.57 CPU-s to start (it imports the official client; 1-2 s wall) and 47 MB RSS, so it pays
back after roughly 700-1,400 Events. A component recording a few Events a minute never earns that back;
one recording hundreds a second (a scheduler binding a burst of pods, a virtual kubelet starting them)
earns it within seconds, and its other threads get the GIL back.

The move, once, by a helper thread: start the child while the thread keeps sending; once the child has
its client, new events queue for the child (held), the thread writes what it already has, and its
correlator (aggregation records, similar-message sets, spam buckets) is handed to the child before the
held events. Every event is written once, by one of the two, and counts, series and spam filtering
carry on as if one sender had written them all. If the child cannot start (or its client cannot be
carried), the thread keeps sending and no move is tried again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from componentbase.events._process import Item, ProcessSender
from componentbase.util import REAL_CLOCK, Clock, TokenBucket

__all__ = ["MOVE_BURST", "MOVE_RATE", "AutoSender"]

log = logging.getLogger("componentbase.events")

#: Events recorded per second the thread may keep up indefinitely: 20/s costs the component about 1% of a
#: core, which would take the child (0.5 CPU-s to start, 47 MB) about a minute to pay back.
MOVE_RATE = 20.0
#: Events recorded above ``MOVE_RATE`` before the sender moves (35-80 ms of the component's CPU, a tenth of
#: the child's start): a burst of this size stays on the thread (a test's dozens of pods, a controller's
#: resync of 100 objects); a sustained 100/s moves within ~1.3 s and pays the child back within ~10 s.
MOVE_BURST = 100


class AutoSender:
    """A thread sender that hands over to a process sender once recorded Events outrun ``MOVE_RATE`` by
    ``MOVE_BURST``: counted as they are recorded, not as the thread writes them, since a thread starved of
    the GIL by a busy component writes slowly exactly when moving would help most (a virtual kubelet starting
    500 pods had recorded 500 Events while its thread had written 50).

    ``thread()`` builds the thread sender; ``spawn()`` a held ``ProcessSender``, or None when the
    client cannot be carried (it logs why). ``process`` is the child's ``Popen`` once events go to it.
    """

    def __init__(self, thread: Callable[[], Any], spawn: Callable[[], ProcessSender | None],
                 *, clock: Clock = REAL_CLOCK) -> None:
        self._spawn = spawn
        self._bucket = TokenBucket(MOVE_RATE, MOVE_BURST, clock=clock)
        self._lock = threading.Lock()  # the move and close
        self._switch = threading.Lock()  # submit and the moment events start going to the child
        self._moving = False  # a move was started: never two
        self._closing = False
        self._mover: threading.Thread | None = None
        self._child: ProcessSender | None = None  # spawned, perhaps not yet sending
        self._process: ProcessSender | None = None  # sending: events go to it
        self._thread = thread()
        self._current: Any = self._thread

    @property
    def process(self) -> Any:
        """The child's ``Popen`` once events go to it; None until then."""
        return self._process.process if self._process is not None else None

    @property
    def sent(self) -> int:
        return int(self._thread.sent) + (self._process.sent if self._process is not None else 0)

    def submit(self, item: Item) -> bool:
        if not self._moving and self._bucket.reserve(0) is None:
            self._start_move()
        with self._switch:
            return bool(self._current.submit(item))

    def flush(self, timeout: float | None) -> bool:
        """Both senders written out; events held for the child are written once the thread's are."""
        deadline = None if timeout is None else time.monotonic() + timeout
        done = bool(self._thread.flush(timeout))
        process = self._process
        if process is None:
            return done
        return process.flush(None if deadline is None else max(0.0, deadline - time.monotonic())) and done

    def close(self, timeout: float | None) -> None:
        with self._lock:
            self._closing = True
            child = self._child
        self._thread.close(timeout)  # ends a drain the mover waits in
        if child is not None:
            child.close(timeout)  # ends the mover's wait for the child to be ready
        mover = self._mover
        if mover is not None:
            mover.join(timeout)

    def _start_move(self) -> None:
        with self._lock:
            if self._moving or self._closing:
                return
            self._moving = True
            log.info("Events are recorded at more than %g/s: moving the event sender to a child process", MOVE_RATE)
            self._mover = threading.Thread(target=self._move, name="event-sender-move", daemon=True)
            self._mover.start()

    def _move(self) -> None:
        with self._lock:
            if self._closing:
                return
            child = self._child = self._spawn()
        if child is None:
            return
        child.ready.wait()  # set when the child has its client, dies, or is closed
        with self._lock, self._switch:
            if self._closing or child.lost:
                return  # close() stops it; a child that died has said so in the log
            reserved = self._thread.pending
            child.reserve(reserved)  # queue_size bounds what both hold
            self._process = self._current = child
        correlator = self._thread.drain()
        if not self._closing:
            child.release(correlator, reserved)
            self._thread.close(1.0)  # it has nothing left and gets nothing more
