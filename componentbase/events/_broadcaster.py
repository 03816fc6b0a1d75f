"""Recording core/v1 Events, aggregated the way kube's ``EventCorrelator`` does, without blocking callers.

``recorder.event(pod, "Normal", "Scheduled", "Successfully assigned ns/p to n1")`` only queues; a
background sender writes through the official client. Repeats of the same event (same object, type,
reason and message) patch one Event's ``count`` and ``lastTimestamp`` instead of creating new ones;
more than ``max_similar`` different messages for the same object, type and reason within
``aggregate_window`` are combined into one Event ("(combined from similar events): ..."); a token
bucket per object (burst 25, one per 5 minutes after that) keeps a hot loop from flooding the server.
When the queue is full, events are dropped with a log line: recording must never slow the component.

The sender is a thread of the component (``sink="thread"``), or a child process (``sink="process"``,
``componentbase.events._process``) so that the API calls of a component recording an event per object
do not take the component's GIL, or a thread that moves to a child process once Events are recorded at a
sustained high rate (``sink="auto"``, ``componentbase.events._auto``): the child only when it pays.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from componentbase.client import NotPortable, format_time
from componentbase.events._auto import AutoSender
from componentbase.events._process import Item, ProcessSender
from componentbase.events._writer import (
    Correlator,
    EventWriter,
    WriterSettings,
)

__all__ = ["NORMAL", "WARNING", "EventBroadcaster", "EventRecorder", "object_reference"]

log = logging.getLogger("componentbase.events")

NORMAL = "Normal"
WARNING = "Warning"



def object_reference(obj: Mapping[str, Any]) -> dict[str, Any]:
    """An ``ObjectReference`` to ``obj`` (an object dict, or already a reference with kind and name)."""
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        ref = {k: obj[k] for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion",
                                   "fieldPath") if obj.get(k)}
    else:
        ref = {"kind": obj.get("kind") or "", "namespace": meta.get("namespace") or "",
               "name": meta.get("name") or "", "uid": meta.get("uid") or "",
               "apiVersion": obj.get("apiVersion") or "", "resourceVersion": meta.get("resourceVersion") or ""}
        ref = {k: v for k, v in ref.items() if v}
    if not ref.get("kind") or not ref.get("name"):
        raise ValueError("an event needs an object with a kind and a name")
    return ref


class EventRecorder:
    """Records events for one component (``source.component`` and ``reportingComponent``)."""

    def __init__(self, broadcaster: EventBroadcaster, component: str, host: str = "") -> None:
        self.broadcaster = broadcaster
        self.component = component
        self.host = host

    def event(self, obj: Mapping[str, Any], type: str, reason: str, message: str, *, action: str = "",
              related: Mapping[str, Any] | None = None) -> None:
        """Queue an Event about ``obj`` (an object dict or an ObjectReference); never blocks.

        ``action`` is what the component did or failed to do (kube-scheduler's ``Binding``, ``Scheduling``);
        ``related`` is a second object the event is about (the preemptor of a ``Preempted`` pod).
        """
        if type not in (NORMAL, WARNING):
            log.error("Unsupported event type: %r (want Normal or Warning); event %s dropped", type, reason)
            return
        try:
            ref = object_reference(obj)
        except ValueError as err:
            log.error("Could not construct reference for event %s: %s", reason, err)
            return
        now = self.broadcaster.clock()
        stamp = format_time(now)
        namespace = ref.get("namespace") or "default"
        event = {
            "metadata": {"name": f"{ref['name']}.{time.time_ns():x}", "namespace": namespace},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "type": type,
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "reportingComponent": self.component,
            "reportingInstance": self.host,
        }
        if action:
            event["action"] = action
        if related is not None:
            with contextlib.suppress(ValueError):
                event["related"] = object_reference(related)
        self.broadcaster.submit(event, now)

    def eventf(self, obj: Mapping[str, Any], type: str, reason: str, fmt: str, *args: Any, action: str = "") -> None:
        """``event`` with a %-format message, formatted only here (cheap when args are cheap)."""
        self.event(obj, type, reason, fmt % args if args else fmt, action=action)


class _ThreadSender:
    """The sender as a daemon thread of this process, writing what is queued in batches.

    ``queue_size`` bounds the events not yet written, the batch being written included (as the
    process sender counts events until its child has written them).
    """

    def __init__(self, api_client: Any, settings: WriterSettings, queue_size: int) -> None:
        self.queue_size = queue_size
        self._queue: queue.SimpleQueue[Item | None] = queue.SimpleQueue()
        self._cond = threading.Condition()
        self._pending = 0
        self._stopped = threading.Event()
        self._writer = EventWriter(api_client, settings, self._stopped)
        self._thread = threading.Thread(target=self._run, name="event-broadcaster", daemon=True)
        self._thread.start()

    @property
    def sent(self) -> int:
        return self._writer.sent

    @property
    def pending(self) -> int:
        """Events submitted and not yet written (or given up on)."""
        return self._pending

    def drain(self) -> Correlator:
        """Wait until all submitted is written (or this sender is closed); the correlator that wrote it."""
        with self._cond:
            self._cond.wait_for(lambda: self._pending == 0 or self._stopped.is_set())
        return self._writer.correlator

    def submit(self, item: Item) -> bool:
        with self._cond:
            if self._pending >= self.queue_size:
                return False
            self._pending += 1
        self._queue.put(item)
        return True

    def flush(self, timeout: float | None) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._pending == 0, timeout)

    def close(self, timeout: float | None) -> None:
        self._stopped.set()
        self._queue.put(None)  # wake it
        with self._cond:
            self._cond.notify_all()  # ends a drain
        self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stopped.is_set():
            batch = [self._queue.get()]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            items = [item for item in batch if item is not None]
            try:
                self._writer.write_batch(items)
            finally:
                with self._cond:
                    self._pending -= len(items)
                    self._cond.notify_all()


class EventBroadcaster:
    """Owns the sender that writes Events through the official client, and its bounded queue.

    ``retry_delay`` spaces retries of one event (transport errors, 429 and 5xx; up to ``max_tries``
    tries); other rejections are logged and the event dropped, as client-go does. ``sink="process"``
    sends from a child process with its own client built like ``api_client`` (see
    ``componentbase.client._spec`` for what is carried); when that client cannot be carried, or the
    process cannot start, one line is logged and the sender is a thread after all (``self.sink`` says
    which). ``sink="auto"`` sends from a thread until Events are recorded at more than 20 a second beyond
    a burst of 100, then moves to a child process without losing, repeating or re-counting one (after a
    refused move it stays a thread; ``sender_pid`` says where it is). A custom ``clock`` stamps events
    and drives aggregation in every sink.
    """

    def __init__(self, api_client: Any, *, queue_size: int = 1000, max_tries: int = 12,
                 retry_delay: float = 10.0, max_similar: int = 10, aggregate_window: float = 600.0,
                 spam_burst: int = 25, spam_qps: float = 1.0 / 300.0, request_timeout: float = 10.0,
                 clock: Callable[[], float] = time.time,
                 sink: Literal["thread", "process", "auto"] = "thread") -> None:
        if sink not in ("thread", "process", "auto"):
            raise ValueError(f"sink must be 'thread', 'process' or 'auto', not {sink!r}")
        self.api_client = api_client
        self.clock = clock
        self.queue_size = queue_size
        self.sink: str = sink
        self.settings = WriterSettings(max_tries=max_tries, retry_delay=retry_delay,
                                       request_timeout=request_timeout, max_similar=max_similar,
                                       aggregate_window=aggregate_window, spam_burst=spam_burst, spam_qps=spam_qps)
        self._lock = threading.Lock()
        self._sender: Any = None
        self._stopped = threading.Event()
        self._dropped = 0

    @property
    def sent(self) -> int:
        """Events created or patched on the server so far."""
        sender = self._sender
        return int(sender.sent) if sender is not None else 0

    @property
    def sender_pid(self) -> int | None:
        """The event sender process's pid: with ``sink="process"`` from the start, with ``"auto"`` once
        events have moved to it; None while they are sent from a thread of this process."""
        process = getattr(self._sender, "process", None)
        return process.pid if process is not None else None

    def new_recorder(self, component: str, host: str = "") -> EventRecorder:
        return EventRecorder(self, component, host)

    def start(self, stop: threading.Event | None = None) -> None:
        """Start the sender (the first event does it too); ``stop`` ends it after what is queued."""
        self._ensure_sender()
        if stop is not None:
            threading.Thread(target=self._shutdown_on, args=(stop,), name="event-broadcaster-stop",
                             daemon=True).start()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the sender can write (a child process has imported the client: about a second of
        CPU that a component may rather spend before its hot loop than during it); False on timeout."""
        ready = getattr(self._ensure_sender(), "ready", None)
        return True if ready is None else bool(ready.wait(timeout))

    def _ensure_sender(self) -> Any:
        """The sender, started on first use; None once shut down: a sender started by an event recorded while
        ``shutdown`` ran would never be stopped (a child process then lives as long as this one)."""
        with self._lock:
            if self._sender is None and not self._stopped.is_set():
                self._sender = self._new_sender()
            return self._sender

    def _new_sender(self) -> Any:
        if self.sink == "auto":
            return AutoSender(self._thread_sender, lambda: self._process_sender(held=True))
        if self.sink == "process":
            sender = self._process_sender(held=False)
            if sender is not None:
                return sender
            self.sink = "thread"
        return self._thread_sender()

    def _process_sender(self, held: bool) -> ProcessSender | None:
        try:
            return ProcessSender(self.api_client, self.settings, self.queue_size, self._thread_sender, held=held)
        except (NotPortable, OSError) as err:
            log.warning("Events are sent from this process, not a child process: the client cannot be "
                        "carried over (%s)", err)
            return None

    def _thread_sender(self) -> _ThreadSender:
        return _ThreadSender(self.api_client, self.settings, self.queue_size)

    def _shutdown_on(self, stop: threading.Event) -> None:
        stop.wait()
        self.shutdown(5.0)

    def submit(self, event: dict[str, Any], now: float | None = None) -> None:
        """Queue an Event dict recorded at ``now`` (the clock's time); dropped with a log line when full."""
        if self._stopped.is_set():
            return
        sender = self._sender or self._ensure_sender()
        if sender is None:
            return
        if not sender.submit((self.clock() if now is None else now, event)):
            with self._lock:
                self._dropped += 1
                first = self._dropped == 1
            if first:
                log.warning("event queue full (%d events): dropping events until it drains", self.queue_size)
            return
        if self._dropped:
            with self._lock:
                dropped, self._dropped = self._dropped, 0
            if dropped:
                log.warning("event queue has room again; %d events were dropped", dropped)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued event has been written (or given up on); False on timeout."""
        sender = self._sender
        return True if sender is None else bool(sender.flush(timeout))

    def shutdown(self, timeout: float | None = 5.0) -> None:
        """Write what is queued (up to ``timeout``), then stop the sender (within about ``timeout`` more)."""
        with self._lock:
            if self._stopped.is_set():
                return
            self._stopped.set()
        sender = self._sender
        if sender is not None:
            sender.flush(timeout)
            sender.close(timeout)
