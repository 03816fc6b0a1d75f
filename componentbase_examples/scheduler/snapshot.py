"""``NodeInfo`` and ``Snapshot``: the scheduler's view of the cluster, kept current one event at a time.

Every number a plugin compares per node (free CPU, requested memory, pod count, taints split by effect)
is precomputed on the ``NodeInfo`` as a plain attribute, so the filter and score loops over thousands of
nodes do no dict lookups and no parsing. ``Snapshot`` is kube's cache and snapshot in one: the
scheduling loop holds ``lock`` for a cycle, informer handlers take it for each update.

Pods with pod (anti-)affinity are also indexed, per node and per snapshot, as kube's
``NodeInfo.PodsWithAffinity`` / ``PodsWithRequiredAntiAffinity`` and ``HavePodsWithAffinityList``: most
pods have none, and InterPodAffinity must not walk every pod of 5,000 nodes each cycle to learn that.

Assumed pods are kube's optimistic binding: a pod placed by the scheduler counts against its node at once
(``assume_pod``), before the API has it bound; ``forget_pod`` undoes that when binding fails, and the
informer's ``add_pod`` of the bound pod confirms it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from componentbase_examples.scheduler.podinfo import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    PodInfo,
    is_scalar_resource_name,
    pod_key,
    resource_amount,
)

__all__ = ["NodeInfo", "Snapshot", "Taint", "pod_affinity_kinds"]

#: ``(key, value, effect)``
Taint = tuple[str, str, str]

_NO_SCHEDULE = ("NoSchedule", "NoExecute")
#: At most this many distinct resource states have a memo shared through a snapshot's registry.
MEMO_STATES = 4096
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def pod_affinity_kinds(info: PodInfo) -> tuple[bool, bool]:
    """Whether the pod has any pod (anti-)affinity, and whether it has required anti-affinity terms."""
    affinity = info.spec.get("affinity")
    if not affinity:
        return False, False
    anti = affinity.get("podAntiAffinity")
    return bool(affinity.get("podAffinity") or anti), bool(anti and anti.get(_REQUIRED))


def _claim_keys(info: PodInfo) -> list[str]:
    """``namespace/claim`` of each PVC volume of the pod (VolumeRestrictions' ReadWriteOncePod check)."""
    return [f"{info.namespace}/{(v['persistentVolumeClaim'] or {}).get('claimName', '')}"
            for v in info.spec.get("volumes") or () if "persistentVolumeClaim" in v]


class NodeInfo:
    """One node and what its pods use, as kube's ``framework.NodeInfo``."""

    __slots__ = ("alloc_cpu", "alloc_ephemeral_storage", "alloc_memory", "alloc_pods", "alloc_scalar", "free_cpu",
                 "free_memory", "free_pods", "images", "index", "labels", "memo", "memos", "name", "no_schedule_taints",
                 "node",
                 "nz_cpu", "nz_memory", "pods", "pods_with_affinity", "pods_with_required_anti_affinity",
                 "prefer_no_schedule_taints", "req_cpu", "req_ephemeral_storage", "req_memory", "req_scalar", "taints",
                 "unschedulable", "used_ports")

    def __init__(self, name: str, memos: dict[tuple[int, ...], dict[str, int]] | None = None) -> None:
        self.name = name
        #: The memos of resource states, shared by the nodes of one snapshot (see ``memo``).
        self.memos: dict[tuple[int, ...], dict[str, int]] = {} if memos is None else memos
        self.node: Mapping[str, Any] | None = None
        self.index = -1  # position in Snapshot.nodes, -1 while the node object is absent
        self.labels: Mapping[str, str] = {}
        #: Image name (every name of ``status.images``) -> size in bytes, for ImageLocality.
        self.images: dict[str, int] = {}
        self.taints: tuple[Taint, ...] = ()
        self.no_schedule_taints: tuple[Taint, ...] = ()
        self.prefer_no_schedule_taints: tuple[Taint, ...] = ()
        self.unschedulable = False
        self.alloc_cpu = self.alloc_memory = self.alloc_ephemeral_storage = self.alloc_pods = 0
        self.alloc_scalar: dict[str, int] = {}
        self.req_cpu = self.req_memory = self.req_ephemeral_storage = 0
        self.req_scalar: dict[str, int] = {}
        self.nz_cpu = self.nz_memory = 0
        self.pods: dict[str, PodInfo] = {}
        #: The pods with any pod affinity or anti-affinity, and those with required anti-affinity terms.
        self.pods_with_affinity: dict[str, PodInfo] = {}
        self.pods_with_required_anti_affinity: dict[str, PodInfo] = {}
        #: hostIP -> {(protocol, port): number of pods using it}
        self.used_ports: dict[str, dict[tuple[str, int], int]] = {}
        #: Scores remembered for this node's CPU and memory state (plugins.scorememo): allocatable, requested and
        #: non-zero requested. Nodes in equal states share the dict, and a change of state picks another, so
        #: only what depends on those six numbers (and the pod) may be kept here.
        self.memo: dict[str, int] = {}
        #: Allocatable minus requested, kept with them: NodeResourcesFit's filter compares a pod with these.
        self.free_cpu = self.free_memory = self.free_pods = 0

    def set_node(self, node: Mapping[str, Any]) -> None:
        meta = node.get("metadata") or {}
        spec = node.get("spec") or {}
        self.node = node
        self.labels = meta.get("labels") or {}
        self.taints = tuple((t.get("key", ""), t.get("value") or "", t.get("effect", ""))
                            for t in spec.get("taints") or ())
        self.no_schedule_taints = tuple(t for t in self.taints if t[2] in _NO_SCHEDULE)
        self.prefer_no_schedule_taints = tuple(t for t in self.taints if t[2] == "PreferNoSchedule")
        self.unschedulable = bool(spec.get("unschedulable"))
        alloc = {name: resource_amount(name, q) for name, q in ((node.get("status") or {})
                                                                 .get("allocatable") or {}).items()}
        self.alloc_cpu = alloc.get(CPU, 0)
        self.alloc_memory = alloc.get(MEMORY, 0)
        self.alloc_ephemeral_storage = alloc.get(EPHEMERAL_STORAGE, 0)
        self.alloc_pods = alloc.get(PODS, 0)
        self.alloc_scalar = {k: v for k, v in alloc.items() if is_scalar_resource_name(k)}
        images = (node.get("status") or {}).get("images") or ()
        self.images = {name: int(image.get("sizeBytes") or 0) for image in images for name in image.get("names") or ()}
        self._changed()

    def add_pod(self, info: PodInfo) -> None:
        self.pods[info.key] = info
        self._account(info, 1)
        any_affinity, required_anti = pod_affinity_kinds(info)
        if any_affinity:
            self.pods_with_affinity[info.key] = info
        if required_anti:
            self.pods_with_required_anti_affinity[info.key] = info

    def remove_pod(self, key: str) -> PodInfo | None:
        info = self.pods.pop(key, None)
        if info is not None:
            self._account(info, -1)
            self.pods_with_affinity.pop(key, None)
            self.pods_with_required_anti_affinity.pop(key, None)
        return info

    def _changed(self) -> None:
        """The node or its pods changed: recompute what is derived from them, find the memo of the new state."""
        state = (self.alloc_cpu, self.alloc_memory, self.req_cpu, self.req_memory, self.nz_cpu, self.nz_memory)
        memo = self.memos.get(state)
        if memo is None:
            if len(self.memos) >= MEMO_STATES:
                self.memos.clear()  # the nodes keep theirs; only sharing with later states is lost
            memo = self.memos[state] = {}
        self.memo = memo
        self.free_cpu = self.alloc_cpu - self.req_cpu
        self.free_memory = self.alloc_memory - self.req_memory
        self.free_pods = self.alloc_pods - len(self.pods)

    def _account(self, info: PodInfo, sign: int) -> None:
        self.req_cpu += sign * info.cpu
        self.req_memory += sign * info.memory
        self.req_ephemeral_storage += sign * info.ephemeral_storage
        self.nz_cpu += sign * info.nz_cpu
        self.nz_memory += sign * info.nz_memory
        for name, amount in info.scalar.items():
            self.req_scalar[name] = self.req_scalar.get(name, 0) + sign * amount
        for ip, protocol, port in info.host_ports:
            ports = self.used_ports.setdefault(ip, {})
            count = ports.get((protocol, port), 0) + sign
            if count > 0:
                ports[(protocol, port)] = count
            else:
                ports.pop((protocol, port), None)
                if not ports:
                    del self.used_ports[ip]
        self._changed()

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"


class Snapshot:
    """All ``NodeInfo``s; add, update and remove of nodes and pods in O(1) (O(pod count) for a node's removal)."""

    def __init__(self, nodes: Iterable[Mapping[str, Any]] = (), pods: Iterable[Mapping[str, Any]] = ()) -> None:
        self.lock = threading.RLock()
        #: The nodes that exist, in a stable order the scheduler walks round-robin.
        self.nodes: list[NodeInfo] = []
        self._infos: dict[str, NodeInfo] = {}  # also holds pods whose node has not arrived (index -1)
        self._memos: dict[tuple[int, ...], dict[str, int]] = {}  # resource state -> its NodeInfo.memo
        self._pods: dict[str, tuple[PodInfo, str]] = {}  # key -> (info, node name)
        self._assumed: set[str] = set()
        # NodeInfos holding pods with pod (anti-)affinity / required anti-affinity, by name
        self._with_affinity: dict[str, NodeInfo] = {}
        self._with_required_anti_affinity: dict[str, NodeInfo] = {}
        #: Image name -> how many nodes have it (kube's ImageStateSummary.NumNodes).
        self.image_nodes: dict[str, int] = {}
        #: ``namespace/claim`` -> how many pods here use that PVC (kube's ``IsPVCUsedByPods``).
        self.pvc_refs: dict[str, int] = {}
        for node in nodes:
            self.add_node(node)
        for pod in pods:
            self.add_pod(pod)

    def __len__(self) -> int:
        return len(self.nodes)

    def get(self, name: str) -> NodeInfo | None:
        info = self._infos.get(name)
        return info if info is not None and info.index >= 0 else None

    def nodes_with_pod_affinity(self) -> list[NodeInfo]:
        """The nodes holding a pod with pod (anti-)affinity, kube's ``HavePodsWithAffinityList``."""
        return [n for n in self._with_affinity.values() if n.index >= 0]

    def nodes_with_required_anti_affinity(self) -> list[NodeInfo]:
        """The nodes holding a pod with required anti-affinity, kube's ``HavePodsWithRequiredAntiAffinityList``."""
        return [n for n in self._with_required_anti_affinity.values() if n.index >= 0]

    # nodes

    def add_node(self, node: Mapping[str, Any]) -> NodeInfo:
        """Add a node, or update it if it is known (node add and update events are the same here)."""
        with self.lock:
            name = (node.get("metadata") or {}).get("name", "")
            info = self._infos.get(name)
            if info is None:
                info = self._infos[name] = NodeInfo(name, self._memos)
            self._count_images(info, -1)
            info.set_node(node)
            self._count_images(info, 1)
            if info.index < 0:
                info.index = len(self.nodes)
                self.nodes.append(info)
            return info

    update_node = add_node

    def remove_node(self, name: str) -> None:
        """Drop a node; its pods stay accounted until they are deleted, as kube's cache keeps them."""
        with self.lock:
            info = self._infos.get(name)
            if info is None or info.index < 0:
                return
            last = self.nodes.pop()
            if last is not info:
                self.nodes[info.index] = last
                last.index = info.index
            self._count_images(info, -1)
            info.index = -1
            info.node = None
            info.images = {}
            if not info.pods:
                del self._infos[name]

    def _count_images(self, info: NodeInfo, sign: int) -> None:
        if info.index < 0 and sign < 0:
            return  # not counted: the node object was absent
        counts = self.image_nodes
        for name in info.images:
            count = counts.get(name, 0) + sign
            if count > 0:
                counts[name] = count
            else:
                counts.pop(name, None)

    # pods

    def add_pod(self, pod: Mapping[str, Any] | PodInfo) -> None:
        """A bound pod the informer saw: counted on its node; confirms the pod if it was assumed."""
        info = pod if isinstance(pod, PodInfo) else PodInfo(pod)
        if not info.node_name:
            return
        with self.lock:
            self._assumed.discard(info.key)
            self._remove(info.key)
            self._place(info, info.node_name)

    def update_pod(self, pod: Mapping[str, Any] | PodInfo) -> None:
        self.add_pod(pod)

    def remove_pod(self, pod: Mapping[str, Any] | PodInfo | str) -> None:
        key = pod if isinstance(pod, str) else pod.key if isinstance(pod, PodInfo) else pod_key(pod)
        with self.lock:
            self._assumed.discard(key)
            self._remove(key)

    def assume_pod(self, info: PodInfo, node_name: str) -> None:
        """Count ``info`` on ``node_name`` before its binding is done, so the next cycle sees it."""
        with self.lock:
            if info.key in self._pods:
                raise ValueError(f"pod {info.namespace}/{info.name} is already in the cache")
            self._place(info, node_name)
            self._assumed.add(info.key)

    def forget_pod(self, key: str) -> None:
        """Undo an assume (its binding failed); a pod that is not assumed is left alone."""
        with self.lock:
            if key in self._assumed:
                self._assumed.discard(key)
                self._remove(key)

    def is_assumed(self, key: str) -> bool:
        return key in self._assumed

    def node_of(self, key: str) -> str | None:
        found = self._pods.get(key)
        return found[1] if found else None

    def _place(self, info: PodInfo, node_name: str) -> None:
        node = self._infos.get(node_name)
        if node is None:
            node = self._infos[node_name] = NodeInfo(node_name, self._memos)
        node.add_pod(info)
        self._pods[info.key] = (info, node_name)
        for claim in _claim_keys(info):
            self.pvc_refs[claim] = self.pvc_refs.get(claim, 0) + 1
        if node.pods_with_affinity:
            self._reindex(node)

    def _remove(self, key: str) -> None:
        found = self._pods.pop(key, None)
        if found is None:
            return
        for claim in _claim_keys(found[0]):
            if self.pvc_refs.get(claim, 0) > 1:
                self.pvc_refs[claim] -= 1
            else:
                self.pvc_refs.pop(claim, None)
        node = self._infos.get(found[1])
        if node is not None:
            node.remove_pod(key)
            if node.name in self._with_affinity:  # a superset of the required anti-affinity index
                self._reindex(node)
            if node.index < 0 and not node.pods:
                del self._infos[node.name]

    def _reindex(self, node: NodeInfo) -> None:
        """Keep ``node`` in the affinity indexes exactly while it holds such pods."""
        for index, pods in ((self._with_affinity, node.pods_with_affinity),
                            (self._with_required_anti_affinity, node.pods_with_required_anti_affinity)):
            if pods:
                index[node.name] = node
            else:
                index.pop(node.name, None)
