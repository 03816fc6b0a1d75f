"""When ``sink="auto"`` decides to move its sender to a child process: a sustained rate, not a burst, once."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from componentbase.events._auto import MOVE_BURST, MOVE_RATE, AutoSender
from componentbase.testing import FakeClock

pytestmark = pytest.mark.unit


class _Thread:
    """Stands in for the thread sender: takes every event."""

    sent = 0

    def submit(self, item: Any) -> bool:
        return True

    def close(self, timeout: float | None) -> None:
        pass


def _record(sender: AutoSender, n: int) -> None:
    for _ in range(n):
        assert sender.submit((0.0, {}))


def _sender(clock: FakeClock, spawned: threading.Event | None = None) -> tuple[AutoSender, list[int]]:
    spawns: list[int] = []

    def spawn() -> None:  # as when the client cannot be carried: the sender stays a thread
        spawns.append(1)
        if spawned is not None:
            spawned.set()

    return AutoSender(_Thread, spawn, clock=clock), spawns


def test_a_rate_at_the_threshold_never_moves() -> None:
    clock = FakeClock()
    sender, spawns = _sender(clock)
    _record(sender, MOVE_BURST)  # a burst up front
    for _ in range(600):  # then ten minutes at the rate the thread may keep
        clock.step(1.0)
        _record(sender, int(MOVE_RATE))
    sender.close(1)
    assert spawns == [] and sender.process is None


def test_events_beyond_the_burst_move_once_and_a_refused_move_is_not_retried() -> None:
    clock, spawned = FakeClock(), threading.Event()
    sender, spawns = _sender(clock, spawned)
    _record(sender, MOVE_BURST)
    assert spawns == []
    _record(sender, 1)
    assert spawned.wait(10)  # a helper thread tries the move
    for _ in range(10):
        clock.step(1.0)
        _record(sender, 10 * MOVE_BURST)
    sender.close(1)
    assert spawns == [1] and sender.process is None


def test_a_burst_spread_over_time_does_not_move() -> None:
    clock = FakeClock()
    sender, spawns = _sender(clock)
    for _ in range(100):  # twice the rate for a while, resting in between
        _record(sender, int(2 * MOVE_RATE))
        clock.step(1.0)
        clock.step(2.0)
    sender.close(1)
    assert spawns == []
