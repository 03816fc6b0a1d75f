"""ImageLocality: prefer nodes that already have the pod's images, as kube-scheduler's plugin of that name.

A node scores the sizes of the pod's images (init containers' and containers') it lists in
``status.images``, each scaled by the share of all nodes that have the image, so one popular image does
not pull every pod onto the few nodes that got it first ("node heating"). The sum is clamped to
23 MiB..1000 MiB per container and mapped onto 0..100. An image named without a tag is ``:latest``.
Counting the nodes per image is the snapshot's (``Snapshot.image_nodes``), kept as nodes come and go.
"""

from __future__ import annotations

import componentbase
from componentbase_examples.scheduler.framework import MAX_NODE_SCORE, CycleState, Handle, Plugin
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

__all__ = ["ImageLocality", "calculate_priority", "normalized_image_name"]

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """``nginx`` -> ``nginx:latest``; a name with a tag or digest is kept (a ':' after the last '/')."""
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """The scaled image sizes, clamped to the thresholds, onto 0..100 (Go's integer division)."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = min(max(sum_scores, MIN_THRESHOLD), max_threshold)
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality(Plugin):
    name = "ImageLocality"

    def __init__(self, args: None, handle: Handle) -> None:
        super().__init__(args, handle)

    @componentbase.hookimpl
    def scheduler_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        spec = pod.spec
        containers = [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
        snapshot = self.handle.snapshot
        total = len(snapshot.nodes)
        spread = {}
        for c in containers:
            image = normalized_image_name(c.get("image") or "")
            having = snapshot.image_nodes.get(image, 0)
            if having:
                spread[image] = having / total
        if not spread or not containers:
            return [0] * len(nodes)  # no node has any of them: every node scores 0
        images = [normalized_image_name(c.get("image") or "") for c in containers]
        scores = []
        for n in nodes:
            held = n.images
            total_size = 0
            for image in images:
                size = held.get(image)
                if size is not None:
                    total_size += int(size * spread[image])
            scores.append(calculate_priority(total_size, len(containers)))
        return scores
