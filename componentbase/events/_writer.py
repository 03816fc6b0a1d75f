"""Writing queued Events to the server: kube's ``EventCorrelator`` and the create/patch calls with retries.

One ``EventWriter`` runs wherever the sender runs (a thread of the component, or the event sender
process of ``componentbase.events._process``); it is fed ``(time, event)`` pairs, the time being when the
component recorded the event, so aggregation and the spam filter see the same clock in either place.
"""

from __future__ import annotations

import logging
import random
import threading
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from componentbase.client import describe, is_not_found, is_transient, observe_request, request
from componentbase.logs import V

__all__ = ["Correlator", "EventWriter", "WriterSettings"]

log = logging.getLogger("componentbase.events")

_COMBINED = "(combined from similar events): "
_CACHE_SIZE = 4096

#: ``observe(api_client, verb)``: a context manager timing one call, yielding an object with ``response``.
Observe = Callable[[Any, str], AbstractContextManager[Any]]


@dataclass(frozen=True, slots=True)
class WriterSettings:
    """Everything an ``EventWriter`` needs besides its client; plain values, so it crosses to a process."""

    max_tries: int = 12
    retry_delay: float = 10.0
    request_timeout: float = 10.0
    max_similar: int = 10
    aggregate_window: float = 600.0
    spam_burst: int = 25
    spam_qps: float = 1.0 / 300.0


@dataclass(slots=True)
class _Record:
    """What the writer remembers of one Event on the server."""

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


class Correlator:
    """Aggregation, deduplication and the spam filter: kube's ``EventCorrelator``, on the sender's side."""

    def __init__(self, max_similar: int, aggregate_window: float, spam_burst: int, spam_qps: float) -> None:
        self.max_similar = max_similar
        self.aggregate_window = aggregate_window
        self.spam_burst = spam_burst
        self.spam_qps = spam_qps
        self._similar = _LRU(_CACHE_SIZE)  # aggregate key -> (messages seen, last time)
        self._records = _LRU(_CACHE_SIZE)  # event key -> _Record
        self._buckets = _LRU(_CACHE_SIZE)  # object key -> [tokens, last refill]

    def correlate(self, now: float, event: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
        """The key and the Event to write, or None when the spam filter drops it."""
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


class EventWriter:
    """Correlates batches of events and writes them through the official client, retrying as client-go does.

    Transport errors, 429 and 5xx are retried (``retry_delay`` apart, up to ``max_tries`` tries); other
    rejections are logged and the event dropped. ``stopped`` ends retries and the rest of a batch.
    """

    def __init__(self, api_client: Any, settings: WriterSettings, stopped: threading.Event,
                 observe: Observe = observe_request) -> None:
        self.api_client = api_client
        self.settings = settings
        self.stopped = stopped
        self.observe = observe
        self.correlator = Correlator(settings.max_similar, settings.aggregate_window, settings.spam_burst,
                                     settings.spam_qps)
        self.sent = 0  # Events created or patched on the server

    def write_batch(self, items: list[tuple[float, dict[str, Any]]]) -> None:
        """Correlate in order; of several updates to one Event in a batch, only the last is written."""
        latest: dict[tuple[Any, ...], dict[str, Any]] = {}
        for now, event in items:
            result = self.correlator.correlate(now, event)
            if result is not None:
                key, ev = result
                latest.pop(key, None)
                latest[key] = ev
        for key, ev in latest.items():
            if self.stopped.is_set():
                return
            self._write(key, ev)

    def _write(self, key: tuple[Any, ...], event: dict[str, Any]) -> None:
        record = self.correlator.record(key)
        tries = self.settings.max_tries
        for attempt in range(1, tries + 1):
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
                if is_not_found(err) and record is not None and record.created:
                    record.created = False  # someone deleted it: create it again
                    continue
                if not is_transient(err) or attempt == tries:
                    log.error("Server rejected event %s/%s (will not retry): %s",
                              event["metadata"]["namespace"], event["metadata"]["name"], failure.summary)
                    return
                # client-go's recordToSink: the first wait is random, so recorders that failed together spread out
                delay = self.settings.retry_delay * (random.random() if attempt == 1 else 1.0)
                delay = max(delay, failure.retry_after or 0.0)
                log.log(V(2), "Unable to write event %s (try %d/%d): %s; retrying in %.2fs",
                        event["reason"], attempt, tries, failure.summary, delay)
                if self.stopped.wait(delay):
                    return

    def _create(self, event: dict[str, Any]) -> None:
        # Our bodies are plain dicts we built: ``request`` sends them without a pydantic model per call.
        with self.observe(self.api_client, "POST") as obs:
            obs.response(request(
                self.api_client, "POST", "/api/v1/namespaces/{namespace}/events",
                path_params={"namespace": event["metadata"]["namespace"]}, body=event,
                timeout=self.settings.request_timeout)).read()  # read: the connection goes back to the pool

    def _patch(self, event: dict[str, Any]) -> None:
        body = {"count": event["count"], "lastTimestamp": event["lastTimestamp"], "message": event["message"]}
        meta = event["metadata"]
        with self.observe(self.api_client, "PATCH") as obs:
            obs.response(request(
                self.api_client, "PATCH", "/api/v1/namespaces/{namespace}/events/{name}",
                path_params={"namespace": meta["namespace"], "name": meta["name"]}, body=body,
                timeout=self.settings.request_timeout)).read()
