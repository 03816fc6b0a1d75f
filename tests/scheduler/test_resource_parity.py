"""NodeResourcesFit and the resource scorers against kube-scheduler's own cases (fit_test.go's
TestEnoughRequests, resource_allocation's Score without PreScore): ``kubernetes.io/`` resources, pod-level
resources, unresolvable requests, and Score with PreScore disabled."""

from __future__ import annotations

import json
from typing import Any

import pytest

from componentbase_examples.scheduler import manifests
from componentbase_examples.scheduler.framework import Code
from componentbase_examples.scheduler.podinfo import PodInfo, is_extended_resource_name, is_scalar_resource_name

from .builders import Cluster, load_config, node, pod

pytestmark = pytest.mark.unit


def with_requests(p: dict[str, Any], **requests: str) -> dict[str, Any]:
    p["spec"]["containers"][0]["resources"]["requests"].update(requests)
    return p


def pod_level(p: dict[str, Any], **requests: str) -> dict[str, Any]:
    p["spec"]["resources"] = {"requests": requests}
    return p


def filter_status(nodes: list[dict[str, Any]], p: dict[str, Any], cfg: str = "") -> tuple[Code, str] | None:
    """NodeResourcesFit's verdict on the single node: ``None`` when it fits."""
    cluster = Cluster(nodes, load_config(cfg) if cfg else None)
    fit = cluster.framework.plugins["NodeResourcesFit"]
    rejected: dict[str, Any] = {}
    fit.scheduler_filter(pod=PodInfo(p), nodes=cluster.snapshot.nodes, rejected=rejected)
    if not rejected:
        return None
    (status,) = rejected.values()
    return status.code, status.message()


@pytest.mark.parametrize(("name", "extended", "scalar"), [
    ("example.com/aaa", True, True),
    ("kubernetes.io/something", False, True),
    ("subdomain.kubernetes.io/something", False, True),
    ("hugepages-2Mi", False, True),
    ("attachable-volumes-aws-ebs", False, True),
    ("cpu", False, False),
    ("requests.example.com/aaa", False, False),
    ("example.com/-bad-", False, False),  # not a qualified name
])
def test_resource_name_classes_are_kubes(name: str, extended: bool, scalar: bool) -> None:
    assert is_extended_resource_name(name) is extended
    assert is_scalar_resource_name(name) is scalar


@pytest.mark.parametrize("resource", ["kubernetes.io/something", "subdomain.kubernetes.io/something"])
def test_kubernetes_io_resources_are_enforced(resource: str) -> None:
    # "kubernetes.io resource capacity enforced": the node has none of it
    p = with_requests(pod("p", cpu="1m", memory="1"), **{resource: "10"})
    assert filter_status([node("n")], p) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"Insufficient {resource}")
    assert filter_status([node("n", **{resource: "10"})], p) is None
    full = Cluster([node("n", **{resource: "10"})])
    full.snapshot.add_pod({**p, "metadata": {"name": "x", "namespace": "default"},
                           "spec": {**p["spec"], "nodeName": "n"}})
    assert full.fit_message(p) == f"0/1 nodes are available: 1 Insufficient {resource}."


def test_ignored_resource_groups_skip_only_extended_resources() -> None:
    # "skip checking ignored extended resource via resource groups"
    p = with_requests(pod("p", cpu="1m", memory="1"), **{"example.com/bbb": "1", "kubernetes.io/something": "1"})
    cfg = ("profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
           "      ignoredResourceGroups: [example.com]\n")
    assert filter_status([node("n")], p, cfg) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                  "Insufficient kubernetes.io/something")
    cfg = ("profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
           "      ignoredResources: [example.com/bbb, kubernetes.io/something]\n")
    assert filter_status([node("n")], p, cfg) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                  "Insufficient kubernetes.io/something")


def test_a_request_over_allocatable_is_unresolvable_one_over_free_room_is_not() -> None:
    busy = Cluster([node("n", cpu="10m", memory="20")])
    busy.snapshot.add_pod({**pod("x", cpu="10m", memory="20"), "spec": {**pod("x", cpu="10m", memory="20")["spec"],
                                                                        "nodeName": "n"}})
    fit = busy.framework.plugins["NodeResourcesFit"]
    rejected: dict[str, Any] = {}
    fit.scheduler_filter(pod=PodInfo(pod("p", cpu="1m", memory="1")), nodes=busy.snapshot.nodes, rejected=rejected)
    assert (rejected["n"].code, rejected["n"].message()) == (Code.UNSCHEDULABLE,
                                                              "Insufficient cpu, Insufficient memory")
    assert filter_status([node("n", cpu="10m")], pod("p", cpu="11m", memory="1")) == \
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "Insufficient cpu")


def test_pod_level_requests_replace_the_containers_sum() -> None:
    # "pod-level cpu resource not fit": containers ask 1m, the pod 7m; the node has 10m with 5m used
    n = node("n", cpu="10m", memory="20")
    used = {**pod("x", cpu="5m", memory="5"), "spec": {**pod("x", cpu="5m", memory="5")["spec"], "nodeName": "n"}}
    cluster = Cluster([n])
    cluster.snapshot.add_pod(used)
    assert cluster.fit_message(pod_level(pod("p", cpu="1m", memory="1"), cpu="7m", memory="2")) == \
        "0/1 nodes are available: 1 Insufficient cpu."
    assert cluster.schedule(pod_level(pod("q", cpu="1m", memory="1"), cpu="1m", memory="2")) == "n"
    info = PodInfo(pod_level(with_requests(pod("h", cpu="1m", memory="1"), **{"hugepages-2Mi": "3",
                                                                               "example.com/aaa": "2"}),
                             cpu="3m", memory="2", **{"hugepages-2Mi": "5", "example.com/aaa": "9"}))
    assert (info.cpu, info.memory, info.scalar) == (3, 2, {"hugepages-2Mi": 5, "example.com/aaa": 2})


def test_pod_level_requests_count_on_the_node_and_in_scores() -> None:
    cluster = Cluster([node("a", cpu="4", memory="8Gi"), node("b", cpu="4", memory="8Gi")])
    placed = pod_level(pod("x", cpu=None, memory=None), cpu="3", memory="2Gi")
    placed["spec"]["nodeName"] = "a"
    cluster.snapshot.add_pod(placed)
    a = cluster.snapshot.get("a")
    assert a is not None and (a.req_cpu, a.nz_cpu, a.nz_memory) == (3000, 3000, 2 * 1024**3)
    assert cluster.schedule(pod("p", cpu="500m", memory="1Gi")) == "b"


def _score_without_pre_score(cfg: str, plugin: str, p: dict[str, Any], nodes: list[dict[str, Any]]) -> list[int]:
    cluster = Cluster(nodes, load_config(cfg))
    (sp,) = [s for s in cluster.framework.score if s.name == plugin]
    assert plugin not in [name for name, _ in cluster.framework.pre_score]
    scores = sp.score(state={}, pod=PodInfo(p), nodes=cluster.snapshot.nodes)
    if sp.normalize:
        sp.normalize(state={}, pod=PodInfo(p), nodes=cluster.snapshot.nodes, scores=scores)
    return scores


FIT_ARGS = "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"


@pytest.mark.parametrize(("plugin", "args", "expected"), [
    # MostAllocated: cpu 1000/4000 = 25, memory 2Gi/8Gi = 25
    ("NodeResourcesFit", FIT_ARGS + "        type: MostAllocated\n", [25, 12]),
    ("NodeResourcesFit", FIT_ARGS + "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
     "          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]\n", [25, 12]),
    ("NodeResourcesFit", "", [75, 87]),  # LeastAllocated
    # cpu 1/4, memory 2/8 on a; 1/8, 2/16 on b: balanced before and after, no change: 75 (kubernetes#135573)
    ("NodeResourcesBalancedAllocation", "", [75, 75]),
])
def test_score_with_pre_score_disabled_computes_from_the_pod(plugin: str, args: str, expected: list[int]) -> None:
    cfg = f"profiles:\n- plugins:\n    preScore:\n      disabled: [{{name: {plugin}}}]\n{args}"
    nodes = [node("a", cpu="4", memory="8Gi"), node("b", cpu="8", memory="16Gi")]
    assert _score_without_pre_score(cfg, plugin, pod("p", cpu="1", memory="2Gi"), nodes) == expected


def test_balanced_allocation_without_pre_score_gives_a_best_effort_pod_zero() -> None:
    cfg = "profiles:\n- plugins:\n    preScore:\n      disabled: [{name: NodeResourcesBalancedAllocation}]\n"
    nodes = [node("a"), node("b")]
    assert _score_without_pre_score(cfg, "NodeResourcesBalancedAllocation", pod("p", cpu=None, memory=None),
                                    nodes) == [0, 0]


def test_node_affinity_score_without_pre_score_reads_the_pods_preferred_terms() -> None:
    cfg = "profiles:\n- plugins:\n    preScore:\n      disabled: [{name: NodeAffinity}]\n"
    preferred = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 2, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}}]}}
    nodes = [node("a", labels={"zone": "z1"}), node("b", labels={"zone": "z2"})]
    assert _score_without_pre_score(cfg, "NodeAffinity", pod("p", affinity=preferred), nodes) == [100, 0]


def test_dry_run_manifests_default_pod_level_requests_as_the_api_server_does(tmp_path: Any) -> None:
    only_limits = pod("a", cpu=None, memory=None)
    only_limits["spec"]["resources"] = {"limits": {"cpu": "2", "memory": "1Gi", "example.com/x": "1"}}
    with_container_cpu = pod("b", cpu="300m", memory=None)
    with_container_cpu["spec"]["resources"] = {"limits": {"cpu": "2", "memory": "1Gi"}}
    bad = pod("c")
    bad["spec"]["resources"] = {"requests": {"cpu": "lots"}}
    path = tmp_path / "pods.yaml"
    path.write_text("\n---\n".join(json.dumps(d) for d in (only_limits, with_container_cpu, bad)))
    loaded = manifests.load(str(path))
    a, b = (PodInfo(p) for p in loaded.pods[:2])
    assert (a.cpu, a.memory, a.scalar) == (2000, 1024**3, {})  # extended resources are not pod-level
    assert (b.cpu, b.memory) == (300, 1024**3)  # a container requests cpu: the containers' sum stands
    assert any("spec.resources.requests.cpu" in e for e in loaded.errors), loaded.errors
