"""In-memory objects, the one resourceVersion counter, and the bounded event history watches read.

Stored object dicts are never mutated after they are stored: readers may hold them without a lock
or a copy, and every write builds a new dict. Each entry caches its JSON so reads only join bytes.
"""

from __future__ import annotations

import bisect
import threading
from typing import Any, NamedTuple

from ..wire._json import dumps

__all__ = ["Entry", "Event", "Store", "encode"]


def encode(obj: Any) -> bytes:
    """Compact JSON, as ``json.dumps(obj, separators=(",", ":"), ensure_ascii=False)`` writes it."""
    return dumps(obj)


class Entry:
    """One stored object version: the dict and its serialized form."""

    __slots__ = ("obj", "raw", "rv", "views")

    def __init__(self, obj: dict[str, Any], rv: int) -> None:
        self.obj = obj
        self.rv = rv
        self.raw = encode(obj)
        self.views: dict[str, Entry] | None = None  # other versions of the same object (``_convert``)


class Event(NamedTuple):
    """One change in the history (a tuple: a frozen dataclass's __init__ cost a call per field, per write)."""

    rv: int
    type: str  # ADDED, MODIFIED, DELETED
    bucket: str
    namespace: str
    entry: Entry
    prev: Entry | None


class Store:
    """All objects, keyed bucket -> namespace -> name. ``cond``'s lock guards everything.

    A watch waits on its resource's condition (``watchers``), which shares that lock: a write wakes
    only the watches of the resource it wrote, as kube-apiserver's watch cache is per resource, not
    every watch thread of the server (Events and status writes would otherwise wake ConfigMap watches).
    """

    def __init__(self, history: int = 10000) -> None:
        self._lock = threading.RLock()
        self.cond = threading.Condition(self._lock)
        self._watchers: dict[str, threading.Condition] = {}
        self.rv = 0
        self.closed = False
        self._history = max(1, history)
        self._events: list[Event] = []
        self._rvs: list[int] = []  # each event's rv, for bisect (a key function cost a call per step)
        self._floor = 0  # watches from an rv below this have missed evicted events
        self._buckets: dict[str, dict[str, dict[str, Entry]]] = {}

    def get(self, bucket: str, namespace: str, name: str) -> Entry | None:
        return self._buckets.get(bucket, {}).get(namespace, {}).get(name)

    def items(self, bucket: str, namespace: str | None) -> list[Entry]:
        """Entries sorted by (namespace, name); all namespaces when ``namespace`` is None."""
        spaces = self._buckets.get(bucket, {})
        if namespace is not None:
            objects = spaces.get(namespace, {})
            return [objects[n] for n in sorted(objects)]
        return [spaces[ns][n] for ns in sorted(spaces) for n in sorted(spaces[ns])]

    def count(self, bucket: str) -> int:
        return sum(len(v) for v in self._buckets.get(bucket, {}).values())

    def watchers(self, bucket: str) -> threading.Condition:
        """The condition that watches of ``bucket`` wait on; call it holding ``cond``."""
        cond = self._watchers.get(bucket)
        if cond is None:
            cond = self._watchers[bucket] = threading.Condition(self._lock)
        return cond

    def wake_watches(self) -> None:
        """Wake every watch so it checks whether to stop; call it holding ``cond``."""
        for cond in self._watchers.values():
            cond.notify_all()

    def next_rv(self) -> int:
        """Reserve the next resourceVersion; the caller must store with it while holding ``cond``."""
        self.rv += 1
        return self.rv

    def put(self, bucket: str, namespace: str, name: str, obj: dict[str, Any], rv: int) -> Entry:
        spaces = self._buckets.setdefault(bucket, {}).setdefault(namespace, {})
        prev = spaces.get(name)
        entry = Entry(obj, rv)
        spaces[name] = entry
        self._record(Event(rv, "MODIFIED" if prev else "ADDED", bucket, namespace, entry, prev))
        return entry

    def remove(self, bucket: str, namespace: str, name: str, last: dict[str, Any], rv: int) -> Entry:
        """Drop an object; ``last`` is its final state (carrying ``rv``) that DELETED events show."""
        spaces = self._buckets[bucket][namespace]
        prev = spaces.pop(name)
        if not spaces:
            del self._buckets[bucket][namespace]
        entry = Entry(last, rv)
        self._record(Event(rv, "DELETED", bucket, namespace, entry, prev))
        return entry

    def _record(self, event: Event) -> None:
        self._events.append(event)
        self._rvs.append(event.rv)
        if len(self._events) > 2 * self._history:
            cut = len(self._events) - self._history
            self._floor = self._events[cut - 1].rv
            del self._events[:cut]
            del self._rvs[:cut]
        cond = self._watchers.get(event.bucket)
        if cond is not None:
            cond.notify_all()

    def events_after(self, rv: int) -> list[Event] | None:
        """Events newer than ``rv``, or None when some of them were already evicted."""
        if rv < self._floor:
            return None
        start = bisect.bisect_right(self._rvs, rv)
        return self._events[start:]

    def items_at(self, bucket: str, namespace: str | None, rv: int) -> list[Entry] | None:
        """``items`` as they were at ``rv``, rewound through the history; None when it no longer reaches."""
        events = self.events_after(rv)
        if events is None:
            return None
        events = [ev for ev in events if ev.bucket == bucket and (namespace is None or ev.namespace == namespace)]
        if not events:
            return self.items(bucket, namespace)  # nothing to rewind: a paged list of a resource at rest
        state = {(e.obj["metadata"].get("namespace", ""), e.obj["metadata"]["name"]): e
                 for e in self.items(bucket, namespace)}
        for ev in reversed(events):
            key = (ev.namespace, ev.entry.obj["metadata"]["name"])
            if ev.prev is None:
                state.pop(key, None)
            else:
                state[key] = ev.prev
        return [state[k] for k in sorted(state)]

    @property
    def floor(self) -> int:
        return self._floor

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.wake_watches()
            self.cond.notify_all()  # and lists waiting for a resourceVersion (_rv.wait_fresh)
