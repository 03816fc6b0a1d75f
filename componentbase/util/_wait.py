"""Exponential, capped, jittered backoff for reconnecting, as client-go's reflector backs off.

Jitter spreads a fleet of controllers that all lost the API server at once, so they do not return in
lockstep; the cap bounds how long a recovered server waits to be noticed.
"""

from __future__ import annotations

import random

__all__ = ["Backoff"]


class Backoff:
    """Delays of ``initial * factor**n`` up to ``cap``, each stretched by up to ``jitter`` times itself."""

    def __init__(self, initial: float = 0.8, cap: float = 30.0, factor: float = 2.0, jitter: float = 1.0,
                 rng: random.Random | None = None) -> None:
        if initial <= 0 or cap < initial or factor < 1 or jitter < 0:
            raise ValueError("backoff needs 0 < initial <= cap, factor >= 1 and jitter >= 0")
        self.initial = initial
        self.cap = cap
        self.factor = factor
        self.jitter = jitter
        self._rng = rng or random.Random()
        self._next = initial
        self.failures = 0

    def next(self, at_least: float = 0.0) -> float:
        """The delay before the next attempt; ``at_least`` honours a server's Retry-After."""
        base = self._next
        self._next = min(self.cap, self._next * self.factor)
        self.failures += 1
        delay = min(self.cap, base * (1.0 + self._rng.random() * self.jitter))
        return max(delay, at_least)

    def reset(self) -> None:
        self._next = self.initial
        self.failures = 0
