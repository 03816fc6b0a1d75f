"""NodeVolumeLimits: a node attaches at most its CSINode's ``allocatable.count`` volumes per CSI driver, as
kube-scheduler's CSI volume limits plugin.

A claim counts for the driver of its PV (``spec.csi.driver``, the volume handle telling volumes apart, so a
volume two pods share counts once), or, while unbound, for its StorageClass's provisioner (a volume of its
own). The node's count is that of the pods already on it (assumed ones included). A driver the CSINode
gives no count is not limited; a node without a CSINode is not limited.

Not here: in-tree volumes migrated to CSI (kube translates them through the CSINode's migrated-plugins
annotation), and VolumeAttachments of pods already gone.
"""

from __future__ import annotations

from typing import Any

import componentbase
from componentbase_examples.scheduler.framework import SKIP, Code, CycleState, Handle, Plugin, Status
from componentbase_examples.scheduler.plugins.volumes import StorageObjects, claim_class, pod_claims
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "NodeVolumeLimits"]

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"


class NodeVolumeLimits(Plugin):
    name = "NodeVolumeLimits"

    def __init__(self, args: Any, handle: Handle) -> None:
        super().__init__(args, handle)
        self.storage = StorageObjects(handle, "pvcs", "pvs", "classes", "csinodes")

    def volumes_of(self, pod: PodInfo, new: bool) -> dict[str, str] | Status:
        """``driver/handle`` -> driver of each CSI volume of the pod; a new pod's missing claim rejects it."""
        found: dict[str, str] = {}
        for name, _ in pod_claims(pod):
            pvc = self.storage.pvc(pod.namespace, name)
            if pvc is None:
                if new:
                    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"looking up PVC {pod.namespace}/{name}: "
                                  f'persistentvolumeclaim "{name}" not found')
                continue  # an existing pod's claim gone: not counted, as upstream
            driver, handle = self._driver_and_handle(pvc)
            if driver and handle:
                found[f"{driver}/{handle}"] = driver
        return found

    def _driver_and_handle(self, pvc: dict[str, Any]) -> tuple[str, str]:
        pv_name = (pvc.get("spec") or {}).get("volumeName") or ""
        pv = self.storage.pv(pv_name) if pv_name else None
        if pv is not None:
            csi = (pv.get("spec") or {}).get("csi") or {}
            return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")
        class_name = claim_class(pvc)  # unbound (or its PV not seen yet): its class's provisioner will attach it
        sc = self.storage.storage_class(class_name) if class_name else None
        if sc is None:
            return "", ""
        meta = pvc.get("metadata") or {}
        return str(sc.get("provisioner") or ""), f"unbound:{meta.get('namespace')}/{meta.get('name')}"

    def limits(self, node: NodeInfo) -> dict[str, int]:
        csinode = self.storage.csinode(node.name)
        limits: dict[str, int] = {}
        for driver in ((csinode or {}).get("spec") or {}).get("drivers") or ():
            count = (driver.get("allocatable") or {}).get("count")
            if count is not None:
                limits[driver.get("name", "")] = int(count)
        return limits

    @componentbase.hookimpl
    def scheduler_pre_filter(self, pod: PodInfo) -> Status | None:
        return None if pod_claims(pod) else SKIP

    @componentbase.hookimpl
    def scheduler_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
                         rejected: dict[str, Status]) -> list[NodeInfo]:
        if self.name not in state:  # looked up at the first chunk's Filter, as upstream's Filter does per node
            state[self.name] = self.volumes_of(pod, new=True)
        new_volumes: dict[str, str] | Status = state[self.name]
        if isinstance(new_volumes, Status):
            new_volumes.plugin = self.name
            rejected.update((n.name, new_volumes) for n in nodes)
            return []
        exceeded = Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, plugin=self.name)
        passed = []
        for n in nodes:
            limits = self.limits(n)
            if not new_volumes or not limits or not any(driver in limits for driver in new_volumes.values()):
                passed.append(n)
                continue
            attached: dict[str, str] = {}
            for other in n.pods.values():
                if other.spec.get("volumes"):
                    found = self.volumes_of(other, new=False)
                    attached.update(found if isinstance(found, dict) else {})
            counts: dict[str, int] = {}
            for driver in attached.values():
                counts[driver] = counts.get(driver, 0) + 1
            adding: dict[str, int] = {}
            for unique, driver in new_volumes.items():
                if unique not in attached:
                    adding[driver] = adding.get(driver, 0) + 1
            if any(driver in limits and counts.get(driver, 0) + more > limits[driver]
                   for driver, more in adding.items()):
                rejected[n.name] = exceeded
            else:
                passed.append(n)
        return passed
