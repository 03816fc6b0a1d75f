"""VolumeRestrictions, VolumeZone and NodeVolumeLimits, case by case from kube-scheduler's
volume_restrictions_test.go, volume_zone_test.go and csi_test.go, through the default profile."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from componentbase_examples.scheduler import simulate
from componentbase_examples.scheduler.events import ActionType, ClusterEvent
from componentbase_examples.scheduler.plugins.volumerestrictions import is_volume_conflict
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.queue import SchedulingQueue
from componentbase_examples.scheduler.queueing import QueueingHints
from componentbase_examples.scheduler.registry import new_plugin_manager
from tests.scheduler.builders import Cluster, default_config, node
from tests.scheduler.volume_builders import (
    HOSTNAME,
    VolumeCluster,
    claim,
    csinode,
    pod_with,
    storage_class,
    volume,
)

pytestmark = pytest.mark.unit

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"


# VolumeRestrictions: inline disks


def gce(pd: str, read_only: bool = False) -> dict[str, Any]:
    return {"gcePersistentDisk": {"pdName": pd, "readOnly": read_only}}


def rbd(monitors: list[str], image: str, pool: str = "rbd", read_only: bool = False) -> dict[str, Any]:
    return {"rbd": {"monitors": monitors, "image": image, "pool": pool, "readOnly": read_only}}


@pytest.mark.parametrize(("new", "existing", "conflict"), [
    pytest.param(gce("foo"), gce("foo"), True, id="gce same pd"),
    pytest.param(gce("foo"), gce("bar"), False, id="gce other pd"),
    pytest.param(gce("foo", True), gce("foo", True), False, id="gce both read-only"),
    pytest.param(gce("foo", True), gce("foo"), True, id="gce one read-write"),
    pytest.param({"awsElasticBlockStore": {"volumeID": "foo"}}, {"awsElasticBlockStore": {"volumeID": "foo"}},
                 True, id="ebs same volume"),
    pytest.param({"awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}},
                 {"awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}}, True, id="ebs even read-only"),
    pytest.param({"awsElasticBlockStore": {"volumeID": "foo"}}, {"awsElasticBlockStore": {"volumeID": "bar"}},
                 False, id="ebs other volume"),
    pytest.param(rbd(["a", "b"], "foo"), rbd(["b", "c"], "foo"), True, id="rbd shared monitor"),
    pytest.param(rbd(["a"], "foo"), rbd(["c"], "foo"), False, id="rbd other monitors"),
    pytest.param(rbd(["a"], "foo"), rbd(["a"], "bar"), False, id="rbd other image"),
    pytest.param(rbd(["a"], "foo", pool="p1"), rbd(["a"], "foo", pool="p2"), False, id="rbd other pool"),
    pytest.param(rbd(["a"], "foo", read_only=True), rbd(["a"], "foo", read_only=True), False,
                 id="rbd both read-only"),
    pytest.param({"iscsi": {"iqn": "iqn.2016-12.server:storage.target01"}},
                 {"iscsi": {"iqn": "iqn.2016-12.server:storage.target01"}}, True, id="iscsi same iqn"),
    pytest.param({"iscsi": {"iqn": "iqn.a", "readOnly": True}}, {"iscsi": {"iqn": "iqn.a", "readOnly": True}},
                 False, id="iscsi both read-only"),
    pytest.param(gce("foo"), {"awsElasticBlockStore": {"volumeID": "foo"}}, False, id="different kinds"),
])
def test_inline_disk_conflicts(new: dict[str, Any], existing: dict[str, Any], conflict: bool) -> None:
    assert is_volume_conflict(new, pod_with("old", disk=existing)) is conflict
    c = VolumeCluster([node("n1"), node("n2")], pods=[pod_with("old", node="n1", disk=existing)])
    if conflict:
        assert c.schedule(pod_with("new", disk=new), reserve=False)[0] == "n2"
        c.snapshot.add_pod(pod_with("older", node="n2", disk=existing))
        assert c.message(pod_with("new", disk=new)) == "0/2 nodes are available: 2 node(s) had no available disk."


def test_read_write_once_pod_claim_serves_one_pod_in_the_cluster() -> None:
    rwop = claim("db", volume="pv-db", modes=("ReadWriteOncePod",))
    rwx = claim("shared", volume="pv-shared", modes=("ReadWriteMany",))
    objects = (rwop, rwx, volume("pv-db", bound_to=rwop), volume("pv-shared", bound_to=rwx))
    c = VolumeCluster([node("n1"), node("n2")], *objects, pods=[pod_with("user", "db", "shared", node="n1")])
    assert c.message(pod_with("second", "db")) == (
        "0/2 nodes are available: 2 node has pod using PersistentVolumeClaim with the same name and "
        "ReadWriteOncePod access mode.")
    assert c.schedule(pod_with("reader", "shared"), reserve=False)[0] in ("n1", "n2")  # ReadWriteMany: shared
    c.snapshot.remove_pod("uid-user")
    assert c.schedule(pod_with("second", "db"))[0] in ("n1", "n2")  # free again once the user is gone
    assert c.message(pod_with("third", "db")).endswith("ReadWriteOncePod access mode.")  # the assumed pod holds it


def test_restrictions_need_the_claim() -> None:
    c = VolumeCluster([node("n1")])
    assert c.message(pod_with("p", "nope")) == '0/1 nodes are available: persistentvolumeclaim "nope" not found.'


# VolumeZone


def zoned(labels: dict[str, str]) -> VolumeCluster:
    bound = claim("pvc", volume="pv")
    nodes = [node("plain"), node("a", labels={BETA_ZONE: "us-west1-a", BETA_REGION: "us-west1"}),
             node("c", labels={ZONE: "us-west1-c"}), node("b", labels={BETA_ZONE: "us-west1-b"})]
    return VolumeCluster(nodes, bound, volume("pv", bound_to=bound, labels=labels))


@pytest.mark.parametrize(("labels", "fits"), [
    pytest.param({}, {"plain", "a", "b", "c"}, id="pv without zone labels"),
    pytest.param({BETA_ZONE: "us-west1-a"}, {"plain", "a"}, id="beta zone matched"),
    pytest.param({BETA_ZONE: "us-west1-b__us-west1-c"}, {"plain", "b", "c"}, id="multi-zone, beta pv on ga node"),
    pytest.param({ZONE: "us-west1-c"}, {"plain", "c"}, id="ga zone"),
    pytest.param({BETA_REGION: "us-west1", BETA_ZONE: "us-west1-a"}, {"plain", "a"}, id="region and zone"),
    pytest.param({ZONE: "us-east1-x"}, {"plain"}, id="no node in the zone"),
])
def test_volume_zone(labels: dict[str, str], fits: set[str]) -> None:
    c = zoned(labels)
    feasible, diagnosis = c.algorithm.find_nodes_that_fit(c.framework, {}, PodInfo(pod_with("p", "pvc")),
                                                          c.snapshot.nodes)
    assert {n.name for n in feasible} == fits
    assert {s.message() for s in diagnosis.node_to_status.values()} <= {"node(s) had no available volume zone"}


@pytest.mark.parametrize(("objects", "message"), [
    pytest.param((claim("pvc", volume="gone"),), 'persistentvolume "gone" not found', id="pv missing"),
    pytest.param((claim("pvc", cls="wait"), storage_class("wait", mode="Immediate")),
                 "pod has unbound immediate PersistentVolumeClaims", id="unbound immediate (VolumeBinding first)"),
])
def test_volume_zone_pre_filter(objects: tuple[dict[str, Any], ...], message: str) -> None:
    assert VolumeCluster([node("n1")], *objects).message(pod_with("p", "pvc")) == \
        f"0/1 nodes are available: {message}."


def test_volume_zone_skips_wait_for_first_consumer_claims() -> None:
    c = VolumeCluster([node("n1", labels={ZONE: "a"})], claim("pvc", cls="wait"),
                      storage_class("wait", provisioner="example.com/csi"))
    host, _ = c.schedule(pod_with("p", "pvc"), reserve=False)
    assert host == "n1"


# NodeVolumeLimits


def csi_claim(name: str, handle: str, driver: str = "ebs.csi.aws.com") -> tuple[dict[str, Any], dict[str, Any]]:
    pvc = claim(name, volume=f"pv-{name}")
    return pvc, volume(f"pv-{name}", bound_to=pvc, csi=(driver, handle))


def limited(count: int, *extra: dict[str, Any], existing: tuple[str, ...] = ("a", "b")) -> VolumeCluster:
    objects: list[dict[str, Any]] = [csinode("n1", ebs_csi_aws_com=count)]
    for name in ("a", "b", "c", "d"):
        objects += csi_claim(name, f"vol-{name}")
    objects += csi_claim("gce", "disk-1", driver="pd.csi.storage.gke.io")
    return VolumeCluster([node("n1")], *objects, *extra, pods=[pod_with("old", *existing, node="n1")])


def test_csi_volume_limits_count_attached_volumes_per_driver() -> None:
    assert limited(3).schedule(pod_with("p", "c"), reserve=False)[0] == "n1"
    assert limited(2).message(pod_with("p", "c")) == "0/1 nodes are available: 1 node(s) exceed max volume count."
    assert limited(2).schedule(pod_with("p", "a"), reserve=False)[0] == "n1"  # already attached: counted once
    assert limited(2).schedule(pod_with("p", "gce"), reserve=False)[0] == "n1"  # another driver, no limit
    assert limited(3).message(pod_with("p", "c", "d")).endswith("exceed max volume count.")


def test_csi_volume_limits_count_unbound_claims_by_their_class() -> None:
    sc = storage_class("csi", provisioner="ebs.csi.aws.com")
    c = limited(2, sc, claim("new", cls="csi"))
    assert c.message(pod_with("p", "new")).endswith("exceed max volume count.")


def test_a_node_without_csinode_is_not_limited() -> None:
    objects = [o for name in ("a", "b", "c") for o in csi_claim(name, f"vol-{name}")]
    c = VolumeCluster([node("n1")], *objects, pods=[pod_with("old", "a", "b", node="n1")])
    assert c.schedule(pod_with("p", "c"), reserve=False)[0] == "n1"


# --dry-run


def test_dry_run_reads_storage_objects_and_holds_the_pvs_it_chooses(tmp_path: Path) -> None:
    pv = volume("local-1", cls="local", node="n2")
    del pv["status"]  # as written by hand: the dry run makes it Available, as the PV controller would
    docs = [node("n1", labels={HOSTNAME: "n1"}), node("n2", labels={HOSTNAME: "n2"}),
            storage_class("local"), pv, claim("first", cls="local"), claim("second", cls="local"),
            pod_with("one", "first"), pod_with("two", "second")]
    path = tmp_path / "cluster.yaml"
    path.write_text("\n---\n".join(json.dumps(d) for d in docs))
    out, err = io.StringIO(), io.StringIO()
    assert simulate.dry_run(str(path), default_config(), new_plugin_manager(entry_point_group=None), out, err) == 0
    assert err.getvalue() == ""
    lines = out.getvalue().splitlines()
    assert "default/one -> n2" in lines
    assert ("default/two: 0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind. "
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.." in lines)


# events that retry parked pods


@pytest.mark.parametrize(("plugin", "event", "moves"), [
    ("VolumeBinding", ClusterEvent("PersistentVolumeClaim", ActionType.UPDATE), True),
    ("VolumeBinding", ClusterEvent("StorageClass", ActionType.ADD), True),
    ("VolumeBinding", ClusterEvent("PersistentVolume", ActionType.ADD), True),
    ("VolumeZone", ClusterEvent("PersistentVolume", ActionType.UPDATE), True),
    ("VolumeRestrictions", ClusterEvent("Pod", ActionType.DELETE), True),
    ("VolumeRestrictions", ClusterEvent("PersistentVolume", ActionType.ADD), False),
    ("NodeVolumeLimits", ClusterEvent("CSINode", ActionType.UPDATE), True),
    ("NodePorts", ClusterEvent("PersistentVolumeClaim", ActionType.ADD), False),
])
def test_storage_events_retry_the_pods_the_volume_plugins_parked(plugin: str, event: ClusterEvent,
                                                                 moves: bool) -> None:
    queue = SchedulingQueue(clock=lambda: 0.0, hints=QueueingHints.from_frameworks(Cluster([]).frameworks))
    queue.add(PodInfo(pod_with("parked", "pvc")))
    qp = queue.pop(timeout=0)
    assert qp is not None
    queue.add_unschedulable_if_not_present(qp, queue.scheduling_cycle, [plugin])
    assert queue.move_all_to_active_or_backoff(event) == int(moves)
