"""kube-scheduler's nominator: pods that preempted others wait for their victims to go, and hold the room.

A preemptor is *nominated* to the node where it preempted (``status.nominatedNodeName``). Until it is
bound, the scheduler treats it as if it already ran there for every pod of lower or equal priority:
while filtering nodes for such a pod, the nominated pods of higher or equal priority are placed on their
nodes, so the room the victims leave is not taken by the pods the preemption was not for. The nominations
come from the scheduler's own preemptions and from the pods' ``status.nominatedNodeName`` (a scheduler
that restarts, or another replica's preemptions), and end when the pod is bound, deleted or nominated
elsewhere.

The placing is done on the live ``Snapshot`` (under its lock, which the scheduling cycle holds) and undone
before scoring, so the plugins need nothing to see nominated pods: they count like any other pod.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from componentbase import informers
from componentbase_examples.scheduler.podinfo import PodInfo, pod_key
from componentbase_examples.scheduler.snapshot import Snapshot

__all__ = ["Nominator", "NominatorHandlers"]


class Nominator:
    """Nominated pods by node, thread-safe (the scheduling loop and the informer threads both use it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._node_of)

    def add(self, pod: PodInfo, node_name: str) -> None:
        """Nominate ``pod`` to ``node_name`` (an empty name removes its nomination)."""
        with self._lock:
            self._delete_locked(pod.key)
            if node_name:
                self._by_node.setdefault(node_name, {})[pod.key] = pod
                self._node_of[pod.key] = node_name

    def delete(self, key: str) -> None:
        with self._lock:
            self._delete_locked(key)

    def node_of(self, key: str) -> str:
        """The node ``key`` is nominated to, or ``""``."""
        return self._node_of.get(key, "")

    def pods_for_node(self, node_name: str) -> list[PodInfo]:
        with self._lock:
            return list(self._by_node.get(node_name, {}).values())

    def _delete_locked(self, key: str) -> None:
        node = self._node_of.pop(key, None)
        if node is not None:
            pods = self._by_node[node]
            del pods[key]
            if not pods:
                del self._by_node[node]

    @contextlib.contextmanager
    def placed(self, snapshot: Snapshot, pod: PodInfo) -> Iterator[None]:
        """Within the block, the nominated pods of ``pod``'s priority or higher (not ``pod`` itself) count on
        their nodes, as kube's ``RunFilterPluginsWithNominatedPods`` adds them; the caller holds the lock."""
        if not self._node_of:
            yield
            return
        with self._lock:
            chosen = [(p, node) for node, pods in self._by_node.items() for p in pods.values()
                      if p.priority >= pod.priority and p.key != pod.key]
        placed: list[str] = []
        try:
            for p, node in chosen:
                try:
                    snapshot.assume_pod(p, node)
                except ValueError:  # bound or assumed meanwhile: it already counts where it is
                    continue
                placed.append(p.key)
            yield
        finally:
            for key in placed:
                snapshot.forget_pod(key)


class NominatorHandlers:
    """Pending pods' ``status.nominatedNodeName`` into the nominator; bound or deleted pods leave it."""

    def __init__(self, nominator: Nominator) -> None:
        self.nominator = nominator

    def pending_added(self, pod: Mapping[str, Any]) -> None:
        node = _nominated_node(pod)
        if node:
            self.nominator.add(PodInfo(pod), node)
        else:
            self.nominator.delete(pod_key(pod))

    def pending_updated(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """As kube's ``UpdateNominatedPod``: an update that neither sets nor clears the field (one written
        before this scheduler's nomination reached the API) keeps the nomination made in memory."""
        if not _nominated_node(new) and not _nominated_node(old):
            node = self.nominator.node_of(pod_key(new))
            if node:
                self.nominator.add(PodInfo(new), node)
            return
        self.pending_added(new)

    def pending_deleted(self, pod: dict[str, Any] | informers.DeletedFinalStateUnknown) -> None:
        """Deleted, finished or bound: no longer nominated."""
        self.nominator.delete(pod_key(informers.deleted_object(pod)))


def _nominated_node(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("nominatedNodeName") or "")
