"""The sharding metrics of one replica, in its component's registry (``controller_sharding_*``).

Every replica reports what its shard holds and does (``assigned_objects``, ``shard_lease_held``,
``drains_acknowledged_total``, ``claims_total``); the elected sharder what it decides (``ring_shards``,
``assignments_total``, ``moves_total``, ``drains_total``, ``drain_duration_seconds``). Registered only when
the manager has metrics; a metric ``--disabled-metrics`` names is not registered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ShardingMetrics"]

_DRAIN_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class ShardingMetrics:
    """Recorders that do nothing without a registry: ``ShardingMetrics(mgr.metrics, ring, shard)``."""

    def __init__(self, metrics: Any, ring: str, shard: str) -> None:
        self.ring = ring
        self.shard = shard
        self._m: dict[str, Any] = {}
        if metrics is None:
            return
        from prometheus_client import Counter, Gauge, Histogram  # loaded with the metrics, never for --help

        def add(kind: Any, name: str, doc: str, labels: list[str], public: str = "", **kw: Any) -> None:
            if (public or name) not in metrics.disabled:
                self._m[name] = kind(name, doc, labels, registry=metrics.registry, **kw)

        add(Gauge, "controller_sharding_assigned_objects",
            "Objects of a sharded kind in this replica's cache: the objects its shard is assigned",
            ["ring", "shard", "kind"])
        add(Gauge, "controller_sharding_shard_lease_held", "1 while this replica holds its shard Lease, else 0",
            ["ring", "shard"])
        add(Counter, "controller_sharding_drains_acknowledged",
            "Objects this replica's shard let go of when the sharder drained them", ["ring", "shard"],
            "controller_sharding_drains_acknowledged_total")
        add(Counter, "controller_sharding_claims",
            "Objects of a gone shard this replica's shard took over (the ring of live shards gives them to it)",
            ["ring", "shard", "kind"], "controller_sharding_claims_total")
        add(Gauge, "controller_sharding_ring_shards", "Live shards in the ring, as the elected sharder sees them",
            ["ring"])
        add(Counter, "controller_sharding_assignments", "Unassigned objects the sharder gave a shard",
            ["ring", "kind"], "controller_sharding_assignments_total")
        add(Counter, "controller_sharding_moves", "Objects the sharder moved from a shard to another (drained or not)",
            ["ring", "kind"], "controller_sharding_moves_total")
        add(Counter, "controller_sharding_drains", "Drains the sharder asked of a live shard", ["ring", "kind"],
            "controller_sharding_drains_total")
        add(Histogram, "controller_sharding_drain_duration_seconds",
            "From the sharder's drain label to the object's assignment to its new shard", ["ring"],
            buckets=_DRAIN_BUCKETS)

    def _get(self, name: str) -> Any:
        return self._m.get(name)

    def count_assigned(self, kind: str, count: Callable[[], int]) -> None:
        if (g := self._get("controller_sharding_assigned_objects")) is not None:
            g.labels(self.ring, self.shard, kind).set_function(count)

    def lease_held(self, held: bool) -> None:
        if (g := self._get("controller_sharding_shard_lease_held")) is not None:
            g.labels(self.ring, self.shard).set(1 if held else 0)

    def drain_acknowledged(self) -> None:
        if (c := self._get("controller_sharding_drains_acknowledged")) is not None:
            c.labels(self.ring, self.shard).inc()

    def claimed(self, kind: str) -> None:
        if (c := self._get("controller_sharding_claims")) is not None:
            c.labels(self.ring, self.shard, kind).inc()

    def ring_shards(self, count: int) -> None:
        if (g := self._get("controller_sharding_ring_shards")) is not None:
            g.labels(self.ring).set(count)

    def assigned(self, kind: str, moved: bool) -> None:
        name = "controller_sharding_moves" if moved else "controller_sharding_assignments"
        if (c := self._get(name)) is not None:
            c.labels(self.ring, kind).inc()

    def drain_started(self, kind: str) -> None:
        if (c := self._get("controller_sharding_drains")) is not None:
            c.labels(self.ring, kind).inc()

    def drain_finished(self, seconds: float) -> None:
        if (h := self._get("controller_sharding_drain_duration_seconds")) is not None:
            h.labels(self.ring).observe(seconds)
