"""The token bucket behind the client-side rate limit and the work queue's overall retry limit."""

from __future__ import annotations

import pytest

from componentbase.util import TokenBucket

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_a_burst_goes_at_once_then_calls_are_spaced_by_one_over_qps() -> None:
    clock = Clock()
    bucket = TokenBucket(5, 2, clock=lambda: clock.now, sleep=clock.sleep)
    waits = [bucket.accept() for _ in range(5)]
    assert waits[:2] == [0.0, 0.0]
    assert waits[2:] == pytest.approx([0.2, 0.2, 0.2])
    assert clock.slept == pytest.approx([0.2, 0.2, 0.2])


def test_idle_time_refills_the_bucket_up_to_burst_only() -> None:
    clock = Clock()
    bucket = TokenBucket(10, 3, clock=lambda: clock.now, sleep=clock.sleep)
    for _ in range(3):
        bucket.accept()
    clock.now += 60  # a long pause saves at most ``burst`` tokens
    assert [bucket.reserve() for _ in range(4)] == pytest.approx([0.0, 0.0, 0.0, 0.1])


def test_reservations_queue_up_behind_each_other() -> None:
    clock = Clock()
    bucket = TokenBucket(2, 1, clock=lambda: clock.now)
    assert [bucket.reserve() for _ in range(4)] == pytest.approx([0.0, 0.5, 1.0, 1.5])


@pytest.mark.parametrize(("qps", "burst"), [(0, 1), (-1, 1), (1, 0)])
def test_a_bucket_needs_a_rate_and_room_for_one(qps: float, burst: int) -> None:
    with pytest.raises(ValueError, match="need qps > 0 and burst >= 1"):
        TokenBucket(qps, burst)


def test_a_token_further_off_than_the_caller_waits_is_not_taken() -> None:
    clock = Clock()
    bucket = TokenBucket(1, 1, clock=lambda: clock.now, sleep=clock.sleep)
    assert bucket.accept(0.5) == 0.0
    assert bucket.accept(0.5) is None  # a second away: refused, nothing slept
    assert clock.slept == []
    assert bucket.accept(1.0) == pytest.approx(1.0)  # the refused call took no token
