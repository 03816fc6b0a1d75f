"""The volume plugins against the loopback API server, as a user sees them: a WaitForFirstConsumer claim
gets the node the pod is scheduled to, PVs steer their pods, a ReadWriteOncePod claim serves one pod.

The test plays the parts no API server plays: the provisioner (a PV for a claim with ``selected-node``) and
the PV controller (claims bound to their PVs with ``bind-completed``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from componentbase.client import request
from componentbase.testing import eventually
from tests.scheduler.builders import node
from tests.scheduler.volume_builders import HOSTNAME, NO_PROVISIONER, claim, pod_with, storage_class, volume

from .conftest import Cluster, Running

pytestmark = pytest.mark.process

ZONE = "topology.kubernetes.io/zone"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
Obj = dict[str, Any]


class Storage:
    """PVCs, PVs and StorageClasses on the server, and the PV controller's and provisioner's writes."""

    def __init__(self, api: client.ApiClient) -> None:
        self.api = api

    def call(self, method: str, path: str, body: Any = None, content_type: str | None = None) -> Obj:
        return json.loads(request(self.api, method, path, body=body, content_type=content_type).read())  # type: ignore[no-any-return]

    def create(self, obj: Obj) -> Obj:
        kind = obj["kind"]
        if kind == "PersistentVolumeClaim":
            return self.call("POST", "/api/v1/namespaces/default/persistentvolumeclaims", _fresh(obj))
        if kind == "PersistentVolume":
            created = self.call("POST", "/api/v1/persistentvolumes", _fresh(obj))
            phase = obj["status"]["phase"]  # the PV controller's: the server creates PVs Pending
            return self.call("PATCH", f"/api/v1/persistentvolumes/{obj['metadata']['name']}/status",
                             {"status": {"phase": phase}}, "application/merge-patch+json") if phase else created
        return self.call("POST", "/apis/storage.k8s.io/v1/storageclasses", obj)

    def pvc(self, name: str) -> Obj:
        return self.call("GET", f"/api/v1/namespaces/default/persistentvolumeclaims/{name}")

    def pv(self, name: str) -> Obj:
        return self.call("GET", f"/api/v1/persistentvolumes/{name}")

    def bind(self, claim_name: str, pv_name: str) -> None:
        """The PV controller's part: the claim names its PV and is marked bind-completed."""
        pvc = self.pvc(claim_name)
        pvc["spec"]["volumeName"] = pv_name
        pvc["metadata"].setdefault("annotations", {})["pv.kubernetes.io/bind-completed"] = "yes"
        self.call("PUT", f"/api/v1/namespaces/default/persistentvolumeclaims/{claim_name}", pvc)


def _fresh(obj: Obj) -> Obj:
    """``obj`` as a client creates it: no uid, resourceVersion or status of the builders' making."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("uid", "resourceVersion")}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


@pytest.fixture
def storage(kube_client: client.ApiClient) -> Storage:
    return Storage(kube_client)


def zoned_nodes(cluster: Cluster) -> None:
    for name, zone in (("n1", "a"), ("n2", "b")):
        cluster.create(node(name, labels={HOSTNAME: name, ZONE: zone}))


def test_wait_for_first_consumer_claim_is_provisioned_on_the_chosen_node(
        cluster: Cluster, storage: Storage, start_scheduler: Callable[..., Running]) -> None:
    zoned_nodes(cluster)
    storage.create(storage_class("fast", provisioner="example.com/csi", zones=["b"]))
    storage.create(claim("data", cls="fast"))
    cluster.create(pod_with("app", "data"))
    start_scheduler()

    def selected() -> str:
        return str((storage.pvc("data")["metadata"].get("annotations") or {}).get(SELECTED_NODE, ""))

    eventually(lambda: selected() != "", what="the claim's selected-node annotation")
    assert selected() == "n2"  # the only node in the class's allowed zone
    assert cluster.node_of("app") == ""  # not bound before its volume is
    pvc = storage.pvc("data")
    pv = volume("pvc-data", cls="fast", node="n2", bound_to=pvc, csi=("example.com/csi", "vol-1"))
    storage.create(pv)
    storage.bind("data", "pvc-data")
    eventually(lambda: cluster.node_of("app") == "n2", what="app bound once its claim is")


def test_pvs_steer_their_pods_and_static_pvs_are_bound_by_the_scheduler(
        cluster: Cluster, storage: Storage, start_scheduler: Callable[..., Running]) -> None:
    zoned_nodes(cluster)
    storage.create(storage_class("local", provisioner=NO_PROVISIONER))
    pinned = storage.create(claim("pinned", cls="local"))
    storage.create(volume("pv-pinned", cls="local", node="n2", bound_to=pinned))
    storage.bind("pinned", "pv-pinned")
    storage.create(claim("static", cls="local"))
    storage.create(volume("pv-static", cls="local", node="n1"))
    storage.create(storage_class("manual", mode="Immediate", provisioner="example.com/csi"))
    storage.create(claim("later", cls="manual"))
    cluster.create(pod_with("steered", "pinned"))
    cluster.create(pod_with("static", "static"))
    cluster.create(pod_with("waiting", "later"))
    start_scheduler()
    eventually(lambda: cluster.node_of("steered") == "n2", what="steered bound next to its PV")

    def claim_ref() -> str:
        return str((storage.pv("pv-static")["spec"].get("claimRef") or {}).get("name", ""))

    eventually(lambda: claim_ref() == "static", what="the static PV's claimRef")
    assert storage.pv("pv-static")["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    storage.bind("static", "pv-static")
    eventually(lambda: cluster.node_of("static") == "n1", what="static bound on its PV's node")

    [event] = cluster.wait_events("waiting", "FailedScheduling")
    assert event["message"] == ("0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
                                "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..")
    later = storage.pvc("later")
    storage.create(volume("pv-later", cls="manual", node="n1", bound_to=later))
    storage.bind("later", "pv-later")  # a claim update: the parked pod is retried at once
    eventually(lambda: cluster.node_of("waiting") == "n1", what="waiting bound once its claim is")


def test_read_write_once_pod_conflict_is_reported_until_the_user_goes(
        cluster: Cluster, storage: Storage, start_scheduler: Callable[..., Running]) -> None:
    zoned_nodes(cluster)
    db = storage.create(claim("db", modes=("ReadWriteOncePod",)))
    storage.create(volume("pv-db", bound_to=db, modes=("ReadWriteOncePod",)))
    storage.bind("db", "pv-db")
    cluster.create(pod_with("first", "db", node="n1"))
    cluster.create(pod_with("second", "db"))
    start_scheduler()
    [event] = cluster.wait_events("second", "FailedScheduling")
    assert event["message"] == ("0/2 nodes are available: 2 node has pod using PersistentVolumeClaim with the "
                                "same name and ReadWriteOncePod access mode. preemption: 0/2 nodes are available: "
                                "2 No preemption victims found for incoming pod..")
    eventually(lambda: (cluster.condition("second") or {}).get("reason") == "Unschedulable",
               what="second's PodScheduled condition")
    cluster.delete_pod("first")
    eventually(lambda: cluster.node_of("second") in ("n1", "n2"), what="second bound once first is gone")
