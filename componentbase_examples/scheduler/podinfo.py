"""``PodInfo``: what the scheduler reads from a pod, computed once from its API JSON.

Requests follow kube's ``resourcehelper.PodRequests``: the sum of the containers (restartable "sidecar"
init containers included), or the largest init container if that is more; then the pod-level requests
(``spec.resources``, PodLevelResources, on by default since kube 1.34) replace that for the resources they
name that kube supports at pod level (cpu, memory, hugepages-*); plus the pod overhead.
The non-zero requests used for scoring count 100m CPU / 200Mi memory for a container that names none,
as ``GetNonzeroRequests`` does, so empty pods still spread.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import componentbase
from componentbase.util import validation

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "PodInfo",
    "Resources",
    "is_extended_resource_name",
    "is_scalar_resource_name",
    "pod_key",
    "resource_amount",
]

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

CPU, MEMORY, EPHEMERAL_STORAGE, PODS = "cpu", "memory", "ephemeral-storage", "pods"

#: name -> amount in canonical units (milli-CPU, bytes, counts).
Resources = dict[str, int]


@functools.cache
def is_extended_resource_name(name: str) -> bool:
    """kube's ``IsExtendedResourceName``: outside the ``kubernetes.io/`` namespace (so it has a '/'), not a
    quota name (``requests.``), and a qualified name once prefixed with ``requests.`` (``example.com/gpu``).
    Only these are subject to NodeResourcesFit's ``ignoredResources`` and ``ignoredResourceGroups``."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not validation.qualified_name("requests." + name)


@functools.cache
def is_scalar_resource_name(name: str) -> bool:
    """kube's ``IsScalarResourceName``: extended resources, hugepages, attachable volumes, and names in the
    ``kubernetes.io/`` namespace (``kubernetes.io/something``, ``subdomain.kubernetes.io/something``), which
    NodeResourcesFit counts and checks like the others."""
    return (name.startswith(("hugepages-", "attachable-volumes-")) or "kubernetes.io/" in name
            or is_extended_resource_name(name))


def _pod_level(name: str) -> bool:
    """kube's ``IsSupportedPodLevelResource``."""
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


def resource_amount(name: str, quantity: str | int | float) -> int:
    """A quantity in the scheduler's unit for ``name``: milli-CPU for cpu, whole units for the rest."""
    if isinstance(quantity, str):
        return _amount_of_text(name, quantity)
    return _amount(name, quantity)


@functools.lru_cache(maxsize=4096)
def _amount_of_text(name: str, quantity: str) -> int:
    """Kept: a cluster's pods repeat a few quantities ("100m", "64Mi"), each parsed through a ``Fraction``
    (1.5-5 us), and every pod is read twice (pending, then bound), with and without defaults."""
    return _amount(name, quantity)


def _amount(name: str, quantity: str | int | float) -> int:
    if name == CPU:
        return componentbase.util.quantity_milli_value(quantity)
    return componentbase.util.quantity_value(quantity)


def _resources(requests: Mapping[str, Any] | None) -> Resources:
    if not requests:
        return {}
    return {name: resource_amount(name, q) for name, q in requests.items()}


def _add(into: Resources, more: Mapping[str, int]) -> None:
    for name, amount in more.items():
        into[name] = into.get(name, 0) + amount


def _max(into: Resources, other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        if amount > into.get(name, 0):
            into[name] = amount


def _with_defaults(reqs: Resources) -> Resources:
    if CPU in reqs and MEMORY in reqs:
        return reqs
    filled = dict(reqs)
    filled.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
    filled.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
    return filled


def pod_requests(spec: Mapping[str, Any], non_zero: bool = False) -> Resources:
    """A pod's effective requests, as kube counts them (see the module docstring)."""
    total: Resources = {}
    for c in spec.get("containers") or ():
        reqs = _resources((c.get("resources") or {}).get("requests"))
        _add(total, _with_defaults(reqs) if non_zero else reqs)
    sidecars: Resources = {}
    init_max: Resources = {}
    for c in spec.get("initContainers") or ():
        reqs = _resources((c.get("resources") or {}).get("requests"))
        if non_zero:
            reqs = _with_defaults(reqs)
        if c.get("restartPolicy") == "Always":
            _add(total, reqs)
            _add(sidecars, reqs)
            _max(init_max, sidecars)
        else:
            running = dict(reqs)
            _add(running, sidecars)
            _max(init_max, running)
    _max(total, init_max)
    pod_level = (spec.get("resources") or {}).get("requests")
    if pod_level:
        total.update((name, amount) for name, amount in _resources(pod_level).items() if _pod_level(name))
    _add(total, _resources(spec.get("overhead")))
    return total


def pod_key(pod: Mapping[str, Any]) -> str:
    """The cache key of a pod: its UID, or ``namespace/name`` for manifests that have none."""
    meta = pod.get("metadata") or {}
    uid = meta.get("uid")
    if uid:
        return str(uid)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


def _host_ports(spec: Mapping[str, Any]) -> tuple[tuple[str, str, int], ...]:
    """``(hostIP, protocol, hostPort)`` of every container port bound on the host, defaults filled in."""
    found: list[tuple[str, str, int]] = []
    containers = list(spec.get("containers") or ())
    containers += [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    for c in containers:
        for p in c.get("ports") or ():
            port = int(p.get("hostPort") or 0)
            if port > 0:
                found.append((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", port))
    return tuple(found)


class PodInfo:
    """A pod and the numbers every plugin needs from it; built once, shared by every cycle and node."""

    __slots__ = ("cpu", "ephemeral_storage", "host_ports", "key", "labels", "memory", "name", "namespace",
                 "node_name", "nz_cpu", "nz_memory", "pod", "priority", "requests", "scalar", "scheduler_name",
                 "spec", "tolerations")

    def __init__(self, pod: Mapping[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        self.pod = pod
        self.spec = spec
        self.key = pod_key(pod)
        self.name: str = meta.get("name", "")
        self.namespace: str = meta.get("namespace") or "default"
        self.labels: Mapping[str, str] = meta.get("labels") or {}
        self.node_name: str = spec.get("nodeName") or ""
        self.scheduler_name: str = spec.get("schedulerName") or "default-scheduler"
        self.priority: int = int(spec.get("priority") or 0)
        self.requests = pod_requests(spec)
        self.cpu = self.requests.get(CPU, 0)
        self.memory = self.requests.get(MEMORY, 0)
        self.ephemeral_storage = self.requests.get(EPHEMERAL_STORAGE, 0)
        self.scalar = {k: v for k, v in self.requests.items() if is_scalar_resource_name(k)}
        non_zero = pod_requests(spec, non_zero=True)
        self.nz_cpu = non_zero.get(CPU, 0)
        self.nz_memory = non_zero.get(MEMORY, 0)
        self.host_ports = _host_ports(spec)
        self.tolerations: tuple[Mapping[str, Any], ...] = tuple(spec.get("tolerations") or ())

    def __repr__(self) -> str:
        return f"PodInfo({self.namespace}/{self.name})"
