"""The informer's local cache: objects by ``namespace/name`` plus secondary indexes (client-go's ``Indexer``).

Objects are the plain dicts the API server sent. They are shared with every reader and every event
handler, so they must be treated as read-only: copy (``componentbase.util.deepcopy_json``) before changing
one. Only the informer writes; any thread may read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "NAMESPACE_INDEX",
    "DeletedFinalStateUnknown",
    "IndexFunc",
    "Indexer",
    "deleted_object",
    "meta_namespace_index",
    "meta_namespace_key",
]

Obj = dict[str, Any]
_List = list  # the classes below have a list() method
#: Maps an object to the index values it is filed under (an empty list: not indexed).
IndexFunc = Callable[[Obj], Iterable[str]]

NAMESPACE_INDEX = "namespace"


def meta_namespace_key(obj: Mapping[str, Any]) -> str:
    """``namespace/name``, or ``name`` for cluster-scoped objects, as client-go's ``MetaNamespaceKeyFunc``.

    An object that is not a dict may carry its key as ``cache_key`` (a tombstone does; so does the sharder's
    compact record, whose key string is then the cache's own, not a copy per object).
    """
    if type(obj) is not dict and isinstance(key := getattr(obj, "cache_key", None), str):
        return key
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    name = meta.get("name") or ""
    return f"{namespace}/{name}" if namespace else name


def meta_namespace_index(obj: Obj) -> list[str]:
    """Index by namespace (cluster-scoped objects are not indexed)."""
    namespace = (obj.get("metadata") or {}).get("namespace")
    return [namespace] if namespace else []


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown:
    """Passed to ``on_delete`` when the informer learned of a deletion only by relisting.

    The watch missed the DELETED event (it was away and the server forgot the history), so ``obj`` is
    the last state the cache held, possibly stale.
    """

    key: str
    obj: Obj

    @property
    def cache_key(self) -> str:
        return self.key


def deleted_object(obj: Obj | DeletedFinalStateUnknown) -> Obj:
    """The object an ``on_delete`` handler received, unwrapped from a tombstone if it is one."""
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


class Indexer:
    """A thread-safe map of key to object with named secondary indexes."""

    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None,
                 key_func: Callable[[Obj], str] = meta_namespace_key) -> None:
        self.key_func = key_func
        self._lock = threading.Lock()
        self._items: dict[str, Obj] = {}
        self._indexers: dict[str, IndexFunc] = {}
        self._indices: dict[str, dict[str, set[str]]] = {}
        if indexers:
            self.add_indexers(indexers)

    # --- reading -------------------------------------------------------------------------------

    def get(self, key: str) -> Obj | None:
        """The object under ``key`` (``namespace/name`` or ``name``), or None."""
        return self._items.get(key)

    def get_by_name(self, namespace: str, name: str) -> Obj | None:
        return self._items.get(f"{namespace}/{name}" if namespace else name)

    def list(self) -> _List[Obj]:
        with self._lock:
            return list(self._items.values())

    def list_keys(self) -> _List[str]:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def by_index(self, index_name: str, value: str) -> _List[Obj]:
        """Objects filed under ``value`` in the index ``index_name``."""
        with self._lock:
            keys = self._index(index_name).get(value, ())
            items = self._items
            return [items[k] for k in keys]

    def index_keys(self, index_name: str, value: str) -> _List[str]:
        with self._lock:
            return list(self._index(index_name).get(value, ()))

    def list_index_values(self, index_name: str) -> _List[str]:
        with self._lock:
            return list(self._index(index_name))

    def _index(self, index_name: str) -> dict[str, set[str]]:
        index = self._indices.get(index_name)
        if index is None:
            raise KeyError(f"index {index_name!r} does not exist")
        return index

    # --- indexes -------------------------------------------------------------------------------

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add indexes; existing objects are filed at once. A name already in use is an error."""
        with self._lock:
            clash = sorted(set(indexers) & set(self._indexers))
            if clash:
                raise ValueError(f"indexer conflict: {', '.join(clash)}")
            for name, fn in indexers.items():
                index: dict[str, set[str]] = {}
                for key, obj in self._items.items():
                    for value in fn(obj):
                        index.setdefault(value, set()).add(key)
                self._indexers[name] = fn
                self._indices[name] = index

    def _file(self, key: str, old: Obj | None, new: Obj | None) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            old_values = set(fn(old)) if old is not None else set()
            new_values = set(fn(new)) if new is not None else set()
            if old_values == new_values:
                continue
            for value in old_values - new_values:
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
            for value in new_values - old_values:
                index.setdefault(value, set()).add(key)

    # --- writing (the informer's) --------------------------------------------------------------

    def upsert(self, key: str, obj: Obj) -> Obj | None:
        """Store ``obj`` under ``key``; returns what was there before."""
        with self._lock:
            old = self._items.get(key)
            self._items[key] = obj
            if self._indexers:
                self._file(key, old, obj)
            return old

    def apply(self, changes: _List[tuple[str, Obj | None]]) -> _List[Obj | None]:
        """Store (or, for None, remove) many objects under one lock; returns the previous ones in order."""
        with self._lock:
            items = self._items
            indexed = bool(self._indexers)
            olds: _List[Obj | None] = []
            for key, obj in changes:
                old = items.pop(key, None) if obj is None else items.get(key)
                if obj is not None:
                    items[key] = obj
                if indexed and (old is not None or obj is not None):
                    self._file(key, old, obj)
                olds.append(old)
            return olds

    def delete(self, key: str) -> Obj | None:
        """Remove ``key``; returns what was there (None if nothing)."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None and self._indexers:
                self._file(key, old, None)
            return old

    def snapshot(self) -> dict[str, Obj]:
        """A shallow copy of the key map, for diffing on relist."""
        with self._lock:
            return dict(self._items)
