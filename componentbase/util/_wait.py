"""Backoff and retries with client-go's ``wait.Backoff`` semantics, on an injectable clock.

Jitter spreads a fleet of controllers that all lost the API server at once, so they do not return in
lockstep; the cap bounds how long a recovered server waits to be noticed; ``steps`` bounds how many
tries a retry makes. Everything that waits does so on a stop event, so a stop ends it at once.
"""

from __future__ import annotations

import copy
import random
import threading
from collections.abc import Callable
from typing import TypeVar

from componentbase.util._clock import REAL_CLOCK, Clock

__all__ = ["Backoff", "exponential_backoff", "exponential_delay", "jitter", "retry_on_error"]

T = TypeVar("T")

#: Backoff's ``steps`` when none is given: the delay grows until the cap, and tries never run out.
UNBOUNDED = None


def jitter(seconds: float, max_factor: float, rng: random.Random | None = None) -> float:
    """``seconds`` stretched by a random part of up to ``max_factor`` times itself (1.0 if not positive)."""
    factor = max_factor if max_factor > 0 else 1.0
    return seconds + (rng or random).random() * factor * seconds


def exponential_delay(base: float, attempt: int, cap: float, factor: float = 2.0) -> float:
    """``base * factor**attempt``, at most ``cap``: the n-th delay of a policy counted in attempts."""
    if attempt <= 0:
        return min(base, cap)
    try:
        return min(base * factor ** attempt, cap)
    except OverflowError:  # a float power this large is far past any cap
        return cap


class Backoff:
    """client-go's ``wait.Backoff``: each ``step()`` is the next delay.

    The delay starts at ``duration`` and is multiplied by ``factor`` per step (0: constant); once it
    would pass ``cap`` (0: none) it stays at ``cap`` and ``steps`` drops to 0. Each delay returned is
    stretched by up to ``jitter`` times itself. ``steps`` is how many steps grow the delay (None: until
    the cap); a retry helper makes at most ``steps`` tries. ``reset()`` starts over.
    """

    def __init__(self, duration: float = 0.8, factor: float = 2.0, jitter: float = 1.0,
                 steps: int | None = UNBOUNDED, cap: float = 30.0, *, clock: Clock = REAL_CLOCK,
                 rng: random.Random | None = None) -> None:
        if duration < 0 or factor < 0 or jitter < 0 or cap < 0 or (steps is not None and steps < 0):
            raise ValueError("backoff needs duration, factor, jitter, cap and steps of at least 0")
        self.duration = duration
        self.factor = factor
        self.jitter = jitter
        self.steps = steps
        self.cap = cap
        self.clock = clock
        self._rng = rng or random.Random()
        self._initial = (duration, steps)

    def __repr__(self) -> str:
        return (f"Backoff(duration={self.duration!r}, factor={self.factor!r}, jitter={self.jitter!r}, "
                f"steps={self.steps!r}, cap={self.cap!r})")

    def step(self) -> float:
        """The next delay, as client-go's ``Step``: out of steps, the current one (jittered) again."""
        if self.steps is not None and self.steps < 1:
            return self._jittered(self.duration)
        if self.steps is not None:
            self.steps -= 1
        delay = self.duration
        if self.factor:
            self.duration *= self.factor
            if self.cap > 0 and self.duration > self.cap:
                self.duration = self.cap
                self.steps = 0
        return self._jittered(delay)

    def _jittered(self, delay: float) -> float:
        return jitter(delay, self.jitter, self._rng) if self.jitter > 0 else delay

    def reset(self) -> None:
        """Back to the first delay and all the steps: after a success."""
        self.duration, self.steps = self._initial

    def copy(self) -> Backoff:
        """This backoff in its current state, stepped independently (Go passes it by value)."""
        twin = copy.copy(self)
        twin._rng = random.Random(self._rng.random())
        return twin

    def wait(self, stop: threading.Event, at_least: float = 0.0) -> bool:
        """Wait out the next delay (at least ``at_least``: a server's Retry-After); whether ``stop`` came."""
        return self.clock.wait(stop, max(self.step(), at_least))

    def _last_try(self) -> bool:
        return self.steps is not None and self.steps <= 1


def exponential_backoff(condition: Callable[[], bool], backoff: Backoff, stop: threading.Event | None = None) -> bool:
    """Check ``condition`` up to ``backoff.steps`` times, waiting a step between; whether it came true.

    As client-go's ``wait.ExponentialBackoff``; False when the steps ran out or ``stop`` was set. An
    exception from ``condition`` ends the wait and propagates. ``backoff`` itself is not stepped.
    """
    b = backoff.copy()
    stop = stop or threading.Event()
    while b.steps is None or b.steps > 0:
        if condition():
            return True
        if b._last_try() or b.wait(stop):
            return False
    return False


def retry_on_error(backoff: Backoff, retriable: Callable[[BaseException], bool], fn: Callable[[], T],
                   stop: threading.Event | None = None) -> T:
    """``fn()``, tried again after each backoff step while it raises what ``retriable`` accepts.

    As client-go's ``retry.OnError``: at most ``backoff.steps`` tries; the last error (or the first
    one not retriable) propagates, as does the one in hand when ``stop`` is set.
    """
    b = backoff.copy()
    stop = stop or threading.Event()
    while True:
        try:
            return fn()
        except Exception as err:
            if not retriable(err) or b._last_try() or b.wait(stop):
                raise
