"""The packed weighted sum, the byte-table normalization and the shared resource memos decide exactly as the
element-by-element arithmetic they replaced."""

from __future__ import annotations

import math
import random

import pytest

from componentbase_examples.scheduler.algorithm import ScoreError, prioritize
from componentbase_examples.scheduler.framework import ScorePlugin
from componentbase_examples.scheduler.plugins.helpers import default_normalize
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.scoresum import WeightedSum, as_bytes, select_host, valid_scores

from .builders import Cluster, node, pod
from .test_hot_paths import reservoir

pytestmark = pytest.mark.unit


def plain_sum(lists: list[tuple[list[int], int]], count: int) -> list[int]:
    return [sum(scores[i] * w for scores, w in lists) for i in range(count)]


@pytest.mark.parametrize("seed", range(20))
def test_the_packed_sum_equals_the_plain_sum(seed: int) -> None:
    gen = random.Random(seed)
    count = gen.randrange(0, 700)
    lists = [([gen.randrange(0, 101) for _ in range(count)], gen.choice([1, 2, 3, 10]))
             for _ in range(gen.randrange(1, 8))]
    total = WeightedSum(count, 100 * sum(w for _, w in lists))
    for scores, w in lists:
        total.add(scores, as_bytes(scores), w)
    assert total.totals() == plain_sum(lists, count)


def test_weights_too_wide_for_a_short_lane_take_a_wider_one() -> None:
    # 100 * 70,000 does not fit 16 bits: the lanes are 32 bits wide, no total wraps around
    scores = [100, 0, 37]
    total = WeightedSum(3, 100 * 70_000)
    total.add(scores, as_bytes(scores), 70_000)
    assert total.lane is not None and total.lane[0] == 4
    assert total.totals() == [7_000_000, 0, 2_590_000]


def test_scores_that_are_not_bytes_are_added_one_by_one() -> None:
    floats, ints = [1.5, 0.0, 100.0], [1, 2, 3]
    total = WeightedSum(3, 100 * 3)
    total.add(ints, as_bytes(ints), 1)
    total.add(floats, as_bytes(floats), 2)  # type: ignore[arg-type]
    assert total.totals() == [4.0, 2.0, 203.0]


@pytest.mark.parametrize(("scores", "valid"), [([], True), ([0, 100, 50], True), ([101], False), ([-1, 5], False),
                                               ([300], False), ([0.5, 99.5], True), ([100.5], False)])
def test_the_score_range_check(scores: list[int], valid: bool) -> None:
    assert valid_scores(scores, as_bytes(scores)) is valid


def arithmetic_normalize(scores: list[int], reverse: bool) -> list[int]:
    highest = max(scores, default=0)
    if highest == 0:
        return [100] * len(scores) if reverse else list(scores)
    return [100 - 100 * s // highest if reverse else 100 * s // highest for s in scores]


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("reverse", [False, True])
def test_the_byte_table_normalization_equals_the_arithmetic(seed: int, reverse: bool) -> None:
    gen = random.Random(seed)
    top = gen.choice([0, 1, 2, 7, 100, 255, 256, 5000])
    scores = [gen.randrange(0, top + 1) for _ in range(gen.randrange(0, 300))]
    got = list(scores)
    default_normalize(got, reverse)
    assert got == arithmetic_normalize(scores, reverse)


def test_a_negative_raw_score_is_scaled_as_before() -> None:
    got = [-3, 0, 6]
    default_normalize(got, reverse=True)
    assert got == [100 - 100 * -3 // 6, 100, 0]


def test_a_plugin_scoring_out_of_range_fails_the_cycle() -> None:
    cluster = Cluster([node("a"), node("b")])
    fw = cluster.framework
    fw.score = [ScorePlugin("Broken", lambda **_: [50, 101], None, 1)]
    with pytest.raises(ScoreError, match="'Broken' returns an invalid score"):
        prioritize(fw, {}, PodInfo(pod("p")), cluster.snapshot.nodes)
    fw.score = [ScorePlugin("Short", lambda **_: [50], None, 1)]
    with pytest.raises(ScoreError, match="'Short' returns 1 scores for 2 nodes"):
        prioritize(fw, {}, PodInfo(pod("p")), cluster.snapshot.nodes)


def test_nodes_in_one_resource_state_share_their_memo_until_one_changes() -> None:
    cluster = Cluster([node("a", cpu="4", memory="8Gi"), node("b", cpu="4", memory="8Gi"),
                       node("c", cpu="8", memory="8Gi")])
    a, b, c = cluster.snapshot.nodes
    assert a.memo is b.memo and a.memo is not c.memo
    web = pod("web", cpu="500m", memory="1Gi")
    cluster.snapshot.assume_pod(PodInfo(web), "a")
    assert a.memo is not b.memo  # a's state is new: it no longer reads b's scores
    cluster.snapshot.assume_pod(PodInfo(pod("web2", cpu="500m", memory="1Gi")), "b")
    assert a.memo is b.memo  # equal again


def test_equal_nodes_score_alike_after_the_other_is_remembered() -> None:
    cluster = Cluster([node("a", cpu="4", memory="8Gi"), node("b", cpu="4", memory="8Gi")])
    shape = PodInfo(pod("web", cpu="1", memory="2Gi"))
    a, b = cluster.snapshot.nodes
    fit = next(s for s in cluster.framework.score if s.name == "NodeResourcesFit")
    assert fit.score(state={}, pod=shape, nodes=[a]) == [75]
    assert b.memo  # b shares a's state, and so what a's scoring remembered
    cluster.snapshot.assume_pod(PodInfo(pod("db", cpu="3", memory="2Gi")), "b")
    # b: cpu (4000-4000)*100/4000 = 0, memory (8Gi-4Gi)*100/8Gi = 50 -> 25
    assert fit.score(state={}, pod=shape, nodes=[a, b]) == [75, 25]


def test_a_draw_below_the_threshold_is_exactly_a_draw_whose_product_is_below_one() -> None:
    from componentbase_examples.scheduler.scoresum import _thresholds

    thresholds = _thresholds(5001)
    for j in [*range(2, 300), *range(300, 5001, 97)]:
        t = thresholds[j - 2]
        assert t * j >= 1.0 and math.nextafter(t, 0.0) * j < 1.0, j


@pytest.mark.parametrize("seed", range(10))
def test_select_among_hundreds_of_equal_nodes_equals_the_reservoir(seed: int) -> None:
    gen = random.Random(seed)
    totals = [gen.choice([298, 300, 300, 300]) for _ in range(500)]
    fast, slow = random.Random(seed), random.Random(seed)
    assert select_host(totals, fast.random) == reservoir(totals, slow)
    assert fast.random() == slow.random()
