"""Score plugins' numbers (kube's formulas), normalization, and the profile's weights."""

from __future__ import annotations

from typing import Any

import pytest

from componentbase_examples.scheduler.algorithm import prioritize
from componentbase_examples.scheduler.plugins.helpers import default_normalize
from componentbase_examples.scheduler.plugins.noderesourcesfit import broken_linear
from componentbase_examples.scheduler.podinfo import PodInfo

from .builders import Cluster, load_config, node, pod, taint

pytestmark = pytest.mark.unit


def scores(cluster: Cluster, p: dict[str, Any], plugin: str) -> dict[str, int]:
    """One plugin's normalized scores for every node, through its PreScore, Score and NormalizeScore."""
    fw = cluster.framework
    info = PodInfo(p)
    nodes = cluster.snapshot.nodes
    state: dict[str, Any] = {}
    for name, pre in fw.pre_score:
        if name == plugin:
            pre(state=state, pod=info, nodes=nodes)
    (sp,) = [s for s in fw.score if s.name == plugin]
    out = sp.score(state=state, pod=info, nodes=nodes)
    if sp.normalize:
        sp.normalize(state=state, pod=info, nodes=nodes, scores=out)
    return {n.name: s for n, s in zip(nodes, out, strict=True)}


def test_least_allocated_uses_non_zero_requests() -> None:
    cluster = Cluster([node("idle", cpu="4", memory="8Gi"), node("busy", cpu="4", memory="8Gi")])
    cluster.snapshot.add_pod(dict(pod("x", cpu="3", memory="2Gi"), spec={**pod("x", cpu="3", memory="2Gi")["spec"],
                                                                          "nodeName": "busy"}))
    # idle: cpu (4000-100)*100/4000 = 97, memory (8192-200)*100/8192 = 97 -> 97
    # busy: cpu (4000-3100)*100/4000 = 22, memory (8192-2248)*100/8192 = 72 -> (22+72)/2 = 47
    assert scores(cluster, pod("p", cpu=None, memory=None), "NodeResourcesFit") == {"idle": 97, "busy": 47}


def test_most_allocated_and_resource_weights() -> None:
    cfg = load_config("profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
                      "        type: MostAllocated\n"
                      "        resources: [{name: cpu, weight: 3}, {name: memory, weight: 1}]\n")
    cluster = Cluster([node("a", cpu="4", memory="4Gi")], cfg)
    # cpu 1000/4000 -> 25, memory 1024/4096 -> 25... with 2Gi: 50; (25*3 + 50*1) / 4 = 31
    assert scores(cluster, pod("p", cpu="1", memory="2Gi"), "NodeResourcesFit") == {"a": 31}


def test_requested_to_capacity_ratio_shape() -> None:
    f = broken_linear([(0, 0), (100, 100)])
    assert [f(0), f(50), f(100), f(120)] == [0, 50, 100, 100]
    down = broken_linear([(0, 100), (100, 0)])
    assert [down(0), down(33), down(100)] == [100, 67, 0]  # Go truncates toward zero: 100 + (-33) = 67
    cfg = load_config("profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
                      "        type: RequestedToCapacityRatio\n        resources: [{name: cpu, weight: 1}]\n"
                      "        requestedToCapacityRatio:\n          shape: [{utilization: 0, score: 0}, "
                      "{utilization: 100, score: 10}]\n")
    cluster = Cluster([node("a", cpu="4")], cfg)
    assert scores(cluster, pod("p", cpu="1"), "NodeResourcesFit") == {"a": 25}  # bin packing: fuller is better


def test_balanced_allocation_prefers_the_node_the_pod_balances_and_skips_best_effort_pods() -> None:
    cluster = Cluster([node("cpuheavy", cpu="4", memory="8Gi"), node("even", cpu="4", memory="8Gi")])
    heavy = pod("x", cpu="2", memory="0")
    cluster.snapshot.add_pod(dict(heavy, spec={**heavy["spec"], "nodeName": "cpuheavy"}))
    # the change in balance (kubernetes#135573): cpuheavy cpu .5, memory 0 -> 75 before; .525 / .5 -> 98 after:
    # 50 + (50 + 98 - 75) // 2 = 86; even 0 / 0 -> 100 before; .025 / .5 -> 76 after: 50 + 26 // 2 = 63
    assert scores(cluster, pod("p", cpu="100m", memory="4Gi"), "NodeResourcesBalancedAllocation") == \
        {"cpuheavy": 86, "even": 63}
    fw = cluster.framework
    (pre,) = [fn for name, fn in fw.pre_score if name == "NodeResourcesBalancedAllocation"]
    status = pre(state={}, pod=PodInfo(pod("be", cpu=None, memory=None)), nodes=cluster.snapshot.nodes)
    assert status is not None and status.is_skip()


def test_taint_toleration_scores_fewer_untolerated_prefer_no_schedule_taints_higher() -> None:
    cluster = Cluster([node("none"), node("one", taints=[taint("a", "PreferNoSchedule")]),
                       node("two", taints=[taint("a", "PreferNoSchedule"), taint("b", "PreferNoSchedule")])])
    assert scores(cluster, pod("p"), "TaintToleration") == {"none": 100, "one": 50, "two": 0}
    tolerating = pod("t", tolerations=[{"key": "a", "operator": "Exists", "effect": "PreferNoSchedule"}])
    assert scores(cluster, tolerating, "TaintToleration") == {"none": 100, "one": 100, "two": 0}


def test_node_affinity_preferred_terms_sum_their_weights_normalized() -> None:
    zone_a = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    preferred = [{"weight": 20, "preference": zone_a},
                 {"weight": 60, "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}}]
    p = pod("p", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}})
    cluster = Cluster([node("both", labels={"zone": "a", "ssd": "1"}), node("zone", labels={"zone": "a"}),
                       node("neither")])
    assert scores(cluster, p, "NodeAffinity") == {"both": 100, "zone": 25, "neither": 0}


def test_default_normalize() -> None:
    s = [0, 5, 10]
    default_normalize(s, reverse=False)
    assert s == [0, 50, 100]
    s = [0, 5, 10]
    default_normalize(s, reverse=True)
    assert s == [100, 50, 0]
    s = [0, 0]
    default_normalize(s, reverse=True)
    assert s == [100, 100]


def test_weights_multiply_normalized_scores_and_sum() -> None:
    nodes = [node("tainted", taints=[taint("a", "PreferNoSchedule")]), node("clean")]
    cluster = Cluster(nodes)
    info = PodInfo(pod("p", cpu=None, memory=None))
    totals = prioritize(cluster.framework, {}, info, cluster.snapshot.nodes)
    fit = scores(cluster, pod("p", cpu=None, memory=None), "NodeResourcesFit")
    # TaintToleration weight 3: clean 100*3, tainted 0; BalancedAllocation skips a best-effort pod
    assert totals == [fit["tainted"], 300 + fit["clean"]]
    cfg = load_config("profiles:\n- plugins:\n    score:\n      enabled: [{name: TaintToleration, weight: 10}]\n")
    weighted = Cluster(nodes, cfg)
    assert prioritize(weighted.framework, {}, info, weighted.snapshot.nodes)[1] == 1000 + fit["clean"]


def test_preferred_affinity_outweighs_spreading_as_weights_say() -> None:
    preferred = [{"weight": 1, "preference": {"matchExpressions": [{"key": "fast", "operator": "Exists"}]}}]
    p = pod("p", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}})
    cluster = Cluster([node("fast", labels={"fast": "1"}, cpu="2"), node("big", cpu="64", memory="256Gi")])
    assert all(cluster.schedule(p, assume=False) == "fast" for _ in range(20))
