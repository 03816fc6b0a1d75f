"""VolumeBinding's capacity score under StorageCapacityScoring (beta and on in kube 1.37), against
volume_binding_test.go's TestVolumeBinding score cases. The "custom shape" cases are upstream's as they stand
(their shape is given); with 1.37's default shape (0% -> 10, 100% -> 0: emptier volumes preferred) the
expected scores follow buildScorerFunction: node-a's 200Gi PV for a 50Gi claim is 25% used -> 75, node-b's
100Gi one 50% -> 50."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from componentbase_examples.scheduler import features
from componentbase_examples.scheduler.framework import CycleState, Status
from componentbase_examples.scheduler.podinfo import PodInfo
from tests.scheduler.builders import load_config, node
from tests.scheduler.volume_builders import HOSTNAME, VolumeCluster, claim, pod_with, storage_class, volume

pytestmark = pytest.mark.unit

ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
WAIT, WAIT_HDD = storage_class("wait"), storage_class("wait-hdd")
CUSTOM = ("profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args:\n      bindTimeoutSeconds: 300\n"
          "      shape: [{utilization: 0, score: 0}, {utilization: 50, score: 3}, {utilization: 100, score: 5}]\n")


def zonal(name: str, size: str, zone: str, region: str) -> dict[str, Any]:
    pv = volume(name, cls="wait", size=size)
    pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": REGION, "operator": "In", "values": [region]}, {"key": ZONE, "operator": "In", "values": [zone]}]}]}}
    return pv


def scores(cluster: VolumeCluster, p: dict[str, Any]) -> list[int]:
    """PreFilter, Filter of every node, PreScore and Score, as the table runs them."""
    plugin, info, nodes = cluster.plugin("VolumeBinding"), PodInfo(p), cluster.snapshot.nodes
    state = CycleState()
    assert plugin.scheduler_pre_filter(state=state, pod=info) is None
    plugin.scheduler_filter(state=state, pod=info, nodes=nodes, rejected={})
    assert plugin.scheduler_pre_score(state=state) is None
    return list(plugin.scheduler_score(state=state, nodes=nodes))


LOCAL_NODES = [node(n, labels={HOSTNAME: n}) for n in ("node-a", "node-b", "node-c")]
LOCAL_PVS = [volume(f"pv-{n}-{i}", cls="wait", size=size, node=f"node-{n}")
             for n, size in (("a", "200Gi"), ("b", "100Gi")) for i in (0, 1)]
ZONAL_NODES = [node(f"zone-{z}-node-{n}", labels={REGION: f"region-{z}", ZONE: f"zone-{z}"})
               for z in "abc" for n in "ab"]
ZONAL_PVS = [zonal(f"pv-{z}-{i}", size, f"zone-{z}", f"region-{z}") for z, size in (("a", "200Gi"), ("b", "100Gi"))
             for i in (0, 1)]


def test_zonal_volumes_with_a_custom_shape() -> None:
    """"zonal volumes with close capacity are preferred (custom shape)": 25% -> 15, 50% -> 30."""
    cluster = VolumeCluster(ZONAL_NODES, WAIT, claim("pvc-a", cls="wait", size="50Gi"), *ZONAL_PVS,
                            cfg=load_config(CUSTOM))
    assert scores(cluster, pod_with("pod-a", "pvc-a")) == [15, 15, 30, 30, 0, 0]


def test_local_volumes_with_max_capacity_are_preferred_by_default() -> None:
    cluster = VolumeCluster(LOCAL_NODES, WAIT, claim("pvc-a", cls="wait", size="50Gi"), *LOCAL_PVS)
    assert scores(cluster, pod_with("pod-a", "pvc-a")) == [75, 50, 0]
    host, _ = cluster.schedule(pod_with("pod-a", "pvc-a"), reserve=False)
    assert host == "node-a"  # VolumeBinding's weight 1 decides between otherwise equal nodes


def test_two_classes_average_their_scores() -> None:
    """"(multiple pvcs)": per class, then the mean: node-a 25% and 50% -> (75 + 50) / 2 = 62.5 -> 63 (Go's
    math.Round); node-b 50% and 100% -> (50 + 0) / 2 = 25."""
    pvs = [volume(f"pv-{n}-{i}", cls=cls, size=size, node=f"node-{n}") for n, size in (("a", "200Gi"), ("b", "100Gi"))
           for i, cls in ((0, "wait"), (1, "wait"), (2, "wait-hdd"), (3, "wait-hdd"))]
    cluster = VolumeCluster(LOCAL_NODES, WAIT, WAIT_HDD, claim("pvc-0", cls="wait", size="50Gi"),
                            claim("pvc-1", cls="wait-hdd", size="100Gi"), *pvs)
    assert scores(cluster, pod_with("pod-a", "pvc-0", "pvc-1")) == [63, 25, 0]


@pytest.fixture
def scoring_off() -> Iterator[None]:
    features.FEATURE_GATE.set_from_map({features.STORAGE_CAPACITY_SCORING: False})
    yield
    features.FEATURE_GATE.set_from_map({features.STORAGE_CAPACITY_SCORING: True})


def test_without_the_gate_pre_score_skips(scoring_off: None) -> None:
    cluster = VolumeCluster(LOCAL_NODES, WAIT, claim("pvc-a", cls="wait", size="50Gi"), *LOCAL_PVS)
    plugin, info = cluster.plugin("VolumeBinding"), PodInfo(pod_with("pod-a", "pvc-a"))
    state = CycleState()
    plugin.scheduler_pre_filter(state=state, pod=info)
    status = plugin.scheduler_pre_score(state=state)
    assert isinstance(status, Status) and status.is_skip()


OLD_DEFAULT = ("profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args:\n"
               "      shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]\n")


def test_upstream_tables_with_the_shape_they_were_written_for() -> None:
    """"local volumes with close capacity are preferred" and its "(multiple pvcs)" case, written for
    VolumeCapacityPriority's default shape (0% -> 0, 100% -> 10), given here explicitly: upstream's 25/50/0 and
    38/75/0."""
    cfg = load_config(OLD_DEFAULT)
    single = VolumeCluster(LOCAL_NODES, WAIT, claim("pvc-a", cls="wait", size="50Gi"), *LOCAL_PVS, cfg=cfg)
    assert scores(single, pod_with("pod-a", "pvc-a")) == [25, 50, 0]
    pvs = [volume(f"pv-{n}-{i}", cls=cls, size=size, node=f"node-{n}") for n, size in (("a", "200Gi"), ("b", "100Gi"))
           for i, cls in ((0, "wait"), (1, "wait"), (2, "wait-hdd"), (3, "wait-hdd"))]
    multiple = VolumeCluster(LOCAL_NODES, WAIT, WAIT_HDD, claim("pvc-0", cls="wait", size="50Gi"),
                             claim("pvc-1", cls="wait-hdd", size="100Gi"), *pvs, cfg=cfg)
    assert scores(multiple, pod_with("pod-a", "pvc-0", "pvc-1")) == [38, 75, 0]
