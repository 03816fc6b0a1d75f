"""When ``sink="auto"`` decides to move its sender to a child process: a sustained rate, not a burst, once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from componentbase.events._auto import MOVE_BURST, MOVE_RATE, AutoSender
from componentbase.testing import FakeClock

pytestmark = pytest.mark.unit


class _Thread:
    """Stands in for the thread sender: the test reports writes through ``on_written``."""

    def __init__(self, on_written: Callable[[int], None]) -> None:
        self.on_written = on_written
        self.sent = 0

    def close(self, timeout: float | None) -> None:
        pass


def _sender(clock: FakeClock, spawned: threading.Event | None = None) -> tuple[AutoSender, _Thread, list[int]]:
    threads: list[_Thread] = []
    spawns: list[int] = []

    def thread(on_written: Callable[[int], None]) -> Any:
        threads.append(_Thread(on_written))
        return threads[0]

    def spawn() -> None:  # as when the client cannot be carried: the sender stays a thread
        spawns.append(1)
        if spawned is not None:
            spawned.set()

    return AutoSender(thread, spawn, clock=clock), threads[0], spawns


def test_a_rate_at_the_threshold_never_moves() -> None:
    clock = FakeClock()
    sender, thread, spawns = _sender(clock)
    thread.on_written(MOVE_BURST)  # a burst up front
    for _ in range(600):  # then ten minutes at the rate the thread keeps
        clock.step(1.0)
        thread.on_written(int(MOVE_RATE))
    sender.close(1)
    assert spawns == [] and sender.process is None


def test_writes_beyond_the_burst_move_once_and_a_refused_move_is_not_retried() -> None:
    clock, spawned = FakeClock(), threading.Event()
    sender, thread, spawns = _sender(clock, spawned)
    thread.on_written(MOVE_BURST)
    assert spawns == []
    thread.on_written(1)
    assert spawned.wait(10)  # a helper thread tries the move
    for _ in range(10):
        clock.step(1.0)
        thread.on_written(10 * MOVE_BURST)
    sender.close(1)
    assert spawns == [1] and sender.process is None


def test_a_burst_spread_over_time_does_not_move() -> None:
    clock = FakeClock()
    sender, thread, spawns = _sender(clock)
    for _ in range(100):  # twice the rate for a while, resting in between
        thread.on_written(int(2 * MOVE_RATE))
        clock.step(1.0)
        thread.on_written(0)
        clock.step(2.0)
    sender.close(1)
    assert spawns == []
