"""What the volume plugins share: a pod's claims, the storage objects they read, kube's PV/PVC helpers.

The plugins read PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes from informers the
scheduler's ``Handle`` provides (``handle.informer(api_version, kind)``, the Manager's cache in a cluster),
requested when the plugin is built, as kube's plugins take listers in ``New``: a profile without the volume
plugins watches none of these kinds. Without informers (a dry run, a unit test) the stores are empty or
whatever ``StaticStore`` holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from componentbase_examples.scheduler.framework import Code, Handle, Status
from componentbase_examples.scheduler.plugins.helpers import NodeSelector
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_SELECTED_NODE",
    "NOT_SUPPORTED_PROVISIONER",
    "PluginError",
    "StaticStore",
    "StorageObjects",
    "Store",
    "claim_class",
    "is_fully_bound",
    "pod_claims",
    "pv_class",
    "pv_matches_node",
    "topology_matches",
]

Obj = dict[str, Any]

ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
_ANN_BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
#: A StorageClass with this provisioner has only static PVs (local volumes): nothing to provision.
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"


class Store(Protocol):
    """What a plugin reads of an informer: an object by key (``ns/name``, or ``name``), or all of them."""

    def get(self, key: str) -> Obj | None: ...

    def list(self) -> list[Obj]: ...


class StaticStore:
    """A ``Store`` over fixed objects: for dry runs and tests, where no informer runs."""

    def __init__(self, objects: Iterable[Mapping[str, Any]] = ()) -> None:
        self.objects: dict[str, Obj] = {}
        for obj in objects:
            self.put(obj)

    def put(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace")
        self.objects[f"{ns}/{meta['name']}" if ns else meta["name"]] = dict(obj)

    def get(self, key: str) -> Obj | None:
        return self.objects.get(key)

    def list(self) -> list[Obj]:
        return list(self.objects.values())


class PluginError(RuntimeError):
    """A plugin could not decide (a missing StorageClass, a claim with no class): the cycle fails with it,
    as kube's ``framework.AsStatus(err)`` does, rather than counting as a node's rejection."""


_KINDS = {"pvcs": ("v1", "PersistentVolumeClaim"), "pvs": ("v1", "PersistentVolume"),
          "classes": ("storage.k8s.io/v1", "StorageClass"), "csinodes": ("storage.k8s.io/v1", "CSINode")}


class StorageObjects:
    """The storage listers a plugin asked for (``kinds``, keys of ``_KINDS``), from the handle's informers."""

    def __init__(self, handle: Handle, *kinds: str) -> None:
        informer: Callable[[str, str], Store] | None = getattr(handle, "informer", None)
        empty = StaticStore()
        self.pvcs: Store = empty
        self.pvs: Store = empty
        self.classes: Store = empty
        self.csinodes: Store = empty
        for kind in kinds:
            setattr(self, kind, informer(*_KINDS[kind]) if informer is not None else StaticStore())

    def pvc(self, namespace: str, name: str) -> Obj | None:
        return self.pvcs.get(f"{namespace}/{name}")

    def pv(self, name: str) -> Obj | None:
        return self.pvs.get(name)

    def storage_class(self, name: str) -> Obj | None:
        return self.classes.get(name)

    def csinode(self, name: str) -> Obj | None:
        return self.csinodes.get(name)


def pod_claims(pod: PodInfo) -> list[tuple[str, bool]]:
    """``(claim name, is a generic ephemeral volume)`` of each volume backed by a claim, in spec order.

    An ephemeral volume's claim is named ``<pod>-<volume>``, as kube's ``ephemeral.VolumeClaimName``.
    """
    found: list[tuple[str, bool]] = []
    for volume in pod.spec.get("volumes") or ():
        if "persistentVolumeClaim" in volume:
            found.append(((volume["persistentVolumeClaim"] or {}).get("claimName") or "", False))
        elif "ephemeral" in volume:
            found.append((f"{pod.name}-{volume.get('name', '')}", True))
    return found


def missing_claim(name: str, ephemeral: bool) -> Status:
    """The rejection for a claim the informer does not have, in kube's words."""
    if ephemeral:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                      f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"')
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'persistentvolumeclaim "{name}" not found')


def ephemeral_owner_problem(pod: PodInfo, pvc: Obj) -> str | None:
    """kube's ``ephemeral.VolumeIsForPod``: the claim of an ephemeral volume must be controlled by the pod."""
    uid = (pod.pod.get("metadata") or {}).get("uid")
    for ref in (pvc.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller") and ref.get("uid") == uid:
            return None
    meta = pvc.get("metadata") or {}
    return (f"PVC {meta.get('namespace')}/{meta.get('name')} was not created for pod "
            f"{pod.namespace}/{pod.name} (pod is not owner)")


def claim_class(pvc: Mapping[str, Any]) -> str:
    """kube's ``GetPersistentVolumeClaimClass``: the beta annotation, else ``spec.storageClassName``."""
    annotations = (pvc.get("metadata") or {}).get("annotations") or {}
    if _ANN_BETA_CLASS in annotations:
        return str(annotations[_ANN_BETA_CLASS])
    return str((pvc.get("spec") or {}).get("storageClassName") or "")


pv_class = claim_class  # PVs carry their class the same two ways (``GetPersistentVolumeClass``)


def is_fully_bound(pvc: Mapping[str, Any]) -> bool:
    """Bound by the PV controller: a volume named and ``bind-completed`` set (kube's ``isPVCFullyBound``)."""
    return bool((pvc.get("spec") or {}).get("volumeName")) and \
        ANN_BIND_COMPLETED in ((pvc.get("metadata") or {}).get("annotations") or {})


def pv_matches_node(pv: Mapping[str, Any], node: NodeInfo) -> bool:
    """kube's ``CheckNodeAffinity``: a PV without required node affinity fits every node."""
    required = ((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required")
    if required is None:
        return True
    return NodeSelector(required).match(node)


def topology_matches(terms: Iterable[Mapping[str, Any]] | None, labels: Mapping[str, str]) -> bool:
    """kube's ``MatchTopologySelectorTerms``: no terms match all; else a non-empty term whose expressions all hold."""
    terms = list(terms or ())
    if not terms:
        return True
    for term in terms:
        exprs = term.get("matchLabelExpressions") or ()
        if exprs and all(e.get("key") in labels and labels[e["key"]] in (e.get("values") or ()) for e in exprs):
            return True
    return False
