"""The scheduler's hot paths, rewritten for speed, decide exactly as the plain versions they replaced."""

from __future__ import annotations

import random
from typing import Any

import pytest

from componentbase_examples.scheduler.algorithm import SchedulingAlgorithm
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import Snapshot

from .builders import Cluster, node, pod

pytestmark = pytest.mark.unit


def reservoir(totals: list[int], rng: random.Random) -> int:
    """The one-pass reservoir (kube's selectHost) the fast ``select`` must equal, choice and draws alike."""
    best, chosen, ties = totals[0], 0, 1
    for i, total in enumerate(totals[1:], 1):
        if total > best:
            best, chosen, ties = total, i, 1
        elif total == best:
            ties += 1
            if rng.random() * ties < 1.0:
                chosen = i
    return chosen


@pytest.mark.parametrize("seed", range(40))
def test_select_equals_the_reservoir_and_draws_the_same_numbers(seed: int) -> None:
    gen = random.Random(seed)
    totals = [gen.choice([-20, -3, 0, 1, 5, 7, 7, 9, 300]) for _ in range(gen.randrange(1, 60))]
    fast = SchedulingAlgorithm(Snapshot(), rng=random.Random(seed))
    slow = random.Random(seed)
    assert fast.select(totals) == reservoir(totals, slow)
    assert fast.rng.random() == slow.random()  # the same number of draws were made


def test_select_of_no_totals_and_one_total() -> None:
    alg = SchedulingAlgorithm(Snapshot(), rng=random.Random(1))
    assert alg.select([]) == 0
    assert alg.select([3]) == 0


def test_the_round_robin_start_wraps_without_losing_or_repeating_nodes() -> None:
    # 7 nodes, each pod fits one of them: the search starts where the last one stopped, wrapping around
    names = [f"n{i}" for i in range(7)]
    cluster = Cluster([node(n, cpu="1", memory="1Gi") for n in names])
    placed = [cluster.schedule(pod(f"p{i}", cpu="1", memory="512Mi")) for i in range(7)]
    assert sorted(placed) == names


def resource_scores(cluster: Cluster, p: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """NodeResourcesFit's and NodeResourcesBalancedAllocation's raw scores of ``p`` per node."""
    info = PodInfo(p)
    nodes = cluster.snapshot.nodes
    by_plugin = {s.name: s.score(state={}, pod=info, nodes=nodes) for s in cluster.framework.score
                 if s.name in ("NodeResourcesFit", "NodeResourcesBalancedAllocation")}
    fit, balanced = by_plugin["NodeResourcesFit"], by_plugin["NodeResourcesBalancedAllocation"]
    return {n.name: (f, b) for n, f, b in zip(nodes, fit, balanced, strict=True)}


def test_a_remembered_score_is_dropped_when_the_node_changes() -> None:
    cluster = Cluster([node("a", cpu="4", memory="8Gi"), node("b", cpu="4", memory="8Gi")])
    shape = pod("web", cpu="1", memory="1Gi")
    # least: cpu (4000-1000)*100/4000 = 75, memory (8Gi-1Gi)*100/8Gi = 87 -> 81; balanced (kubernetes#135573):
    # balance 100 before, 1 - (0.25 - 0.125)/2 -> 93 after: 50 + (50 + 93 - 100) // 2 = 71
    before = resource_scores(cluster, shape)
    assert before["a"] == before["b"] == (81, 71)
    cluster.snapshot.assume_pod(PodInfo(pod("db", cpu="3", memory="1Gi")), "a")
    # a: cpu 0, memory 6Gi*100/8Gi = 75 -> 37; balanced 1 - (0.75 - 0.125)/2 -> 68 before, 1 - (1 - 0.25)/2 -> 62
    # after: 50 + (50 + 62 - 68) // 2 = 72
    after = resource_scores(cluster, shape)
    assert after == {"a": (37, 72), "b": (81, 71)}  # a is rescored, b's remembered scores stand
    cluster.snapshot.forget_pod(PodInfo(pod("db", cpu="3", memory="1Gi")).key)
    assert resource_scores(cluster, shape) == before


def test_two_profiles_remember_their_own_scores() -> None:
    text = """profiles:
- schedulerName: even
- schedulerName: cpu-heavy
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: LeastAllocated
        resources: [{name: cpu, weight: 3}, {name: memory, weight: 1}]
"""
    from .builders import load_config

    cluster = Cluster([node("a", cpu="4", memory="8Gi")], cfg=load_config(text))
    info = PodInfo(pod("web", cpu="2", memory="2Gi"))
    got = {name: [s.score(state={}, pod=info, nodes=cluster.snapshot.nodes) for s in fw.score
                  if s.name == "NodeResourcesFit"] for name, fw in cluster.frameworks.items()}
    # cpu (4000-2000)*100/4000 = 50, memory (8192-2048)*100/8192 = 75: (50+75)/2 and (3*50+75)/4
    assert got == {"even": [[62]], "cpu-heavy": [[56]]}


def test_fit_filter_reasons_survive_the_fast_path() -> None:
    cluster = Cluster([node("small", cpu="1", memory="1Gi", pods="1"), node("big", cpu="8", memory="16Gi")])
    cluster.schedule(pod("first", cpu="100m", memory="100Mi", nodeName="small"))
    msg = cluster.fit_message(pod("huge", cpu="9", memory="32Gi"))
    assert msg == "0/2 nodes are available: 1 Too many pods, 2 Insufficient cpu, 2 Insufficient memory."


def test_the_fit_filter_follows_assumed_and_forgotten_pods() -> None:
    cluster = Cluster([node("only", cpu="2", memory="4Gi", pods="2")])
    first = PodInfo(pod("first", cpu="1500m", memory="1Gi"))
    cluster.snapshot.assume_pod(first, "only")
    assert cluster.fit_message(pod("big", cpu="1", memory="1Gi")) == "0/1 nodes are available: 1 Insufficient cpu."
    cluster.snapshot.assume_pod(PodInfo(pod("second", cpu="100m", memory="1Gi")), "only")
    assert cluster.fit_message(pod("tiny", cpu="10m", memory="1Mi")) == "0/1 nodes are available: 1 Too many pods."
    cluster.snapshot.forget_pod(first.key)
    assert cluster.schedule(pod("big", cpu="1", memory="1Gi")) == "only"
    cluster.snapshot.update_node(node("only", cpu="2", memory="1Gi", pods="3"))  # memory shrinks under it
    more = pod("more", cpu="10m", memory="1Mi")
    assert cluster.fit_message(more) == "0/1 nodes are available: 1 Insufficient memory."
