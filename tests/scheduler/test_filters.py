"""Each filter plugin, through the whole algorithm: which nodes fit, and kube-scheduler's reason when none does."""

from __future__ import annotations

from typing import Any

import pytest

from .builders import Cluster, node, pod, taint

pytestmark = pytest.mark.unit


def affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": op, "values": list(values)}]}


def feasible(nodes: list[dict[str, Any]], p: dict[str, Any]) -> set[str]:
    """Every node the pod may land on (small clusters: every node is searched)."""
    cluster = Cluster(nodes)
    from componentbase_examples.scheduler.podinfo import PodInfo

    found, _ = cluster.algorithm.find_nodes_that_fit(cluster.framework, {}, PodInfo(p), cluster.snapshot.nodes)
    return {n.name for n in found}


def test_node_unschedulable_unless_the_pod_tolerates_the_cordon() -> None:
    nodes = [node("cordoned", unschedulable=True), node("open")]
    assert feasible(nodes, pod("p")) == {"open"}
    tolerating = pod("t", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                        "effect": "NoSchedule"}])
    assert feasible(nodes, tolerating) == {"cordoned", "open"}
    assert Cluster([node("c", unschedulable=True)]).fit_message(pod("p")) == \
        "0/1 nodes are available: 1 node(s) were unschedulable."


def test_node_name() -> None:
    nodes = [node("a"), node("b"), node("c")]
    assert feasible(nodes, pod("p", nodeName="b")) == {"b"}
    assert Cluster(nodes).fit_message(pod("p", nodeName="zz")) == \
        "0/3 nodes are available: 3 node(s) didn't match the requested node name."


@pytest.mark.parametrize(("toleration", "tolerated"), [
    ({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, True),
    ({"key": "k", "value": "v"}, True),  # no operator is Equal, no effect is every effect
    ({"key": "k", "operator": "Equal", "value": "other"}, False),
    ({"key": "k", "operator": "Exists"}, True),
    ({"operator": "Exists"}, True),  # empty key with Exists tolerates everything
    ({"operator": "Exists", "effect": "NoExecute"}, False),  # effect must match
    ({"key": "other", "operator": "Exists"}, False),
])
def test_taint_toleration_operators_and_effects(toleration: dict[str, str], tolerated: bool) -> None:
    nodes = [node("tainted", taints=[taint("k", "NoSchedule", "v")]), node("clean")]
    expected = {"tainted", "clean"} if tolerated else {"clean"}
    assert feasible(nodes, pod("p", tolerations=[toleration])) == expected


def test_taint_effects_no_execute_filters_prefer_no_schedule_does_not() -> None:
    nodes = [node("ne", taints=[taint("a", "NoExecute")]), node("pns", taints=[taint("b", "PreferNoSchedule")])]
    assert feasible(nodes, pod("p")) == {"pns"}
    message = Cluster([node("cp", taints=[taint("node-role.kubernetes.io/control-plane")]),
                       node("gpu", taints=[taint("dedicated", "NoExecute", "gpu")])]).fit_message(pod("p"))
    assert message == ("0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, "
                       "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }.")


@pytest.mark.parametrize(("term", "expected"), [
    (expr("zone", "In", "a", "b"), {"a", "b"}),
    (expr("zone", "NotIn", "a"), {"b", "none"}),  # a missing label is not in the set
    (expr("gpu", "Exists"), {"b"}),
    (expr("gpu", "DoesNotExist"), {"a", "none"}),
    (expr("cores", "Gt", "8"), {"b"}),
    (expr("cores", "Lt", "16"), {"a"}),
    (expr("cores", "Gt", "eight"), set()),  # unparsable requirement: the term matches nothing
    (expr("zone", "In"), set()),
    ({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["none"]}]}, {"none"}),
    ({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["a"]}]}, {"b", "none"}),
    ({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]},
                           {"key": "cores", "operator": "Gt", "values": ["8"]}]}, {"b"}),  # ANDed
    ({}, set()),  # an empty term matches no node
])
def test_node_affinity_operators(term: dict[str, Any], expected: set[str]) -> None:
    nodes = [node("a", labels={"zone": "a", "cores": "8"}), node("b", labels={"zone": "b", "gpu": "1", "cores": "16"}),
             node("none")]
    assert feasible(nodes, pod("p", affinity=affinity(term))) == expected


def test_node_affinity_terms_are_ored_and_combine_with_the_node_selector() -> None:
    nodes = [node("a", labels={"zone": "a", "disk": "ssd"}), node("b", labels={"zone": "b"}),
             node("c", labels={"zone": "c", "disk": "ssd"})]
    ored = affinity(expr("zone", "In", "a"), expr("zone", "In", "b"))
    assert feasible(nodes, pod("p", affinity=ored)) == {"a", "b"}
    assert feasible(nodes, pod("p", affinity=ored, nodeSelector={"disk": "ssd"})) == {"a"}
    assert Cluster(nodes).fit_message(pod("p", nodeSelector={"disk": "hdd"})) == \
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."


def test_node_affinity_by_name_narrows_the_search_and_reports_the_others() -> None:
    nodes = [node("a", cpu="1"), node("b"), node("c")]
    by_name = affinity({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]},
                       {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gone"]}]})
    assert Cluster(nodes).fit_message(pod("p", cpu="2", affinity=by_name)) == \
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    conflict = affinity({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]},
                                         {"key": "metadata.name", "operator": "In", "values": ["b"]}]})
    assert Cluster(nodes).fit_message(pod("p", affinity=conflict)) == \
        "0/3 nodes are available: pod affinity terms conflict."


def test_resources_fit_counts_each_missing_resource() -> None:
    nodes = [node("small", cpu="1", memory="1Gi"), node("full", pods="1"), node("big", cpu="8", memory="16Gi")]
    cluster = Cluster(nodes)
    cluster.snapshot.add_pod(dict(pod("x"), spec={**pod("x")["spec"], "nodeName": "full"}))
    assert cluster.fit_message(pod("p", cpu="10", memory="2Gi")) == \
        "0/3 nodes are available: 1 Insufficient memory, 1 Too many pods, 3 Insufficient cpu."


def test_resources_fit_ephemeral_storage_and_extended_resources() -> None:
    p = pod("p")
    p["spec"]["containers"][0]["resources"]["requests"].update({"example.com/gpu": "1", "ephemeral-storage": "10Gi"})
    nodes = [node("gpu", **{"example.com/gpu": "2", "ephemeral-storage": "100Gi"}),
             node("nogpu", **{"ephemeral-storage": "100Gi"}), node("nodisk", **{"example.com/gpu": "1"})]
    assert feasible(nodes, p) == {"gpu"}
    assert Cluster(nodes[1:]).fit_message(p) == \
        "0/2 nodes are available: 1 Insufficient ephemeral-storage, 1 Insufficient example.com/gpu."


def test_resources_fit_ignored_resources_args() -> None:
    from .builders import load_config

    cfg = load_config("profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                      "      ignoredResources: [example.com/gpu]\n      ignoredResourceGroups: [fpga.example.org]\n")
    p = pod("p")
    p["spec"]["containers"][0]["resources"]["requests"].update({"example.com/gpu": "4", "fpga.example.org/x": "1"})
    assert Cluster([node("n")], cfg).schedule(p) == "n"


def test_resources_fit_init_containers_count_as_kube_counts_them() -> None:
    p = pod("p", cpu="100m", initContainers=[{"name": "migrate", "resources": {"requests": {"cpu": "3"}}}])
    assert Cluster([node("n", cpu="2")]).fit_message(p) == "0/1 nodes are available: 1 Insufficient cpu."
    assert Cluster([node("n", cpu="3")]).schedule(p) == "n"  # 3 for the init container, not 3.1


def test_node_ports_conflicts_by_protocol_and_host_ip() -> None:
    def with_port(name: str, port: int, protocol: str = "TCP", ip: str = "", node_name: str = "") -> dict[str, Any]:
        spec: dict[str, Any] = {"nodeName": node_name} if node_name else {}
        entry = {"containerPort": port, "hostPort": port, "protocol": protocol, **({"hostIP": ip} if ip else {})}
        return pod(name, ports=[entry], **spec)

    def fits(used: dict[str, Any], wanted: dict[str, Any]) -> bool:
        cluster = Cluster([node("n")])
        cluster.snapshot.add_pod(used)
        return bool(feasible_in(cluster, wanted))

    assert not fits(with_port("u", 80, node_name="n"), with_port("w", 80))
    assert fits(with_port("u", 80, node_name="n"), with_port("w", 81))
    assert fits(with_port("u", 53, "UDP", node_name="n"), with_port("w", 53, "TCP"))
    assert fits(with_port("u", 80, ip="10.0.0.1", node_name="n"), with_port("w", 80, ip="10.0.0.2"))
    assert not fits(with_port("u", 80, ip="10.0.0.1", node_name="n"), with_port("w", 80))  # 0.0.0.0 wants all
    assert not fits(with_port("u", 80, node_name="n"), with_port("w", 80, ip="10.0.0.2"))  # all IPs taken
    cluster = Cluster([node("n")])
    cluster.snapshot.add_pod(with_port("u", 80, node_name="n"))
    assert cluster.fit_message(with_port("w", 80)) == \
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."


def feasible_in(cluster: Cluster, p: dict[str, Any]) -> list[str]:
    from componentbase_examples.scheduler.podinfo import PodInfo

    found, _ = cluster.algorithm.find_nodes_that_fit(cluster.framework, {}, PodInfo(p), cluster.snapshot.nodes)
    return [n.name for n in found]


def test_fit_error_aggregates_reasons_sorted_as_strings_like_upstream() -> None:
    nodes = [node(f"cpu{i}", cpu="1") for i in range(3)] + \
        [node(f"cp{i}", taints=[taint("node-role.kubernetes.io/control-plane")]) for i in range(2)]
    assert Cluster(nodes).fit_message(pod("p", cpu="2")) == (
        "0/5 nodes are available: 2 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
        "3 Insufficient cpu.")
    many = [node(f"n{i}", cpu="1") for i in range(10)] + [node("m", memory="1Mi")]
    assert Cluster(many).fit_message(pod("p", cpu="2", memory="1Gi")) == \
        "0/11 nodes are available: 1 Insufficient memory, 10 Insufficient cpu."
