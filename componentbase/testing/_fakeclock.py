"""A clock unit tests step by hand, so backoff, expiry and rate limits are checked without waiting.

Pass it wherever a ``clock=`` is taken (``componentbase.util.Clock``). Time moves only when the test
calls ``step``, or when the code under test sleeps or waits on it: a wait that nothing ends passes
its whole timeout at once, so a retry loop runs through its delays in microseconds, and ``waits``
lists what it asked for.
"""

from __future__ import annotations

import datetime as dt
import threading

__all__ = ["FakeClock"]

#: Where a FakeClock's wall clock starts unless told otherwise.
EPOCH = dt.datetime(2026, 5, 1, 12, 0, 0, tzinfo=dt.UTC)


class FakeClock:
    """A ``Clock`` whose time is stepped, never read from the machine."""

    def __init__(self, start: dt.datetime = EPOCH, monotonic: float = 1000.0) -> None:
        if start.tzinfo is None:
            raise ValueError("a FakeClock starts at an aware datetime")
        self._lock = threading.Lock()
        self._start = start
        self._origin = monotonic
        self._elapsed = 0.0
        #: Every sleep and every wait that ran out, in seconds, in order.
        self.waits: list[float] = []

    def monotonic(self) -> float:
        with self._lock:
            return self._origin + self._elapsed

    def now(self) -> dt.datetime:
        with self._lock:
            return self._start + dt.timedelta(seconds=self._elapsed)

    def step(self, seconds: float) -> None:
        """Let ``seconds`` pass."""
        if seconds < 0:
            raise ValueError("a clock does not go back")
        with self._lock:
            self._elapsed += seconds

    def sleep(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        with self._lock:
            self.waits.append(seconds)
        self.step(seconds)

    def wait(self, event: threading.Event, seconds: float | None) -> bool:
        """Set: True at once. Otherwise ``seconds`` pass and whether it is set now; no limit waits for real."""
        if event.is_set():
            return True
        if seconds is None:
            return event.wait()
        self.sleep(seconds)
        return event.is_set()
