"""The TTL cache behind delegated authn/authz decisions, on a FakeClock."""

from __future__ import annotations

import pytest

from componentbase.testing import FakeClock
from componentbase.util import TTLCache


@pytest.mark.unit
def test_an_entry_lives_exactly_its_ttl() -> None:
    clock = FakeClock()
    cache: TTLCache[str] = TTLCache(clock=clock)
    cache.put("token", "alice", ttl=10.0)
    clock.step(9.999)
    assert cache.get("token") == "alice"
    clock.step(0.001)
    assert cache.get("token") is None
    assert len(cache) == 0  # an expired entry read is dropped


@pytest.mark.unit
def test_each_entry_has_its_own_ttl_and_a_zero_ttl_is_not_kept() -> None:
    clock = FakeClock()
    cache: TTLCache[bool] = TTLCache(clock=clock)
    cache.put("allowed", True, ttl=10.0)
    cache.put("denied", False, ttl=2.0)
    cache.put("never", True, ttl=0.0)
    clock.step(5.0)
    assert (cache.get("allowed"), cache.get("denied"), cache.get("never")) == (True, None, None)


@pytest.mark.unit
def test_when_full_expired_entries_go_first_then_the_oldest() -> None:
    clock = FakeClock()
    cache: TTLCache[int] = TTLCache(max_entries=3, clock=clock)
    cache.put("short", 1, ttl=1.0)
    cache.put("a", 2, ttl=60.0)
    cache.put("b", 3, ttl=60.0)
    clock.step(2.0)
    cache.put("c", 4, ttl=60.0)  # the expired one makes room
    assert [cache.get(k) for k in ("a", "b", "c")] == [2, 3, 4]
    cache.put("d", 5, ttl=60.0)  # nothing expired: the oldest goes
    assert [cache.get(k) for k in ("a", "b", "c", "d")] == [None, 3, 4, 5]
