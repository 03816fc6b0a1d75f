"""VolumeZone: a pod's bound PVs' zone and region labels must name the node's, as kube-scheduler's plugin.

A PV label value may list several zones joined by ``__`` (kube's ``LabelZonesToSet``); a PV's beta label
(``failure-domain.beta.kubernetes.io/zone``) is matched against the node's beta label, else its GA one.
A node with no topology label at all fits (a single-zone cluster). Unbound ``WaitForFirstConsumer``
claims are left to VolumeBinding; other unbound claims make the pod unschedulable.
"""

from __future__ import annotations

from typing import Any

import componentbase
from componentbase_examples.scheduler.framework import SKIP, Code, CycleState, Handle, Plugin, Status
from componentbase_examples.scheduler.plugins.volumes import StorageObjects, claim_class
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

__all__ = ["ERR_REASON_CONFLICT", "TOPOLOGY_LABELS", "VolumeZone"]

ERR_REASON_CONFLICT = "node(s) had no available volume zone"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_ZONE = "topology.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (_BETA_ZONE, _BETA_REGION, _ZONE, _REGION)
_GA = {_BETA_ZONE: _ZONE, _BETA_REGION: _REGION}


def _rejected(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


def _zones(value: str) -> frozenset[str]:
    return frozenset(z.strip() for z in value.split("__") if z.strip())


class VolumeZone(Plugin):
    name = "VolumeZone"

    def __init__(self, args: Any, handle: Handle) -> None:
        super().__init__(args, handle)
        self.storage = StorageObjects(handle, "pvcs", "pvs", "classes")

    @componentbase.hookimpl
    def scheduler_pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        topologies: list[tuple[str, frozenset[str]]] = []
        for v in pod.spec.get("volumes") or ():
            if "persistentVolumeClaim" not in v:
                continue
            name = (v["persistentVolumeClaim"] or {}).get("claimName") or ""
            if not name:
                return _rejected("PersistentVolumeClaim had no name")
            pvc = self.storage.pvc(pod.namespace, name)
            if pvc is None:
                return _rejected(f'persistentvolumeclaim "{name}" not found')
            pv_name = (pvc.get("spec") or {}).get("volumeName") or ""
            if not pv_name:
                problem = self._unbound_problem(pvc)
                if problem is None:
                    continue
                return problem
            pv = self.storage.pv(pv_name)
            if pv is None:
                return _rejected(f'persistentvolume "{pv_name}" not found')
            labels = (pv.get("metadata") or {}).get("labels") or {}
            topologies += [(key, _zones(labels[key])) for key in TOPOLOGY_LABELS if key in labels]
        if not topologies:
            return SKIP
        state[self.name] = topologies
        return None

    def _unbound_problem(self, pvc: dict[str, Any]) -> Status | None:
        """None for a ``WaitForFirstConsumer`` claim (skipped), else why an unbound claim stops the pod."""
        class_name = claim_class(pvc)
        if not class_name:
            return _rejected("PersistentVolumeClaim had no pv name and storageClass name")
        sc = self.storage.storage_class(class_name)
        if sc is None:
            return _rejected(f'storageclass.storage.k8s.io "{class_name}" not found')
        mode = sc.get("volumeBindingMode")
        if mode is None:
            return _rejected(f'VolumeBindingMode not set for StorageClass "{class_name}"')
        return None if mode == "WaitForFirstConsumer" else _rejected("PersistentVolume had no name")

    @componentbase.hookimpl
    def scheduler_filter(self, state: CycleState, nodes: list[NodeInfo],
                         rejected: dict[str, Status]) -> list[NodeInfo]:
        topologies: list[tuple[str, frozenset[str]]] = state[self.name]
        conflict = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT, plugin=self.name)
        passed = []
        for n in nodes:
            labels = n.labels
            if not any(key in labels for key in TOPOLOGY_LABELS):
                passed.append(n)
                continue
            for key, zones in topologies:
                value = labels.get(key)
                if value is None:
                    value = labels.get(_GA.get(key, key))
                if value is None or value not in zones:
                    rejected[n.name] = conflict
                    break
            else:
                passed.append(n)
        return passed
