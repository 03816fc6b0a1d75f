"""client-go's ``flowcontrol`` token bucket: ``qps`` tokens a second, at most ``burst`` saved up.

The client-side rate limit of a component's API calls (``clientConnection.qps``/``burst``) and the work
queue's overall retry limit are both this bucket: one reserves a token and sleeps, the other reserves a
token and re-queues the item that long.
"""

from __future__ import annotations

import threading

from componentbase.util._clock import REAL_CLOCK, Clock

__all__ = ["TokenBucket"]


class TokenBucket:
    """Tokens refill at ``qps`` a second up to ``burst``; a reservation may overdraw, as x/time/rate's ``Reserve``."""

    def __init__(self, qps: float, burst: int, *, clock: Clock = REAL_CLOCK) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError("need qps > 0 and burst >= 1")
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = clock.monotonic()

    def reserve(self, max_wait: float | None = None) -> float | None:
        """Take a token; the seconds until it is really there (0 when the bucket had one).

        With ``max_wait``, a token further off than that is not taken (None), as client-go's ``Wait``
        refuses a reservation that would pass its context's deadline.
        """
        with self._lock:
            now = self._clock.monotonic()
            tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps) - 1.0
            delay = 0.0 if tokens >= 0 else -tokens / self.qps
            if max_wait is not None and delay > max_wait:
                return None
            self._tokens, self._last = tokens, now
            return delay

    def accept(self, max_wait: float | None = None) -> float | None:
        """Wait for a token, as client-go's ``Accept``; the seconds waited (None: further off than ``max_wait``)."""
        delay = self.reserve(max_wait)
        if delay:
            self._clock.sleep(delay)
        return delay
