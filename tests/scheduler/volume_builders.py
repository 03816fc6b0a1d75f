"""PVCs, PVs, StorageClasses and CSINodes as the API's JSON, and a default framework that reads them from
fixed stores (``StaticStore``), for the volume plugins' tests."""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from componentbase_examples.scheduler import config, profiles
from componentbase_examples.scheduler.algorithm import FitError, SchedulingAlgorithm
from componentbase_examples.scheduler.framework import CycleState, Framework, Handle
from componentbase_examples.scheduler.plugins.volumes import StaticStore
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import Snapshot
from tests.scheduler.builders import default_config, pod, registry

Obj = dict[str, Any]
HOSTNAME = "kubernetes.io/hostname"
NO_PROVISIONER = "kubernetes.io/no-provisioner"


def claim(name: str, *, cls: str | None = None, volume: str = "", modes: Iterable[str] = ("ReadWriteOnce",),
          size: str = "1Gi", annotations: dict[str, str] | None = None, namespace: str = "default",
          phase: str = "Pending", uid: str = "") -> Obj:
    """A PVC; ``volume`` names its PV and makes it fully bound (``bind-completed``), as the PV controller does."""
    meta: Obj = {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}", "resourceVersion": "1",
                 "annotations": dict(annotations or {})}
    spec: Obj = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}, "volumeMode": "Filesystem"}
    if cls is not None:
        spec["storageClassName"] = cls
    if volume:
        spec["volumeName"] = volume
        meta["annotations"]["pv.kubernetes.io/bind-completed"] = "yes"
        phase = "Bound"
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec,
            "status": {"phase": phase}}


def volume(name: str, *, cls: str = "", size: str = "1Gi", modes: Iterable[str] = ("ReadWriteOnce",),
           phase: str = "Available", node: str | None = None, labels: dict[str, str] | None = None,
           bound_to: Obj | None = None, csi: tuple[str, str] | None = None) -> Obj:
    """A PV; ``node`` pins it with required node affinity on the hostname label (a local volume)."""
    spec: Obj = {"capacity": {"storage": size}, "accessModes": list(modes), "volumeMode": "Filesystem",
                 "storageClassName": cls}
    if node is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node]}]}]}}
    if bound_to is not None:
        m = bound_to["metadata"]
        spec["claimRef"] = {"namespace": m["namespace"], "name": m["name"], "uid": m["uid"]}
        phase = "Bound"
    if csi is not None:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": labels or {}, "resourceVersion": "1"},
            "spec": spec, "status": {"phase": phase}}


def storage_class(name: str, *, mode: str | None = "WaitForFirstConsumer", provisioner: str = NO_PROVISIONER,
                  zones: Iterable[str] = ()) -> Obj:
    sc: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
               "provisioner": provisioner}
    if mode is not None:
        sc["volumeBindingMode"] = mode
    zones = list(zones)
    if zones:
        sc["allowedTopologies"] = [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone",
                                                               "values": zones}]}]
    return sc


def csinode(name: str, **counts: int) -> Obj:
    drivers = [{"name": driver.replace("_", "."), "nodeID": name, "allocatable": {"count": n}}
               for driver, n in counts.items()]
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
            "spec": {"drivers": drivers}}


def pod_with(name: str, *claims: str, node: str = "", **volumes: Obj) -> Obj:
    """A pod mounting the named claims, then inline ``volumes`` (``gce={"gcePersistentDisk": {...}}``)."""
    p = pod(name)
    p["metadata"]["uid"] = f"uid-{name}"
    p["spec"]["volumes"] = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    p["spec"]["volumes"] += [{"name": k, **v} for k, v in volumes.items()]
    if node:
        p["spec"]["nodeName"] = node
    return p


class VolumeCluster:
    """Nodes, bound pods and storage objects; the default profile schedules over them as in a cluster."""

    def __init__(self, nodes: list[Obj], *objects: Obj, pods: Iterable[Obj] = (),
                 cfg: config.KubeSchedulerConfiguration | None = None) -> None:
        self.stores: dict[str, StaticStore] = {}
        for obj in objects:
            self.put(obj)
        self.snapshot = Snapshot(nodes, pods)
        handle = Handle(self.snapshot, informer=lambda _, kind: self.stores.setdefault(kind, StaticStore()))
        frameworks = profiles.build_frameworks(cfg or default_config(), registry(), handle)
        self.framework: Framework = next(iter(frameworks.values()))
        self.algorithm = SchedulingAlgorithm(self.snapshot, 0, random.Random(0))

    def put(self, obj: Obj) -> None:
        self.stores.setdefault(obj["kind"], StaticStore()).put(obj)

    def plugin(self, name: str) -> Any:
        return self.framework.plugins[name]

    def schedule(self, p: Obj, reserve: bool = True) -> tuple[str, CycleState]:
        """The chosen node and the cycle's state; with ``reserve``, the pod is assumed and reserved there."""
        info = PodInfo(p)
        state: CycleState = {}
        host = self.algorithm.schedule_pod(self.framework, state, info).suggested_host
        if reserve:
            self.snapshot.assume_pod(info, host)
            assert self.framework.run_reserve(state, info, host) is None
        return host, state

    def message(self, p: Obj) -> str:
        """The filters' verdict: the FitError's message without what PostFilter (preemption) adds."""
        try:
            host, _ = self.schedule(p, reserve=False)
        except FitError as e:
            return str(e).split(" preemption: ", 1)[0]
        raise AssertionError(f"expected no fit, got {host}")
