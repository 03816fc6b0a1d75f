"""How many nodes are searched, where the search starts, and how ties are broken."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from componentbase_examples.scheduler.algorithm import (
    NoNodesAvailable,
    SchedulingAlgorithm,
    ScoreError,
    num_feasible_nodes_to_find,
)
from componentbase_examples.scheduler.podinfo import PodInfo

from .builders import Cluster, load_config, node, pod, taint

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("percentage", "nodes", "expected"), [
    (0, 5000, 500),  # adaptive: 50 - 5000/125 = 10%
    (50, 5000, 2500),
    (0, 99, 99),  # below 100 nodes: all of them
    (0, 100, 100),  # 49% of 100 is 49, raised to the minimum 100
    (0, 1000, 420),  # 50 - 8 = 42%
    (0, 6000, 300),  # 50 - 48 = 2% -> 5% minimum
    (0, 20000, 1000),
    (1, 5000, 100),  # 50 nodes, raised to the minimum 100
    (100, 5000, 5000),
])
def test_num_feasible_nodes_to_find(percentage: int, nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


def test_search_stops_at_enough_feasible_nodes_and_rotates_the_start() -> None:
    nodes = [node(f"n{i:04}") for i in range(1000)]
    cluster = Cluster(nodes)  # adaptive: 42% of 1000 = 420
    info = PodInfo(pod("p"))
    algo = cluster.algorithm
    feasible, _ = algo.find_nodes_that_fit(cluster.framework, {}, info, cluster.snapshot.nodes)
    assert len(feasible) == 420 and feasible[0].name == "n0000" and algo.next_start_node_index == 420
    feasible, _ = algo.find_nodes_that_fit(cluster.framework, {}, info, cluster.snapshot.nodes)
    assert feasible[0].name == "n0420" and algo.next_start_node_index == 840
    feasible, _ = algo.find_nodes_that_fit(cluster.framework, {}, info, cluster.snapshot.nodes)
    assert feasible[0].name == "n0840" and feasible[-1].name == "n0259"  # wraps around
    assert algo.next_start_node_index == 260


def test_rejected_nodes_count_as_processed_exactly_where_a_node_by_node_search_stops() -> None:
    # every third node is tainted: to find 420 feasible nodes, a sequential search reads 629 nodes
    nodes = [node(f"n{i:04}", taints=[taint("t")] if i % 3 == 2 else None) for i in range(1000)]
    cluster = Cluster(nodes)
    feasible, diagnosis = cluster.algorithm.find_nodes_that_fit(cluster.framework, {}, PodInfo(pod("p")),
                                                                cluster.snapshot.nodes)
    assert len(feasible) == 420 and feasible[-1].name == "n0628"
    assert len(diagnosis.node_to_status) == 209 and cluster.algorithm.next_start_node_index == 629


def test_profile_percentage_overrides_the_global_one() -> None:
    cfg = load_config("percentageOfNodesToScore: 10\nprofiles:\n- schedulerName: a\n  percentageOfNodesToScore: 50\n"
                      "- schedulerName: b\n")
    cluster = Cluster([node(f"n{i}") for i in range(1000)], cfg)
    info = PodInfo(pod("p"))
    for name, expected in (("a", 500), ("b", 100)):
        found, _ = cluster.algorithm.find_nodes_that_fit(cluster.frameworks[name], {}, info, cluster.snapshot.nodes)
        assert len(found) == expected


def test_without_score_plugins_the_first_feasible_node_is_enough() -> None:
    cfg = load_config("profiles:\n- plugins:\n    score:\n      disabled: [{name: '*'}]\n")
    cluster = Cluster([node(f"n{i}") for i in range(300)], cfg)
    assert [cluster.schedule(pod(f"p{i}"), assume=False) for i in range(3)] == ["n0", "n1", "n2"]


@pytest.mark.parametrize("plugin", ["TaintToleration", "PodTopologySpread"])
def test_a_score_plugin_whose_pre_score_is_disabled_fails_the_cycle_with_kubes_message(plugin: str) -> None:
    cfg = load_config(f"profiles:\n- plugins:\n    preScore:\n      disabled: [{{name: {plugin}}}]\n")
    cluster = Cluster([node("a"), node("b")], cfg)
    with pytest.raises(ScoreError) as failed:
        cluster.schedule(pod("p"), assume=False)
    assert str(failed.value).startswith(f'running Score plugins: plugin "{plugin}" failed with: reading "')
    assert str(failed.value).endswith('" from cycleState: not found')


def test_ties_are_broken_uniformly_at_random() -> None:
    algo = SchedulingAlgorithm(Cluster([]).snapshot, rng=random.Random(7))
    totals = [5, 9, 3, 9, 9, 1, 9]
    picks = Counter(algo.select(totals) for _ in range(8000))
    assert set(picks) == {1, 3, 4, 6}
    assert all(1800 < n < 2200 for n in picks.values()), picks  # 2000 each; > 8 standard deviations apart
    assert algo.select([1, 2, 3]) == 2


def test_identical_nodes_all_get_pods() -> None:
    cluster = Cluster([node(f"n{i}", cpu="100") for i in range(5)], seed=3)
    chosen = Counter(cluster.schedule(pod(f"p{i}", cpu="1", memory="1Mi"), assume=False) for i in range(500))
    assert set(chosen) == {f"n{i}" for i in range(5)} and min(chosen.values()) > 60


def test_spreading_follows_least_allocated() -> None:
    cluster = Cluster([node(f"n{i}") for i in range(4)])
    placed = Counter(cluster.schedule(pod(f"p{i}", cpu="500m", memory="1Gi")) for i in range(8))
    assert placed == {"n0": 2, "n1": 2, "n2": 2, "n3": 2}


def test_no_nodes() -> None:
    with pytest.raises(NoNodesAvailable, match="no nodes available to schedule pods"):
        Cluster([]).schedule(pod("p"))
