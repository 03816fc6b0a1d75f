"""Recording core/v1 Events, aggregated the way kube's ``EventCorrelator`` does, without blocking callers.

``recorder.event(pod, "Normal", "Scheduled", "Successfully assigned ns/p to n1")`` only queues; a
background sender writes through the official client. Repeats of the same event (same object, type,
reason and message) patch one Event's ``count`` and ``lastTimestamp`` instead of creating new ones;
more than ``max_similar`` different messages for the same object, type and reason within
``aggregate_window`` are combined into one Event ("(combined from similar events): ..."); a token
bucket per object (burst 25, one per 5 minutes after that) keeps a hot loop from flooding the server.
When the queue is full, events are dropped with a log line: recording must never slow the component.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from componentbase.informers.apierrors import describe
from componentbase.informers.apimetrics import observe_request
from componentbase.logs import V

__all__ = ["NORMAL", "WARNING", "EventBroadcaster", "EventRecorder", "object_reference"]

log = logging.getLogger("componentbase.events")

NORMAL = "Normal"
WARNING = "Warning"
_COMBINED = "(combined from similar events): "
_CACHE_SIZE = 4096


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


def _rfc3339(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


@dataclass(slots=True)
class _Record:
    """What the logger remembers of one Event on the server."""

    name: str
    count: int
    first_timestamp: str
    created: bool = False


class _LRU:
    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[Any, Any] = OrderedDict()

    def get(self, key: Any) -> Any:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: Any, value: Any) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self.size:
            self._data.popitem(last=False)


class _Correlator:
    """Aggregation, deduplication and the spam filter: kube's ``EventCorrelator``, on the sender thread."""

    def __init__(self, clock: Callable[[], float], max_similar: int, aggregate_window: float,
                 spam_burst: int, spam_qps: float) -> None:
        self.clock = clock
        self.max_similar = max_similar
        self.aggregate_window = aggregate_window
        self.spam_burst = spam_burst
        self.spam_qps = spam_qps
        self._similar = _LRU(_CACHE_SIZE)  # aggregate key -> (messages seen, last time)
        self._records = _LRU(_CACHE_SIZE)  # event key -> _Record
        self._buckets = _LRU(_CACHE_SIZE)  # object key -> [tokens, last refill]

    def correlate(self, event: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
        """The key and the Event to write, or None when the spam filter drops it."""
        now = self.clock()
        ref = event["involvedObject"]
        source = event["source"]
        obj_key = (source.get("component"), source.get("host"), ref.get("kind"), ref.get("namespace"),
                   ref.get("name"), ref.get("uid"), ref.get("apiVersion"))
        agg_key = (*obj_key, event["type"], event["reason"])
        key: tuple[Any, ...] = (*agg_key, event["message"])
        seen = self._similar.get(agg_key)
        if seen is None or now - seen[1] > self.aggregate_window:
            seen = (set(), now)
        messages, _ = seen
        messages.add(event["message"])
        self._similar.put(agg_key, (messages, now))
        if len(messages) > self.max_similar:
            key = agg_key
            event["message"] = _COMBINED + event["message"]
        record = self._records.get(key)
        if record is None:
            record = _Record(event["metadata"]["name"], 0, event["firstTimestamp"])
            self._records.put(key, record)
        record.count += 1
        event["metadata"]["name"] = record.name
        event["count"] = record.count
        event["firstTimestamp"] = record.first_timestamp
        if not self._allow(obj_key, now):
            log.log(V(4), "event %s/%s %s dropped by the spam filter", ref.get("namespace"), ref.get("name"),
                    event["reason"])
            return None
        return key, event

    def _allow(self, obj_key: tuple[Any, ...], now: float) -> bool:
        bucket = self._buckets.get(obj_key)
        if bucket is None:
            bucket = [float(self.spam_burst), now]
            self._buckets.put(obj_key, bucket)
        bucket[0] = min(float(self.spam_burst), bucket[0] + (now - bucket[1]) * self.spam_qps)
        bucket[1] = now
        if bucket[0] < 1.0:
            return False
        bucket[0] -= 1.0
        return True

    def record(self, key: tuple[Any, ...]) -> _Record | None:
        rec: _Record | None = self._records.get(key)
        return rec


class EventRecorder:
    """Records events for one component (``source.component`` and ``reportingComponent``)."""

    def __init__(self, broadcaster: EventBroadcaster, component: str, host: str = "") -> None:
        self.broadcaster = broadcaster
        self.component = component
        self.host = host

    def event(self, obj: Mapping[str, Any], type: str, reason: str, message: str, *, action: str = "") -> None:
        """Queue an Event about ``obj`` (an object dict or an ObjectReference); never blocks.

        ``action`` is what the component did or failed to do (kube-scheduler's ``Binding``, ``Scheduling``).
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
        stamp = _rfc3339(now)
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
        self.broadcaster.submit(event)

    def eventf(self, obj: Mapping[str, Any], type: str, reason: str, fmt: str, *args: Any, action: str = "") -> None:
        """``event`` with a %-format message, formatted only here (cheap when args are cheap)."""
        self.event(obj, type, reason, fmt % args if args else fmt, action=action)


class EventBroadcaster:
    """Owns the queue and the sender thread that writes Events through the official client.

    ``retry_delay`` spaces retries of one event (transport errors, 429 and 5xx; up to ``max_tries``
    tries); other rejections are logged and the event dropped, as client-go does.
    """

    def __init__(self, api_client: Any, *, queue_size: int = 1000, max_tries: int = 12,
                 retry_delay: float = 10.0, max_similar: int = 10, aggregate_window: float = 600.0,
                 spam_burst: int = 25, spam_qps: float = 1.0 / 300.0, request_timeout: float = 10.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.api_client = api_client
        self.clock = clock
        self.max_tries = max_tries
        self.retry_delay = retry_delay
        self.request_timeout = request_timeout
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue(queue_size)
        self._correlator = _Correlator(clock, max_similar, aggregate_window, spam_burst, spam_qps)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()
        self._dropped = 0
        self._api: Any = None
        self.sent = 0  # Events created or patched on the server

    def new_recorder(self, component: str, host: str = "") -> EventRecorder:
        return EventRecorder(self, component, host)

    def start(self, stop: threading.Event | None = None) -> None:
        """Start the sender (the first event does it too); ``stop`` ends it after what is queued."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="event-broadcaster", daemon=True)
                self._thread.start()
        if stop is not None:
            threading.Thread(target=self._shutdown_on, args=(stop,), name="event-broadcaster-stop",
                             daemon=True).start()

    def _shutdown_on(self, stop: threading.Event) -> None:
        stop.wait()
        self.shutdown(5.0)

    def submit(self, event: dict[str, Any]) -> None:
        if self._stopped.is_set():
            return
        if self._thread is None:
            self.start()
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            with self._lock:
                self._dropped += 1
                first = self._dropped == 1
            if first:
                log.warning("event queue full (%d events): dropping events until it drains",
                            self._queue.maxsize)
            return
        if self._dropped:
            with self._lock:
                dropped, self._dropped = self._dropped, 0
            if dropped:
                log.warning("event queue has room again; %d events were dropped", dropped)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued event has been written (or given up on); False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def shutdown(self, timeout: float | None = 5.0) -> None:
        """Write what is queued (up to ``timeout``), then stop the sender."""
        self.flush(timeout)
        self._stopped.set()
        thread = self._thread
        if thread is not None:
            try:
                self._queue.put_nowait({})  # wake it
            except queue.Full:
                pass
            thread.join(timeout)

    # --- the sender thread ---------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopped.is_set():
            batch = [self._queue.get()]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self._send_batch([e for e in batch if e])
            finally:
                for _ in batch:
                    self._queue.task_done()

    def _send_batch(self, events: list[dict[str, Any]]) -> None:
        """Correlate in order; of several updates to one Event in a batch, only the last is written."""
        latest: dict[tuple[Any, ...], dict[str, Any]] = {}
        for event in events:
            result = self._correlator.correlate(event)
            if result is not None:
                key, ev = result
                latest.pop(key, None)
                latest[key] = ev
        for key, ev in latest.items():
            if self._stopped.is_set():
                return
            self._write(key, ev)

    def _write(self, key: tuple[Any, ...], event: dict[str, Any]) -> None:
        record = self._correlator.record(key)
        for attempt in range(1, self.max_tries + 1):
            try:
                if record is not None and record.created:
                    self._patch(event)
                else:
                    self._create(event)
                if record is not None:
                    record.created = True
                self.sent += 1
                return
            except Exception as err:
                failure = describe(err)
                if failure.status == 404 and record is not None and record.created:
                    record.created = False  # someone deleted it: create it again
                    continue
                retry = failure.status is None or failure.status == 429 or failure.status >= 500
                if not retry or attempt == self.max_tries:
                    log.error("Server rejected event %s/%s (will not retry): %s",
                              event["metadata"]["namespace"], event["metadata"]["name"], failure.summary)
                    return
                delay = self.retry_delay * (random.random() if attempt == 1 else 1.0)
                delay = max(delay, failure.retry_after or 0.0)
                log.log(V(2), "Unable to write event %s (try %d/%d): %s; retrying in %.2fs",
                        event["reason"], attempt, self.max_tries, failure.summary, delay)
                if self._stopped.wait(delay):
                    return

    def _core(self) -> Any:
        if self._api is None:
            from kubernetes.client import CoreV1Api

            self._api = CoreV1Api(self.api_client)
        return self._api

    def _create(self, event: dict[str, Any]) -> None:
        with observe_request(self.api_client, "POST") as obs:
            obs.response(self._core().create_namespaced_event(
                event["metadata"]["namespace"], event, _preload_content=False,
                _request_timeout=self.request_timeout)).read()  # read: the connection goes back to the pool

    def _patch(self, event: dict[str, Any]) -> None:
        body = {"count": event["count"], "lastTimestamp": event["lastTimestamp"], "message": event["message"]}
        with observe_request(self.api_client, "PATCH") as obs:
            obs.response(self._core().patch_namespaced_event(
                event["metadata"]["name"], event["metadata"]["namespace"], body, _preload_content=False,
                _request_timeout=self.request_timeout)).read()
