"""VolumeRestrictions: volumes two pods cannot share, as kube-scheduler's plugin of that name.

* A claim with the ``ReadWriteOncePod`` access mode serves one pod in the whole cluster: while a scheduled
  (or assumed) pod uses it, every node is rejected as ``Unschedulable`` (preemption may free it).
* Inline disks already mounted on the node by another pod: the same GCE PD unless both mount it
  read-only, the same AWS EBS volume ID, the same ISCSI IQN unless both are read-only, the same RBD image
  (a shared Ceph monitor, same pool and image) unless both are read-only.

A pod with neither skips the plugin, so the filter loop never looks at other pods' volumes for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import componentbase
from componentbase_examples.scheduler.framework import SKIP, Code, CycleState, Handle, Plugin, Status
from componentbase_examples.scheduler.plugins.volumes import StorageObjects
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

__all__ = ["ERR_REASON_DISK_CONFLICT", "ERR_REASON_RWOP_CONFLICT", "VolumeRestrictions", "is_volume_conflict"]

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = ("node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
                            "access mode")
_INLINE = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")

Volume = Mapping[str, Any]


def _both_read_only(a: Volume, b: Volume) -> bool:
    return bool(a.get("readOnly")) and bool(b.get("readOnly"))


def _conflict(kind: str, a: Volume, b: Volume) -> bool:
    if kind == "gcePersistentDisk":
        return a.get("pdName") == b.get("pdName") and not _both_read_only(a, b)
    if kind == "awsElasticBlockStore":
        return a.get("volumeID") == b.get("volumeID")
    if kind == "iscsi":
        return a.get("iqn") == b.get("iqn") and not _both_read_only(a, b)
    shared_monitor = bool(set(a.get("monitors") or ()) & set(b.get("monitors") or ()))
    return (shared_monitor and (a.get("pool") or "rbd") == (b.get("pool") or "rbd")
            and a.get("image") == b.get("image") and not _both_read_only(a, b))


def is_volume_conflict(volume: Volume, existing_pod: Mapping[str, Any]) -> bool:
    """kube's ``isVolumeConflict``: whether ``volume`` cannot be mounted beside the other pod's volumes."""
    for existing in (existing_pod.get("spec") or {}).get("volumes") or ():
        for kind in _INLINE:
            if kind in volume and kind in existing and _conflict(kind, volume[kind] or {}, existing[kind] or {}):
                return True
    return False


class VolumeRestrictions(Plugin):
    name = "VolumeRestrictions"

    def __init__(self, args: Any, handle: Handle) -> None:
        super().__init__(args, handle)
        self.storage = StorageObjects(handle, "pvcs")

    @componentbase.hookimpl
    def scheduler_pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        volumes = pod.spec.get("volumes") or ()
        inline = [v for v in volumes if any(kind in v for kind in _INLINE)]
        conflicts = 0
        for v in volumes:
            if "persistentVolumeClaim" not in v:
                continue
            name = (v["persistentVolumeClaim"] or {}).get("claimName", "")
            pvc = self.storage.pvc(pod.namespace, name)
            if pvc is None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'persistentvolumeclaim "{name}" not found')
            if "ReadWriteOncePod" in ((pvc.get("spec") or {}).get("accessModes") or ()) and \
                    self.handle.snapshot.pvc_refs.get(f"{pod.namespace}/{name}", 0) > 0:
                conflicts += 1  # at most one pod may use it: it is taken
        if not inline and not conflicts:
            return SKIP
        state[self.name] = (inline, conflicts)
        return None

    @componentbase.hookimpl
    def scheduler_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
                         rejected: dict[str, Status]) -> list[NodeInfo]:
        inline, conflicts = state[self.name]
        disk = Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT, plugin=self.name)
        rwop = Status(Code.UNSCHEDULABLE, ERR_REASON_RWOP_CONFLICT, plugin=self.name)
        passed = []
        for n in nodes:
            if inline and any(is_volume_conflict(v, other.pod) for v in inline for other in n.pods.values()):
                rejected[n.name] = disk
            elif conflicts:
                rejected[n.name] = rwop
            else:
                passed.append(n)
        return passed
