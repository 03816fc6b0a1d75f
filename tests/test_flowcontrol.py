"""The token bucket behind the client-side rate limit and the work queue's overall retry limit."""

from __future__ import annotations

import pytest

from componentbase.testing import FakeClock
from componentbase.util import TokenBucket

pytestmark = pytest.mark.unit


def test_a_burst_goes_at_once_then_calls_are_spaced_by_one_over_qps() -> None:
    clock = FakeClock()
    bucket = TokenBucket(5, 2, clock=clock)
    waits = [bucket.accept() for _ in range(5)]
    assert waits[:2] == [0.0, 0.0]
    assert waits[2:] == pytest.approx([0.2, 0.2, 0.2])
    assert clock.waits == pytest.approx([0.2, 0.2, 0.2])


def test_idle_time_refills_the_bucket_up_to_burst_only() -> None:
    clock = FakeClock()
    bucket = TokenBucket(10, 3, clock=clock)
    for _ in range(3):
        bucket.accept()
    clock.step(60)  # a long pause saves at most ``burst`` tokens
    assert [bucket.reserve() for _ in range(4)] == pytest.approx([0.0, 0.0, 0.0, 0.1])


def test_reservations_queue_up_behind_each_other() -> None:
    clock = FakeClock()
    bucket = TokenBucket(2, 1, clock=clock)
    assert [bucket.reserve() for _ in range(4)] == pytest.approx([0.0, 0.5, 1.0, 1.5])


@pytest.mark.parametrize(("qps", "burst"), [(0, 1), (-1, 1), (1, 0)])
def test_a_bucket_needs_a_rate_and_room_for_one(qps: float, burst: int) -> None:
    with pytest.raises(ValueError, match="need qps > 0 and burst >= 1"):
        TokenBucket(qps, burst)


def test_a_token_further_off_than_the_caller_waits_is_not_taken() -> None:
    clock = FakeClock()
    bucket = TokenBucket(1, 1, clock=clock)
    assert bucket.accept(0.5) == 0.0
    assert bucket.accept(0.5) is None  # a second away: refused, nothing slept
    assert clock.waits == []
    assert bucket.accept(1.0) == pytest.approx(1.0)  # the refused call took no token
