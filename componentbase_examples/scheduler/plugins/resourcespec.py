"""What the resource scorers share: the ``resources`` arg type and a node's allocatable/requested amounts."""

from __future__ import annotations

import attrs

from componentbase import field
from componentbase.componentconfig import Int64
from componentbase_examples.scheduler.podinfo import CPU, EPHEMERAL_STORAGE, MEMORY, PodInfo, is_scalar_resource_name
from componentbase_examples.scheduler.snapshot import NodeInfo


@attrs.define(kw_only=True)
class ResourceSpec:
    name: str
    weight: Int64 = Int64(1)


def default_resources() -> list[ResourceSpec]:
    return [ResourceSpec(name=CPU, weight=Int64(1)), ResourceSpec(name=MEMORY, weight=Int64(1))]


def validate_resources(resources: list[ResourceSpec], path: field.Path) -> list[Exception]:
    return [field.invalid(path.index(i).child("weight"), r.weight,
                          f"resource weight of {r.name} not in valid range (0, 100]")
            for i, r in enumerate(resources) if not 1 <= r.weight <= 100]


def pod_request(pod: PodInfo, name: str, non_zero: bool) -> int:
    if name == CPU:
        return pod.nz_cpu if non_zero else pod.cpu
    if name == MEMORY:
        return pod.nz_memory if non_zero else pod.memory
    return pod.requests.get(name, 0)


def allocatable_requested(n: NodeInfo, name: str, pod_amount: int, non_zero: bool) -> tuple[int, int]:
    """``(allocatable, requested incl. the pod)`` of one resource; ``(0, 0)`` leaves it out of the score."""
    if name == CPU:
        return n.alloc_cpu, (n.nz_cpu if non_zero else n.req_cpu) + pod_amount
    if name == MEMORY:
        return n.alloc_memory, (n.nz_memory if non_zero else n.req_memory) + pod_amount
    if name == EPHEMERAL_STORAGE:
        return n.alloc_ephemeral_storage, n.req_ephemeral_storage + pod_amount
    if is_scalar_resource_name(name) and pod_amount:
        return n.alloc_scalar.get(name, 0), n.req_scalar.get(name, 0) + pod_amount
    return 0, 0
