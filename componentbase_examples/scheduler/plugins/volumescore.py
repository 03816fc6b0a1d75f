"""VolumeBinding's capacity score (StorageCapacityScoring, KEP-4049): how full the volumes a node would give
the pod's claims are, through the args' ``shape``.

As kube's ``buildScorerFunction``: per storage class, the claims' requests over the matched PVs' capacity (a
percentage, 100 when over capacity or of no capacity) maps through the shape (scores times 10, linear between
points); the node's score is the classes' mean, rounded. Only static bindings (available PVs matched to the
claims) count: kube scores provisioning from CSIStorageCapacity, which this scheduler does not read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from componentbase_examples.scheduler.framework import MAX_NODE_SCORE
from componentbase_examples.scheduler.plugins.args import MAX_CUSTOM_PRIORITY_SCORE, MAX_UTILIZATION
from componentbase_examples.scheduler.plugins.noderesourcesfit import broken_linear
from componentbase_examples.scheduler.plugins.volumebinder import PodVolumes

__all__ = ["Scorer", "capacity_scorer"]

#: ``(pv, pvc) -> (storage class, requested bytes, capacity bytes)``
Sizes = Callable[[Any, Any], tuple[str, int, int]]
Scorer = Callable[[PodVolumes], int]


def capacity_scorer(shape: Sequence[Any], sizes: Sizes) -> Scorer:
    raw = broken_linear([(int(p.utilization), int(p.score) * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
                         for p in shape])

    def per_class(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def score(volumes: PodVolumes) -> int:
        classes: dict[str, list[int]] = {}
        for pv, pvc in volumes.static_bindings:
            name, requested, capacity = sizes(pv, pvc)
            totals = classes.setdefault(name, [0, 0])
            totals[0] += requested
            totals[1] += capacity
        if not classes:
            return 0
        total = sum(per_class(requested, capacity) for requested, capacity in classes.values())
        return int(total / len(classes) + 0.5)  # Go's math.Round of a non-negative mean

    return score
