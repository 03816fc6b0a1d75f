"""VolumeBinding, case by case from kube-scheduler's volume_binding_test.go and binder_test.go: the messages a
user reads in FailedScheduling, the PVs chosen, and what Reserve, Unreserve and PreBind do."""

from __future__ import annotations

from typing import Any

import pytest

from componentbase import field
from componentbase_examples.scheduler.framework import Code
from componentbase_examples.scheduler.plugins.volumebinding import VolumeBindingArgs
from componentbase_examples.scheduler.plugins.volumes import StaticStore
from componentbase_examples.scheduler.podinfo import PodInfo
from tests.scheduler.builders import load_config, node
from tests.scheduler.volume_builders import (
    HOSTNAME,
    VolumeCluster,
    claim,
    pod_with,
    storage_class,
    volume,
)

pytestmark = pytest.mark.unit

ZONE = "topology.kubernetes.io/zone"
NODES = [node("n1", labels={HOSTNAME: "n1", ZONE: "a"}), node("n2", labels={HOSTNAME: "n2", ZONE: "b"})]
WFFC = storage_class("wait")
IMMEDIATE = storage_class("immediate", mode="Immediate", provisioner="example.com/csi")


def test_a_pod_without_claims_skips_the_plugin() -> None:
    c = VolumeCluster(NODES)
    host, state = c.schedule(pod_with("p"))
    assert host in ("n1", "n2") and "VolumeBinding" not in state


@pytest.mark.parametrize(("objects", "claims", "message"), [
    pytest.param((), ("pvc-a",), 'persistentvolumeclaim "pvc-a" not found', id="pvc missing"),
    pytest.param((claim("pvc-a", volume="pv-a"),), ("pvc-a", "pvc-b"), 'persistentvolumeclaim "pvc-b" not found',
                 id="part of the pvcs missing"),
    pytest.param((IMMEDIATE, claim("pvc-a", cls="immediate")), ("pvc-a",),
                 "pod has unbound immediate PersistentVolumeClaims", id="immediate claim not bound"),
    pytest.param((claim("pvc-a"),), ("pvc-a",), "pod has unbound immediate PersistentVolumeClaims",
                 id="no class: immediate"),
    pytest.param((WFFC, {**claim("pvc-a", cls="wait", volume="pv-a"), "status": {"phase": "Lost"}}), ("pvc-a",),
                 'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"', id="claim lost"),
])
def test_pre_filter_rejections(objects: tuple[dict[str, Any], ...], claims: tuple[str, ...], message: str) -> None:
    c = VolumeCluster(NODES, *objects)
    assert c.message(pod_with("p", *claims)) == f"0/2 nodes are available: {message}."


def test_a_claim_being_deleted_is_refused() -> None:
    pvc = claim("pvc-a", volume="pv-a")
    pvc["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    c = VolumeCluster(NODES, pvc, volume("pv-a", bound_to=pvc))
    assert c.message(pod_with("p", "pvc-a")) == \
        '0/2 nodes are available: persistentvolumeclaim "pvc-a" is being deleted.'


def test_an_ephemeral_volume_waits_for_its_claim() -> None:
    p = pod_with("p")
    p["spec"]["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]
    assert VolumeCluster(NODES).message(p) == ("0/2 nodes are available: waiting for ephemeral volume controller "
                                               'to create the persistentvolumeclaim "p-scratch".')


def test_bound_claims_pv_node_affinity_steers_the_pod() -> None:
    pvc = claim("pvc-a", volume="pv-a")
    c = VolumeCluster(NODES, pvc, volume("pv-a", node="n2", bound_to=pvc))
    host, state = c.schedule(pod_with("p", "pvc-a"))
    assert host == "n2"
    assert state["VolumeBinding"].all_bound  # nothing to bind at PreBind


def test_bound_and_unbound_unsatisfied_reports_both_reasons() -> None:
    bound = claim("pvc-a", volume="pv-a")
    in_zone_c = volume("pv-a", bound_to=bound)
    in_zone_c["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["c"]}]}]}}
    c = VolumeCluster(NODES[:1], WFFC, bound, in_zone_c, claim("pvc-b", cls="wait"))
    assert c.message(pod_with("p", "pvc-a", "pvc-b")) == (
        "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind, "
        "1 node(s) had volume node affinity conflict.")


def test_bound_local_pvs_narrow_the_nodes_filtered() -> None:
    bound = claim("pvc-a", volume="pv-a")
    c = VolumeCluster([*NODES, node("n3", cpu="1")], bound, volume("pv-a", node="n3", bound_to=bound))
    big = pod_with("p", "pvc-a")
    big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    assert c.message(big) == ("0/3 nodes are available: 1 Insufficient cpu, "
                              "2 node(s) didn't satisfy plugin(s) [VolumeBinding].")


def test_a_claim_bound_to_a_missing_pv() -> None:
    # VolumeZone's PreFilter looks the PV up first, as upstream; without it VolumeBinding's Filter says why.
    c = VolumeCluster(NODES, claim("pvc-a", volume="gone"))
    assert c.message(pod_with("p", "pvc-a")) == '0/2 nodes are available: persistentvolume "gone" not found.'
    no_zone = load_config("profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: VolumeZone}]\n")
    c = VolumeCluster(NODES, claim("pvc-a", volume="gone"), cfg=no_zone)
    assert c.message(pod_with("p", "pvc-a")) == (
        "0/2 nodes are available: 2 node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s).")


def test_wait_for_first_consumer_binds_the_smallest_fitting_pv_on_the_chosen_node() -> None:
    c = VolumeCluster(NODES, WFFC, claim("pvc-a", cls="wait", size="5Gi"),
                      volume("big", cls="wait", size="100Gi", node="n1"),
                      volume("close", cls="wait", size="8Gi", node="n1"),
                      volume("small", cls="wait", size="1Gi", node="n1"),
                      volume("pending", cls="wait", size="5Gi", node="n2", phase="Pending"),
                      volume("other-class", cls="", size="5Gi", node="n2"))
    host, state = c.schedule(pod_with("p", "pvc-a"))
    assert host == "n1"  # n2's PVs are not available, or not of the class
    [(pv, _)] = state["VolumeBinding"].by_node["n1"].static_bindings
    assert pv["metadata"]["name"] == "close"
    assert pv["spec"]["claimRef"]["name"] == "pvc-a" and pv["spec"]["claimRef"]["uid"] == "uid-pvc-a"
    assert pv["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"


def test_no_matching_pv_and_no_provisioner() -> None:
    c = VolumeCluster(NODES, WFFC, claim("pvc-a", cls="wait", modes=("ReadWriteMany",)),
                      volume("rwo", cls="wait", node="n1"))
    assert c.message(pod_with("p", "pvc-a")) == (
        "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.")


def test_provisioning_follows_the_classes_allowed_topologies() -> None:
    c = VolumeCluster(NODES, storage_class("fast", provisioner="example.com/csi", zones=["b"]),
                      claim("pvc-a", cls="fast"))
    host, state = c.schedule(pod_with("p", "pvc-a"))
    assert host == "n2"
    [provision] = state["VolumeBinding"].by_node["n2"].provisions
    assert provision["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "n2"
    claimed = c.plugin("VolumeBinding").pvcs.get("default/pvc-a")  # assumed until the informer moves on
    assert claimed["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "n2"


def test_a_claim_selected_for_another_node_fits_only_there() -> None:
    c = VolumeCluster(NODES, storage_class("fast", provisioner="example.com/csi"),
                      claim("pvc-a", cls="fast", annotations={"volume.kubernetes.io/selected-node": "n1"}))
    assert c.schedule(pod_with("p", "pvc-a"), reserve=False)[0] == "n1"


def test_a_missing_class_binds_immediately_and_a_class_without_binding_mode_is_an_error() -> None:
    c = VolumeCluster(NODES, claim("pvc-a", cls="nowhere"))
    assert c.message(pod_with("p", "pvc-a")) == "0/2 nodes are available: pod has unbound immediate " \
                                                "PersistentVolumeClaims."
    c = VolumeCluster(NODES, storage_class("wait", mode=None), claim("pvc-a", cls="wait"))
    with pytest.raises(RuntimeError, match='VolumeBindingMode not set for StorageClass "wait"'):
        c.schedule(pod_with("p", "pvc-a"))


def test_reserve_holds_the_pv_and_unreserve_gives_it_back() -> None:
    c = VolumeCluster(NODES[:1], WFFC, claim("pvc-a", cls="wait"), claim("pvc-b", cls="wait"),
                      volume("only", cls="wait", node="n1"))
    first = pod_with("first", "pvc-a")
    host, state = c.schedule(first)
    assert host == "n1"
    assert c.message(pod_with("second", "pvc-b")) == (
        "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind.")
    c.framework.run_unreserve(state, PodInfo(first), host)
    c.snapshot.forget_pod(PodInfo(first).key)
    assert c.schedule(pod_with("second", "pvc-b"))[0] == "n1"


class FakeAPI:
    """Stands in for the API in PreBind: records each PUT and answers with a newer resourceVersion."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.updates.append(obj)
        return {**obj, "metadata": {**obj["metadata"], "resourceVersion": "2"}}


def test_pre_bind_writes_the_claim_then_fails_after_the_bind_timeout() -> None:
    c = VolumeCluster(NODES, storage_class("fast", provisioner="example.com/csi"), claim("pvc-a", cls="fast"))
    plugin = c.plugin("VolumeBinding")
    plugin.api, plugin.bind_timeout = FakeAPI(), 0.05
    p = pod_with("p", "pvc-a")
    plugin.pods = StaticStore([p])
    host, state = c.schedule(p)
    status = c.framework.run_bind(state, PodInfo(p), host)
    assert status is not None and status.code == Code.ERROR and status.plugin == "VolumeBinding"
    assert status.message() == "binding volumes: timed out waiting for the condition"
    [written] = plugin.api.updates
    assert written["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == host


def test_pre_bind_stops_waiting_when_the_pod_is_gone() -> None:
    c = VolumeCluster(NODES, storage_class("fast", provisioner="example.com/csi"), claim("pvc-a", cls="fast"))
    plugin = c.plugin("VolumeBinding")
    plugin.api, plugin.pods = FakeAPI(), StaticStore()
    p = pod_with("p", "pvc-a")
    host, state = c.schedule(p)
    status = c.framework.run_bind(state, PodInfo(p), host)
    assert status is not None and status.message() == "binding volumes: pod does not exist any more"


def test_args_default_and_validation() -> None:
    assert VolumeBindingArgs().bind_timeout_seconds == 600
    [err] = VolumeBindingArgs(bind_timeout_seconds=-1).validate(field.Path("args"))
    assert str(err) == ("args.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, "
                        "should not be a negative value")
