"""The scheduler against a loopback API server: placements, events and conditions as kube-scheduler makes them."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from componentbase.testing import eventually
from tests.scheduler.builders import node, pod, taint

from .conftest import Cluster, Running

pytestmark = pytest.mark.process

ZONE = "topology.kubernetes.io/zone"


def test_mixed_workload_lands_on_feasible_nodes_only(cluster: Cluster,
                                                    start_scheduler: Callable[..., Running]) -> None:
    cluster.create(node("a1", cpu="2", memory="4Gi", labels={ZONE: "a", "disk": "ssd"}))
    cluster.create(node("a2", cpu="2", memory="4Gi", labels={ZONE: "a"}))
    cluster.create(node("b1", cpu="6", memory="8Gi", labels={ZONE: "b"}))
    cluster.create(node("gpu", cpu="8", memory="16Gi", labels={ZONE: "b", "accelerator": "yes"},
                        taints=[taint("gpu")]))
    cluster.create(node("cordoned", cpu="8", memory="16Gi", unschedulable=True))
    ssd = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}}
    tolerate = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    # Room for every pod in any order: 5.6 cpu of plain, zone-b and ssd pods on 10 cpu, b1 alone holding
    # all of zone b's; the gpu pods need the tainted node's label.
    wanted: dict[str, set[str]] = {}
    for i in range(8):
        cluster.create(pod(f"plain-{i}", cpu="500m", memory="512Mi"))
        wanted[f"plain-{i}"] = {"a1", "a2", "b1"}
    for i in range(3):
        cluster.create(pod(f"zone-b-{i}", cpu="500m", nodeSelector={ZONE: "b"}))
        wanted[f"zone-b-{i}"] = {"b1"}
    cluster.create(pod("ssd", cpu="100m", affinity=ssd))
    wanted["ssd"] = {"a1"}
    for i in range(2):
        cluster.create(pod(f"gpu-{i}", cpu="3", tolerations=tolerate, nodeSelector={"accelerator": "yes"}))
        wanted[f"gpu-{i}"] = {"gpu"}
    cluster.create(pod("other", schedulerName="someone-else"))
    start_scheduler()
    eventually(lambda: len(cluster.bound()) == len(wanted), what="every pod bound")
    bound = cluster.bound()
    for name, allowed in wanted.items():
        assert bound[name] in allowed, f"{name} on {bound[name]}, want one of {sorted(allowed)}"
    assert "other" not in bound, "a pod of another scheduler was bound"
    cluster.assert_no_overcommit()
    for name in ("plain-0", "ssd"):
        [event] = cluster.wait_events(name, "Scheduled")
        assert event["message"] == f"Successfully assigned default/{name} to {bound[name]}"
        assert (event["type"], event["action"], event["reportingComponent"], event["source"]["component"]) == \
            ("Normal", "Binding", "default-scheduler", "default-scheduler")
        assert cluster.condition(name)["status"] == "True"  # type: ignore[index]
    assert cluster.pods()["other"]["spec"].get("nodeName") is None
    assert not cluster.events_for("other", "FailedScheduling")


def test_unschedulable_pod_waits_with_event_and_condition_until_a_node_fits(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    for name in ("n1", "n2"):
        cluster.create(node(name, cpu="1", memory="2Gi"))
    cluster.create(node("tainted", cpu="8", memory="16Gi", taints=[taint("node-role.kubernetes.io/control-plane")]))
    cluster.create(pod("big", cpu="4", memory="1Gi"))
    start_scheduler()
    filters = ("0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
               "2 Insufficient cpu.")
    [event] = cluster.wait_events("big", "FailedScheduling")
    message = event["message"]
    assert message.startswith(f"{filters} preemption: 0/3 nodes are available: "), message
    assert (event["type"], event["message"], event["action"]) == ("Warning", message, "Scheduling")
    eventually(lambda: cluster.condition("big") is not None, what="PodScheduled condition")
    condition = cluster.condition("big")
    assert condition is not None
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "Unschedulable", message)
    assert cluster.node_of("big") == ""
    assert "nominatedNodeName" not in cluster.pods()["big"]["status"]

    cluster.create(node("n3", cpu="8", memory="16Gi"))  # node add: the parked pod is tried again at once
    eventually(lambda: cluster.node_of("big") == "n3", what="big bound to the new node")
    assert cluster.condition("big")["status"] == "True"  # type: ignore[index]
    [scheduled] = cluster.wait_events("big", "Scheduled")
    assert scheduled["message"] == "Successfully assigned default/big to n3"


def test_deleting_a_pod_frees_room_for_a_pending_one(cluster: Cluster,
                                                     start_scheduler: Callable[..., Running]) -> None:
    cluster.create(node("only", cpu="1", memory="2Gi"))
    cluster.create(pod("first", cpu="800m"))
    start_scheduler()
    eventually(lambda: cluster.node_of("first") == "only", what="first bound")
    cluster.create(pod("second", cpu="800m"))
    assert cluster.wait_events("second", "FailedScheduling")[0]["message"] == \
        ("0/1 nodes are available: 1 Insufficient cpu. "
         "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..")
    cluster.delete_pod("first")
    eventually(lambda: cluster.node_of("second") == "only", what="second bound after first deleted")
    cluster.assert_no_overcommit()


TWO_PROFILES = """profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packer
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
"""


def test_two_profiles_each_schedule_their_own_pods(cluster: Cluster,
                                                   start_scheduler: Callable[..., Running]) -> None:
    for i in range(4):
        cluster.create(node(f"n{i}", cpu="4", memory="8Gi"))
    for i in range(4):
        cluster.create(pod(f"packed-{i}", cpu="500m", memory="256Mi", schedulerName="bin-packer"))
    cluster.create(pod("spread", cpu="500m", memory="256Mi"))
    cluster.create(pod("stranger", schedulerName="nobody"))
    start_scheduler(TWO_PROFILES)
    eventually(lambda: len(cluster.bound()) == 5, what="the five pods of the two profiles bound")
    bound = cluster.bound()
    packed = {bound[f"packed-{i}"] for i in range(4)}
    assert len(packed) == 1, f"MostAllocated should pack all four on one node, got {sorted(packed)}"
    assert "stranger" not in bound
    [event] = cluster.wait_events("packed-0", "Scheduled")
    assert event["reportingComponent"] == "bin-packer"
    [event] = cluster.wait_events("spread", "Scheduled")
    assert event["reportingComponent"] == "default-scheduler"


def test_a_scheduler_rate_limited_on_its_side_still_binds_and_says_it_waited(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    """clientConnection.qps and burst are kept as client-go keeps them: calls past the burst wait their turn."""
    cluster.create(node("n1", cpu="4", memory="8Gi"))
    for i in range(4):
        cluster.create(pod(f"p{i}", cpu="100m"))
    running = start_scheduler("", "-v=3", client="  qps: 5\n  burst: 1\n")
    eventually(lambda: len(cluster.bound()) == 4, what="every pod bound")
    waited = [line for line in running.err.getvalue().splitlines()
              if "due to client-side throttling, not priority and fairness, request: POST:" in line]
    assert any(line.endswith("/binding") for line in waited), running.err.getvalue()[-3000:]


def test_the_lease_is_renewed_while_the_schedulers_own_calls_wait_for_their_rate_limit(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    """The lease has its own client, as kube-scheduler's: a backlog of bindings must not cost the leadership."""
    cluster.create(node("n1", cpu="8", memory="8Gi"))
    running = start_scheduler("", "--leader-elect=true", "--leader-elect-lease-duration=3s",
                              "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms",
                              client="  qps: 4\n  burst: 1\n")
    eventually(lambda: cluster.lease_holder(), timeout=20, what="a leader")
    for i in range(12):  # 3 s of bindings (and their events) at 4 qps: past the 2 s renew deadline
        cluster.create(pod(f"p{i}", cpu="100m"))
    eventually(lambda: len(cluster.bound()) == 12 or running.code is not None, timeout=30, what="every pod bound")
    assert running.code is None, running.err.getvalue()[-3000:]
    assert len(cluster.bound()) == 12


def test_replicas_spread_over_zones_and_keep_apart_as_their_constraints_say(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    hostname = "kubernetes.io/hostname"
    for zone in "abc":
        for i in range(2):
            cluster.create(node(f"{zone}{i}", labels={ZONE: zone, hostname: f"{zone}{i}"}))
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    apart = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": hostname, "labelSelector": {"matchLabels": {"app": "db"}}}]}}
    for i in range(6):
        web = pod(f"web-{i}", topologySpreadConstraints=spread)
        web["metadata"]["labels"] = {"app": "web"}
        cluster.create(web)
    for i in range(7):  # one more than there are nodes
        db = pod(f"db-{i}", affinity=apart)
        db["metadata"]["labels"] = {"app": "db"}
        cluster.create(db)
    start_scheduler()
    eventually(lambda: len(cluster.bound()) == 12, what="12 pods bound")
    bound = cluster.bound()
    zones = [cluster.nodes()[bound[f"web-{i}"]]["metadata"]["labels"][ZONE] for i in range(6)]
    assert sorted(zones) == ["a", "a", "b", "b", "c", "c"]
    db_nodes = [n for name, n in bound.items() if name.startswith("db-")]
    assert len(db_nodes) == len(set(db_nodes)) == 6
    (left,) = [f"db-{i}" for i in range(7) if f"db-{i}" not in bound]
    [event] = cluster.wait_events(left, "FailedScheduling")
    assert event["message"].startswith(
        "0/6 nodes are available: 6 node(s) didn't match pod anti-affinity rules."), event["message"]


def test_a_pod_kept_apart_is_retried_when_the_pod_in_its_way_changes_its_labels(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    """An update of a placed pod moves the pods it blocked, as kube's AssignedPodUpdate event does."""
    cluster.create(node("only", labels={"kubernetes.io/hostname": "only"}))
    blocker = pod("blocker", nodeName="only")
    blocker["metadata"]["labels"] = {"app": "db"}
    cluster.create(blocker)
    apart = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "db"}}}]}}
    waiting = pod("waiting", affinity=apart)
    cluster.create(waiting)
    start_scheduler()
    cluster.wait_events("waiting", "FailedScheduling")
    cluster.v1.patch_namespaced_pod("blocker", "default", {"metadata": {"labels": {"app": "old-db"}}},
                                    _preload_content=False).read()
    eventually(lambda: cluster.node_of("waiting") == "only", what="the waiting pod bound")
