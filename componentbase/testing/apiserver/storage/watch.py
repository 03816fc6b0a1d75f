"""Watch streams: initial ADDEDs, then events from the store's history, bookmarks, and 410 Gone.

A watch from a resourceVersion the server has not reached is held open in silence, as kube-apiserver's
watch cache holds it (only a list, or a watch with ``sendInitialEvents``, waits 3 s for it and then
answers "Too large resource version"): it gets the events after that resourceVersion, and no bookmark
before the server reaches it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..apimachinery.errors import status_body
from ..apimachinery.resources import Resource
from ..apimachinery.selectors import Predicate
from ._convert import view
from .store import Entry, Event, Store, encode

__all__ = ["DEFAULT_BOOKMARK_INTERVAL", "WatchSpec", "error_event", "stream"]

_BATCH = 256
DEFAULT_BOOKMARK_INTERVAL = 60.0  # the watch cache's bookmarkFrequency
_PRE_TIMEOUT = 2.0  # and one bookmark this long before a watch's timeout, as its cacheWatcher sends


@dataclass(frozen=True, slots=True)
class WatchSpec:
    res: Resource
    namespace: str | None
    pred: Predicate | None
    since: int | None  # None: start now, with ADDED for every current object
    bookmarks: bool
    deadline: float | None  # time.monotonic() at which the watch ends cleanly
    initial_events_end: bool = False  # sendInitialEvents: mark the end of the initial ADDEDs
    metadata_only: str | None = None  # the meta.k8s.io apiVersion of PartialObjectMetadata a client asked for


def _raw(spec: WatchSpec, entry: Entry) -> bytes:
    """The object of an event as the watch sends it: as stored, or its PartialObjectMetadata, encoded from
    the stored dict (decoding each event's JSON to cut its metadata out cost more than the encoding)."""
    if spec.metadata_only is None:
        return entry.raw
    return encode(_partial(entry.obj, spec.metadata_only))


def _partial(obj: dict[str, Any], api_version: str) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": api_version, "metadata": obj.get("metadata") or {}}


#: each event type's line up to its object: a line is then two concatenations, not four
_HEADS = {kind: b'{"type":"%s","object":' % kind.encode()
          for kind in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR")}


def _line(kind: str, raw: bytes) -> bytes:
    return _HEADS[kind] + raw + b"}\n"


def error_event(status: dict[str, object]) -> bytes:
    """The ERROR event kube's watch ends with when it cannot serve what was asked (its errWatcher)."""
    return _line("ERROR", encode(status))


def _gone(since: int, floor: int) -> bytes:
    """The watch cache's 410: ``floor`` is the oldest resourceVersion it can still resume from."""
    return error_event(status_body(410, "Expired", f"too old resource version: {since} ({floor})"))


def _translate(spec: WatchSpec, ev: Event) -> bytes | None:
    """Selectors apply to both sides of a change: leaving the selection reads as DELETED."""
    if ev.bucket != spec.res.bucket or (spec.namespace is not None and ev.namespace != spec.namespace):
        return None
    entry = view(spec.res, ev.entry)
    kind = ev.type
    if spec.pred is not None:
        now_in = spec.pred(entry.obj)
        if kind != "MODIFIED":
            if not now_in:
                return None
        else:
            was_in = ev.prev is not None and spec.pred(view(spec.res, ev.prev).obj)
            if not (was_in or now_in):
                return None
            kind = "MODIFIED" if was_in and now_in else "ADDED" if now_in else "DELETED"
    return _HEADS[kind] + (entry.raw if spec.metadata_only is None else _raw(spec, entry)) + b"}\n"


def _bookmark(spec: WatchSpec, rv: int, initial_end: bool = False) -> bytes:
    meta: dict[str, object] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    obj: dict[str, Any] = {"kind": spec.res.kind, "apiVersion": spec.res.group_version, "metadata": meta}
    if spec.metadata_only is not None:
        obj = _partial(obj, spec.metadata_only)
    return _line("BOOKMARK", encode(obj))


def _next_bookmark(spec: WatchSpec, now: float, interval: float) -> float:
    """Every ``interval``, and once just before the deadline so the client resumes from a fresh rv."""
    at = now + interval
    if spec.deadline is not None and spec.deadline - _PRE_TIMEOUT > now:
        at = min(at, spec.deadline - _PRE_TIMEOUT)
    return at


def stream(
    store: Store,
    spec: WatchSpec,
    should_stop: Callable[[], bool],
    client_gone: Callable[[], bool],
    bookmark_interval: float = DEFAULT_BOOKMARK_INTERVAL,
    poll: float = 0.5,
) -> Iterator[bytes]:
    """Yield chunks of newline-terminated events until the deadline, a stop, or a server close.

    ``should_stop`` is cheap and checked on every wake-up; ``client_gone`` costs a system call, so it
    runs about every ``poll`` seconds, which is enough for abandoned watches to free their thread.
    """
    with store.cond:
        wake = store.watchers(spec.res.bucket)
        if spec.since is None:
            initial = [view(spec.res, e) for e in store.items(spec.res.bucket, spec.namespace)]
            pos = store.rv
        else:
            initial, pos = [], spec.since
            if store.events_after(pos) is None:
                yield _gone(pos, store.floor)
                return
    for i in range(0, len(initial), _BATCH):
        batch = initial[i:i + _BATCH]
        chunk = b"".join(_line("ADDED", _raw(spec, e)) for e in batch if spec.pred is None or spec.pred(e.obj))
        if chunk:
            yield chunk
    if spec.initial_events_end and spec.bookmarks:
        yield _bookmark(spec, pos, initial_end=True)
    next_bookmark = _next_bookmark(spec, time.monotonic(), bookmark_interval)
    next_check = time.monotonic() + poll
    while True:
        with store.cond:
            while True:
                if store.closed or should_stop():
                    return
                events = store.events_after(pos)
                now = time.monotonic()
                if now >= next_check:
                    if client_gone():
                        return
                    next_check = now + poll
                if events is None or events:
                    break
                if spec.deadline is not None and now >= spec.deadline:
                    return
                if spec.bookmarks and now >= next_bookmark:
                    break
                wait = poll
                if spec.deadline is not None:
                    wait = min(wait, spec.deadline - now)
                if spec.bookmarks:
                    wait = min(wait, next_bookmark - now)
                wake.wait(max(wait, 0.001))
            current = store.rv
            floor = store.floor
        if events is None:
            yield _gone(pos, floor)
            return
        lines = [line for line in (_translate(spec, ev) for ev in events) if line is not None]
        if spec.bookmarks and now >= next_bookmark:
            if current >= pos:  # a watch from ahead of the server gets none, as kube's cacheWatcher sends none
                lines.append(_bookmark(spec, current))  # older than the resourceVersion it started from
            next_bookmark = _next_bookmark(spec, now, bookmark_interval)
        pos = max(pos, current)  # nor does it go back: events up to that resourceVersion are not its own
        if lines:
            yield b"".join(lines)
