"""Which shards of a ring are live, as one replica sees them: shared by the sharder and each shard's claimer.

A shard is live while its Lease names it as holder and has changed within its lease duration, judged on this
process's monotonic clock from when the change was seen, as a leader election candidate judges a holder
(never from another host's timestamps). Both judges use this one rule, so a shard the sharder has let go is a
shard a claimer may take objects from, and neither takes them before the shard's own fence stopped it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from componentbase.controller._shardnames import RING_LABEL, SHARD_LABEL
from componentbase.informers import InformerFactory, deleted_object

__all__ = ["Membership"]

Record = tuple[Any, Any, Any]  # (holderIdentity, renewTime, leaseDurationSeconds)


class Membership:
    """The ring's shard Leases as last seen, and when each last changed here."""

    def __init__(self, orphan_after: float) -> None:
        self.orphan_after = orphan_after
        self._seen: dict[str, tuple[Record, float, str]] = {}  # lease -> (record, seen at, shard)
        self._lock = threading.Lock()

    def watch(self, api_client: Any, namespace: str, ring: str) -> InformerFactory:
        """An informer factory (not started) whose one informer feeds this membership the ring's Leases."""
        factory = InformerFactory(api_client)
        leases = factory.for_kind("coordination.k8s.io/v1", "Lease", namespace, label_selector=f"{RING_LABEL}={ring}")
        leases.add_event_handler(on_add=self.seen, on_update=lambda _, new: self.seen(new), on_delete=self.gone)
        return factory

    def seen(self, lease: dict[str, Any]) -> None:
        spec = lease.get("spec") or {}
        meta = lease.get("metadata") or {}
        record = (spec.get("holderIdentity"), spec.get("renewTime"), spec.get("leaseDurationSeconds"))
        with self._lock:
            old = self._seen.get(meta.get("name", ""))
            if old is None or old[0] != record:
                self._seen[meta.get("name", "")] = (record, time.monotonic(), (meta.get("labels") or {}).get(
                    SHARD_LABEL, ""))

    def gone(self, lease: Any) -> None:
        with self._lock:
            self._seen.pop((deleted_object(lease).get("metadata") or {}).get("name", ""), None)

    def forget(self, name: str) -> None:
        with self._lock:
            self._seen.pop(name, None)

    def live(self) -> set[str]:
        """Shards whose Lease names them and changed within its duration, as seen from here."""
        now = time.monotonic()
        with self._lock:
            return {shard for (holder, _, duration), seen, shard in self._seen.values()
                    if shard and holder == shard and now < seen + float(duration or 0)}

    def known(self, shard: str) -> bool:
        """Whether any Lease seen here stands for ``shard``."""
        with self._lock:
            return any(s == shard for _, _, s in self._seen.values())

    def ended(self, shard: str) -> float | None:
        """When ``shard`` stopped being live here (its Lease expired or was released), on the monotonic clock;
        None while it is live or when no Lease of it was seen."""
        with self._lock:
            found = [(holder, seen, duration) for (holder, _, duration), seen, s in self._seen.values() if s == shard]
        if not found:
            return None
        holder, seen, duration = found[0]
        if holder != shard:
            return seen  # released (or taken): not live since that change was seen
        end = seen + float(duration or 0)
        return end if end <= time.monotonic() else None

    def until_expiry(self, period: float) -> float:
        """Seconds until the next live shard's Lease expires, at most ``period``: a shard's end is acted on the
        moment its Lease expires as judged here (as a candidate judges it), not up to a period later."""
        now = time.monotonic()
        with self._lock:
            ends = [seen + float(duration or 0) for (holder, _, duration), seen, shard in self._seen.values()
                    if shard and holder == shard]
        return min([period, *(end - now + 0.001 for end in ends if end > now)])

    def orphans(self) -> list[str]:
        """Leases of shards gone for longer than ``orphan_after``: deleted, as timebertt's sharder does."""
        now = time.monotonic()
        with self._lock:
            return [name for name, ((holder, _, duration), seen, shard) in self._seen.items()
                    if now > seen + float(duration or 0) + self.orphan_after or
                    (holder != shard and now > seen + self.orphan_after)]
