"""The consistent-hash ring behind sharded controllers: balanced, stable as shards come and go, deterministic."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest

from componentbase.controller._ring import HashRing

pytestmark = pytest.mark.unit

KEYS = [f"ns-{i % 7}/object-{i}" for i in range(1000)]


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
def test_1000_keys_spread_within_30_percent_of_an_even_share(n: int) -> None:
    ring = HashRing([f"replica-{i}" for i in range(n)])
    counts = Counter(ring.assignment(KEYS).values())
    assert set(counts) == ring.shards  # every shard gets keys
    even = len(KEYS) / n
    assert all(0.7 * even <= c <= 1.3 * even for c in counts.values()), counts


@pytest.mark.parametrize("n", [2, 3, 5])
def test_adding_a_shard_moves_about_1_over_n_and_only_onto_the_new_shard(n: int) -> None:
    before = HashRing([f"replica-{i}" for i in range(n)])
    after = HashRing([*before.shards, "newcomer"])
    moved = [k for k in KEYS if before.shard_for(k) != after.shard_for(k)]
    assert all(after.shard_for(k) == "newcomer" for k in moved)
    share = len(moved) / len(KEYS)
    assert 0.6 / (n + 1) <= share <= 1.4 / (n + 1), share


def test_removing_a_shard_moves_only_its_keys() -> None:
    before = HashRing(["a", "b", "c"])
    after = HashRing(["a", "c"])
    for key in KEYS:
        if before.shard_for(key) != "b":
            assert after.shard_for(key) == before.shard_for(key)
        else:
            assert after.shard_for(key) in ("a", "c")


def test_the_assignment_is_the_same_in_another_process_and_ignores_the_order_of_shards() -> None:
    ring = HashRing(["x", "y", "z"])
    assert HashRing(["z", "x", "y"]).assignment(KEYS) == ring.assignment(KEYS)
    code = ("from componentbase.controller._ring import HashRing; "
            "print(','.join(HashRing(['x','y','z']).shard_for(f'ns/o{i}') for i in range(50)))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert other == ",".join(ring.shard_for(f"ns/o{i}") for i in range(50))


def test_an_empty_ring_owns_nothing_and_virtual_nodes_must_be_positive() -> None:
    assert HashRing([]).shard_for("ns/a") == ""
    assert not HashRing([])
    with pytest.raises(ValueError, match="virtual_nodes"):
        HashRing(["a"], virtual_nodes=0)
