"""The sharder's cache: every object of the sharded kinds, kept as the few fields assignment needs.

The sharder sees every object, so what it keeps of one is multiplied by all of them: the leader's memory is a
shard's plus this cache. It keeps, as a ``Kept`` record, what deciding and writing a label needs: the
``namespace/name`` key (the ring's key, and the string the cache files it under), the resourceVersion (each
write's precondition; an int when decimal), the ring's labels (one shared read-only dict per distinct set: a
ring has a few) and, for owned objects, the controller reference: about 180 bytes an object with the cache's
own entry (it was 270 with a name string of its own and the version as a string; 840 as plain dicts).
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any, cast

from componentbase.controller._shardnames import DRAIN_PREFIX, SHARD_PREFIX
from componentbase.informers import ListWatch, MultiNamespaceInformer, SharedInformer

__all__ = ["Kept", "MetadataCache", "compact_list_watch", "keep", "metadata_client"]

#: client-go's metadata informers' Accept: the list and watch carry each object's metadata only.
_METADATA_ONLY = ("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
                  "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json")
_FIELDS = ("name", "namespace", "resourceVersion", "labels", "ownerReferences")
_NO_LABELS: dict[str, str] = {}
_label_sets: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}


class Kept(Mapping[str, Any]):
    """One object as the sharder keeps it: read-only, and read as both the object and its metadata
    (``kept["metadata"]`` is itself), so the informer and the sharder read it as they read an object.

    Its ``cache_key`` (``namespace/name``) is the one string the cache files it under; name and namespace are
    read from it. A decimal resourceVersion is kept as an int (28 bytes, not 54) and read back as the same
    text; any other (versions are opaque) as it came.
    """

    __slots__ = ("_rv", "cache_key", "labels", "ownerReferences")

    def __init__(self, key: str, resource_version: str | None, labels: dict[str, str],
                 owner_references: list[dict[str, Any]] | None) -> None:
        self.cache_key = key
        self._rv: int | str | None = resource_version
        if resource_version and resource_version.isdigit() and str(int(resource_version)) == resource_version:
            self._rv = int(resource_version)
        self.labels = labels
        self.ownerReferences = owner_references

    @property
    def name(self) -> str:
        return self.cache_key.rpartition("/")[2]

    @property
    def namespace(self) -> str | None:
        return self.cache_key.rpartition("/")[0] or None

    @property
    def resourceVersion(self) -> str | None:  # read as the metadata field it stands for
        return None if self._rv is None else str(self._rv)

    def __getitem__(self, key: str) -> Any:
        if key == "metadata":
            return self
        value = getattr(self, key) if key in _FIELDS else None
        if value is None or (key == "labels" and not value):
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(["metadata", *(k for k in _FIELDS if k in self)])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:  # never empty ("metadata" is always there): not counted field by field
        return True

    def __eq__(self, other: object) -> bool:  # a Mapping compares its items, "metadata" (itself) among them
        if not isinstance(other, Kept):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # as a dict's

    def __repr__(self) -> str:
        return f"Kept({self.cache_key}, rv={self._rv}, labels={self.labels})"


def _shared_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """The ring's labels of an object, one dict for every object with the same ones (never changed)."""
    items = tuple(sorted((k, v) for k, v in labels.items() if k.startswith((SHARD_PREFIX, DRAIN_PREFIX))))
    if not items:
        return _NO_LABELS
    found = _label_sets.get(items)
    if found is None:
        found = _label_sets.setdefault(items, {sys.intern(k): sys.intern(v) for k, v in items})
    return found


def keep(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The informer's transform: an object (or PartialObjectMetadata) as a ``Kept`` record."""
    if isinstance(obj, Kept):
        return cast(dict[str, Any], obj)
    meta = obj.get("metadata") or {}
    owner = next((r for r in meta.get("ownerReferences") or () if r.get("controller")), None)
    refs = None if owner is None else [{
        "apiVersion": sys.intern(str(owner.get("apiVersion", ""))), "controller": True,
        "kind": sys.intern(str(owner.get("kind", ""))), "name": owner.get("name")}]
    namespace, name = meta.get("namespace"), meta.get("name") or ""
    kept = Kept(f"{namespace}/{name}" if namespace else name, meta.get("resourceVersion"),
                _shared_labels(meta.get("labels") or {}), refs)
    return cast(dict[str, Any], kept)  # a read-only mapping where the informer types its objects as dicts


class _CompactListWatch(ListWatch):
    """Each list page reduced to what the sharder keeps as it arrives: an informer holds its whole first list
    before it transforms it, which for every object of a kind would be the leader's peak memory."""

    def list_page(self, *, resource_version: str = "", limit: int = 0, continue_token: str = "",
                  timeout: float | None = None) -> Any:
        page = super().list_page(resource_version=resource_version, limit=limit, continue_token=continue_token,
                                 timeout=timeout)
        return dataclasses.replace(page, items=[keep(obj) for obj in page.items])


def metadata_client(api_client: Any, suffix: str) -> Any:
    """A client of its own for metadata-only lists and watches (client-go's metadata client): unthrottled, as
    the sharder's writes are; the API server's priority and fairness still applies."""
    from componentbase.client._throttled import ThrottledApiClient  # imports kubernetes: only when running

    client = ThrottledApiClient(api_client.configuration, None)
    client.default_headers.update(api_client.default_headers)
    client.default_headers["Accept"] = _METADATA_ONLY
    client.user_agent = f"{api_client.user_agent}/{suffix}"
    return client


def compact_list_watch(client: Any, mapping: Any, namespace: str | None, selector: str) -> ListWatch:
    """A list and watch of ``mapping`` whose pages are ``Kept`` records (``client`` from ``metadata_client``)."""
    return _CompactListWatch.for_mapping(client, mapping, namespace, label_selector=selector)


class MetadataCache:
    """Metadata-only informers, as client-go's metadata informers: the server sends PartialObjectMetadata, so
    the sharder's first list of every object is metadata too (not only what it keeps of it)."""

    def __init__(self, api_client: Any, mapper: Any, namespaces: list[str]) -> None:
        self.client = metadata_client(api_client, "sharder")
        self.mapper = mapper
        self.namespaces = namespaces
        self.informers: list[SharedInformer] = []

    def informer(self, api_version: str, kind: str, selector: str) -> SharedInformer:
        mapping = self.mapper.mapping(api_version, kind)

        def one(namespace: str | None) -> SharedInformer:
            list_watch = compact_list_watch(self.client, mapping, namespace, selector)
            informer = SharedInformer(list_watch, transform=keep, inactivity_timeout=180.0)
            self.informers.append(informer)
            return informer

        if mapping.namespaced and len(self.namespaces) > 1:
            return MultiNamespaceInformer({ns: one(ns) for ns in self.namespaces})
        return one(self.namespaces[0] if mapping.namespaced and self.namespaces else None)

    def start(self, stop: threading.Event) -> None:
        for informer in self.informers:
            informer.start(stop)

    def wait_for_sync(self, stop: threading.Event, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not all(i.has_synced() and i.handlers_synced() for i in self.informers):
            if stop.wait(0.05) or time.monotonic() > deadline:
                return False
        return True

    def join(self, timeout: float) -> None:
        for informer in self.informers:
            informer.join(timeout)
