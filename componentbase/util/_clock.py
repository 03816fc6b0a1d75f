"""The clock time-dependent logic reads, injectable so unit tests step time instead of sleeping.

As client-go's ``k8s.io/utils/clock``: backoff, TTL caches, token buckets and lease expiry take a
``Clock`` and default to the real one; ``componentbase.testing.FakeClock`` is the one tests pass.
Waiting is always on an event (``wait(stop, seconds)``), so a stop wakes the waiter at once.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["REAL_CLOCK", "Clock", "RealClock", "wait_until"]


@runtime_checkable
class Clock(Protocol):
    """Monotonic seconds for intervals, the wall clock for timestamps, and waits."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back: durations, deadlines, expiry."""
        ...

    def now(self) -> dt.datetime:
        """The wall-clock time, UTC-aware: only for timestamps written to objects."""
        ...

    def sleep(self, seconds: float) -> None:
        """Pass ``seconds`` (a wait nothing can cut short)."""
        ...

    def wait(self, event: threading.Event, seconds: float | None) -> bool:
        """Wait until ``event`` is set or ``seconds`` passed (None: no limit); whether it is set."""
        ...


class RealClock:
    """The process's clocks: ``time.monotonic``, ``datetime.now(UTC)``, ``Event.wait``."""

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC)

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def wait(self, event: threading.Event, seconds: float | None) -> bool:
        return event.wait(None if seconds is None else max(0.0, seconds))


#: The default of every ``clock=`` parameter.
REAL_CLOCK: Clock = RealClock()


def wait_until(condition: Callable[[], bool], stop: threading.Event | None = None, timeout: float | None = None,
               *, interval: float = 0.02, clock: Clock = REAL_CLOCK) -> bool:
    """Whether ``condition()`` came true before ``timeout`` (None: no limit) and before ``stop`` was set.

    For conditions no event signals (an informer's sync, several events at once): each check waits on
    ``stop``, so a stop ends the wait at once instead of after a sleep.
    """
    stop = stop or threading.Event()
    deadline = None if timeout is None else clock.monotonic() + timeout
    while True:
        if condition():
            return True
        if stop.is_set():
            return False
        pause = interval
        if deadline is not None:
            left = deadline - clock.monotonic()
            if left <= 0:
                return False
            pause = min(pause, left)
        clock.wait(stop, pause)
