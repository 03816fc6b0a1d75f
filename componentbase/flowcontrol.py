"""client-go's ``flowcontrol`` token bucket: ``qps`` tokens a second, at most ``burst`` saved up.

The client-side rate limit of a component's API calls (``clientConnection.qps``/``burst``) and the work
queue's overall retry limit are both this bucket: one reserves a token and sleeps, the other reserves a
token and re-queues the item that long.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    """Tokens refill at ``qps`` a second up to ``burst``; a reservation may overdraw, as x/time/rate's ``Reserve``."""

    def __init__(self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], object] = time.sleep) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError("need qps > 0 and burst >= 1")
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = clock()

    def reserve(self) -> float:
        """Take a token now; the seconds until it is really there (0 when the bucket had one)."""
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def accept(self) -> float:
        """Wait for a token, as client-go's ``Accept``; the seconds waited."""
        delay = self.reserve()
        if delay > 0:
            self._sleep(delay)
        return delay
