"""The event sender in a child process: the component's threads only hand plain dicts to a pipe.

Each Event costs an API call, and an API call costs the calling Python process about half a millisecond
of CPU under its one GIL. Here a child process (a fresh interpreter started with ``subprocess``, never a
fork of a threaded process) builds its own official client from a ``ClientDescription`` of the parent's,
correlates and writes; the parent pays a deque append per event and one pickled batch per wake-up.

Protocol, one socket pair with ``multiprocessing.connection`` framing. First the child's arguments
(client description, writer settings, parent pid, log level); then parent -> child
``("events", [(time, event), ...])``, ``("state", correlator)`` (what the thread sender had correlated,
before any events, when ``sink="auto"`` moves) and ``("stop",)``; child -> parent ``("ready",)`` once its
client is built, ``("done", n, sent, calls)`` after each batch (``calls``: its API calls as
``(verb, code, seconds)``, for the parent's metrics) and ``("log", level, message)`` for what the
writer logs. The child ends on ``stop``, when the pipe closes, or when its parent is gone (it checks
every second): never an orphan.
If the child dies, the parent logs one line and sends from a thread of its own from then on.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any

from componentbase.client import (
    ClientDescription,
    RequestObservation,
    describe_client,
    host_of,
    status_of,
)
from componentbase.events._writer import (
    Correlator,
    EventWriter,
    WriterSettings,
)
from componentbase.metrics import metrics_for

__all__ = ["Item", "ProcessSender"]

log = logging.getLogger("componentbase.events")

Item = tuple[float, dict[str, Any]]
_PARENT_CHECK_SECONDS = 1.0
#: How long the feeder lets events gather before it sends them: an event sent alone costs this process and
#: the child a pickle, a message and a wake-up each (0.25 ms more per event here, 2 ms apart, than batched).
_LINGER = 0.02


class ProcessSender:
    """The parent's side: a bounded count of events in flight, a feeder thread and a reply reader thread.

    ``fallback`` builds the in-process sender used once the child is gone. A ``held`` sender queues events
    but sends none until ``release`` hands it the correlator they continue from (``sink="auto"``).
    """

    def __init__(self, api_client: Any, settings: WriterSettings, queue_size: int,
                 fallback: Callable[[], Any], *, held: bool = False) -> None:
        description = describe_client(api_client)  # NotPortable: the caller sends from its own thread
        self.api_client = api_client
        self.queue_size = queue_size
        self._fallback_factory = fallback
        self._fallback: Any = None
        self._items: deque[Any] = deque()
        self._wake = threading.Event()
        self._feeding = False  # the feeder is awake and will look at _items again before it sleeps
        self._cond = threading.Condition()
        self._pending = 0  # submitted, not yet reported done by the child
        self._sent = 0
        self._closing = False
        self.ready = threading.Event()  # the child has its client, or is gone
        self._released = threading.Event()  # the feeder may send
        self._state: Correlator | None = None
        if not held:
            self._released.set()
        self._conn, self.process = _spawn(description, settings)
        self._feeder = threading.Thread(target=self._feed, name="event-sender-feed", daemon=True)
        self._reader = threading.Thread(target=self._read, name="event-sender-replies", daemon=True)
        self._feeder.start()
        self._reader.start()

    @property
    def sent(self) -> int:
        return self._sent + (self._fallback.sent if self._fallback is not None else 0)

    @property
    def lost(self) -> bool:
        """The child is gone and a thread of this process sends instead."""
        return self._fallback is not None

    def reserve(self, n: int) -> None:
        """Count ``n`` events another sender still writes against ``queue_size``, until ``release``."""
        with self._cond:
            self._pending += n

    def release(self, correlator: Correlator, reserved: int) -> None:
        """Start sending: the child continues from ``correlator``; the ``reserved`` events are written."""
        with self._cond:
            self._state = correlator
            if self._fallback is None:  # a child lost meanwhile counted them as lost already
                self._pending -= reserved
            self._cond.notify_all()
        self._released.set()

    def submit(self, item: Item) -> bool:
        """Queue one ``(time, event)``; False (dropped) when ``queue_size`` are already in flight."""
        with self._cond:
            fallback = self._fallback
            if fallback is None:
                if self._pending >= self.queue_size:
                    return False
                self._pending += 1
                self._items.append(item)
                wake, self._feeding = not self._feeding, True
        if fallback is not None:
            return bool(fallback.submit(item))
        if wake:  # a busy feeder takes this item on its next pass: waking it per event costs the caller
            self._wake.set()
        return True

    def flush(self, timeout: float | None) -> bool:
        with self._cond:
            done = self._cond.wait_for(lambda: self._pending == 0, timeout)
        if self._fallback is not None:
            return bool(self._fallback.flush(timeout)) and done
        return done

    def close(self, timeout: float | None) -> None:
        """Stop the child (what ``flush`` did not write is dropped) within about ``timeout`` seconds."""
        self._closing = True
        with self._cond:
            if not self._released.is_set():
                self._items.clear()  # held for a hand-over that is not coming: not written from scratch
            self._items.append(None)  # the feeder sends ("stop",) after what it has
            self._feeding = True
        self._released.set()
        self._wake.set()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            log.warning("event sender process %d did not stop within %ss; killing it", self.process.pid, timeout)
            self.process.kill()
            self.process.wait()
        self._feeder.join(1.0)
        self._reader.join(1.0)
        self._conn.close()
        self.ready.set()  # for whoever waits for a child that will not come now
        if self._fallback is not None:
            self._fallback.close(timeout)

    # --- threads -----------------------------------------------------------------------------

    def _feed(self) -> None:
        try:
            self._released.wait()
            if self._state is not None:
                self._conn.send(("state", self._state))
            while True:
                self._wake.wait()
                self._wake.clear()
                self._wake.wait(_LINGER)  # more events join this batch; close() ends the wait
                while True:
                    with self._cond:  # idle only when nothing is left: submit wakes an idle feeder
                        items = list(self._items)
                        self._items.clear()
                        self._feeding = bool(items)
                    if not items:
                        break
                    batch = [item for item in items if item is not None]
                    if batch:
                        self._conn.send(("events", batch))
                    if len(batch) < len(items):
                        self._conn.send(("stop",))
                        return
        except (OSError, ValueError):
            return  # the child is gone: the reader says so

    def _read(self) -> None:
        try:
            while True:
                message = self._conn.recv()
                if message[0] == "done":
                    self._done(message[1], message[2], message[3])
                elif message[0] == "log":
                    log.log(message[1], "%s", message[2])
                elif message[0] == "ready":
                    self.ready.set()
        except (EOFError, OSError):
            pass
        if not self._closing:
            self._child_lost()

    def _done(self, n: int, sent: int, calls: list[tuple[str, str, float]]) -> None:
        with self._cond:
            self._pending -= n
            self._sent = sent
            self._cond.notify_all()
        if calls:
            metrics = metrics_for(self.api_client)
            if metrics is not None:
                host = host_of(self.api_client)
                for verb, code, seconds in calls:
                    metrics.observe_rest_request(verb, host, code, seconds)

    def _child_lost(self) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(1.0)
        with self._cond:
            self._fallback = self._fallback_factory()
            lost, self._pending = self._pending, 0
            self._items.clear()
            self._items.append(None)  # the feeder's work is over: it ends, whether or not close() comes
            self._feeding = True
            self._cond.notify_all()
        self._released.set()
        self._wake.set()
        self.ready.set()
        log.error("event sender process exited (code %s); %d events lost; sending events from this process",
                  self.process.returncode, lost)


def _spawn(description: ClientDescription, settings: WriterSettings) -> tuple[Connection, subprocess.Popen[bytes]]:
    """A fresh interpreter running ``child_main`` on one end of a socket pair, its arguments sent first.

    Not ``multiprocessing``: its ``spawn`` runs the parent's main script again in the child, which a
    component's script need not be guarded against; this child imports only ``componentbase``.
    """
    ours, theirs = socket.socketpair()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # where ``componentbase`` is
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", "import componentbase.events._process as m; m.child_main()", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env)
    finally:
        theirs.close()
    conn = Connection(ours.detach())
    level = logging.getLogger("componentbase.events").getEffectiveLevel()
    conn.send_bytes(pickle.dumps((description, settings, os.getpid(), level)))
    return conn, process


# --- the child -----------------------------------------------------------------------------


class _Calls:
    """The writer's API calls, timed and counted, for the parent's metrics."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, float]] = []

    @contextlib.contextmanager
    def observe(self, api_client: Any, verb: str) -> Iterator[Any]:
        obs = RequestObservation()
        start = time.perf_counter()
        try:
            yield obs
        except BaseException as err:
            status = status_of(err)
            obs.code = obs.code or (str(status) if status else "<error>")
            raise
        finally:
            self.calls.append((verb, obs.code or "2xx", time.perf_counter() - start))

    def take(self) -> list[tuple[str, str, float]]:
        calls, self.calls = self.calls, []
        return calls


class _PipeLog(logging.Handler):
    def __init__(self, send: Callable[[Any], None]) -> None:
        super().__init__()
        self.send = send

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.send(("log", record.levelno, record.getMessage()))
        except (OSError, ValueError):
            pass


def child_main() -> None:
    """The event sender process: ``python -c ... <fd>``, the pipe's end being that descriptor.

    A fresh interpreter (not a fork), so it ends as any program does: its writer thread is told to stop
    and joined, and only if a call is still blocked past the request timeout does it exit without it.
    """
    # Ctrl-C, or a SIGTERM sent to the whole group (a shell, systemd's control-group stop), reaches this process
    # too: the parent decides, and stops it after a flush; a parent that is gone ends it all the same.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    conn = Connection(int(sys.argv[1]))
    try:
        description, settings, parent, level = pickle.loads(conn.recv_bytes())
    except (EOFError, OSError):
        sys.exit(0)
    lock = threading.Lock()

    def send(message: Any) -> None:
        with lock:
            conn.send(message)

    logger = logging.getLogger("componentbase.events")
    logger.setLevel(level)
    logger.propagate = False
    logger.addHandler(_PipeLog(send))
    stopped = threading.Event()
    inbox: queue.SimpleQueue[list[Item] | Correlator | None] = queue.SimpleQueue()
    try:
        api = description.new_api_client()
    except Exception as err:
        logger.error("event sender process: cannot build its client: %s", err)
        sys.exit(1)
    calls = _Calls()
    writer = EventWriter(api, settings, stopped, observe=calls.observe)
    try:
        send(("ready",))
    except (OSError, ValueError):  # the parent stopped while this process was starting: nothing to send
        sys.exit(0)
    thread = threading.Thread(target=_write_loop, args=(inbox, writer, calls, send), name="event-sender-write")
    thread.start()
    try:
        while os.getppid() == parent:
            if not conn.poll(_PARENT_CHECK_SECONDS):
                continue
            message = conn.recv()
            if message[0] not in ("events", "state"):
                break
            inbox.put(message[1])
    except (EOFError, OSError):
        pass
    finally:
        stopped.set()  # ends retries and the rest of a batch
        inbox.put(None)
        thread.join(settings.request_timeout + 1.0)  # a call in flight ends by its own timeout
    if thread.is_alive():
        logger.error("event sender process: %s still blocked %.0fs after stopping; exiting without it", thread.name,
                     settings.request_timeout + 1.0)
        sys.stderr.flush()
        os._exit(0)
    api.close()
    conn.close()


def _write_loop(inbox: queue.SimpleQueue[list[Item] | Correlator | None], writer: EventWriter, calls: _Calls,
                send: Callable[[Any], None]) -> None:
    """Write what arrives, in batches, until the ``None`` that ``child_main`` puts when it stops; a
    ``Correlator`` (it comes before any events) replaces the writer's."""
    while True:
        first = inbox.get()
        if first is None:
            return
        if isinstance(first, Correlator):
            writer.correlator = first
            continue
        items, last = first, False
        with contextlib.suppress(queue.Empty):
            while not last:
                more = inbox.get_nowait()
                if more is None:
                    last = True
                elif isinstance(more, list):
                    items.extend(more)
        try:
            writer.write_batch(items)
        except Exception as err:  # a bug here must not leave the parent waiting for these forever
            logging.getLogger("componentbase.events").error("event sender process: %s", err)
        try:
            send(("done", len(items), writer.sent, calls.take()))
        except (OSError, ValueError):
            return
        if last:
            return
