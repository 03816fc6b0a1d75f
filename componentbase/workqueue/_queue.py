"""client-go's work queue: de-duplicating, delaying and rate limited.

Controllers queue *keys* (``namespace/name``), not objects, and read the latest object from an informer's
cache when they process a key. The queue guarantees what makes that safe:

- an item queued several times before a worker takes it is processed once (it is "dirty" once);
- an item is never processed by two workers at once: added while being processed, it is queued again
  only when the worker calls ``done``;
- ``add_rate_limited`` retries a failing item with per-item exponential backoff, ``forget`` resets it.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar

from componentbase.util import REAL_CLOCK, Clock, TokenBucket, exponential_delay

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "MaxOfRateLimiter",
    "QueueMetrics",
    "RateLimiter",
    "RateLimitingQueue",
    "ShutDown",
    "WorkQueue",
    "default_controller_rate_limiter",
]

T = TypeVar("T", bound=Hashable)


class ShutDown(Exception):
    """``get`` on a queue that is shut down and empty: the worker should return."""


# --- rate limiters -------------------------------------------------------------------------------

class RateLimiter(Protocol):
    """How long an item waits before its next try: what a ``RateLimitingQueue`` asks on each failure."""

    def when(self, item: Hashable) -> float:
        """How long ``item`` should wait before its next try (and count this try)."""
        ...

    def forget(self, item: Hashable) -> None: ...

    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialFailureRateLimiter:
    """``base * 2**failures`` per item, capped: a failing item backs off, the others do not notice."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        if base_delay <= 0 or max_delay < base_delay:
            raise ValueError("need 0 < base_delay <= max_delay")
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._lock = threading.Lock()
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        with self._lock:
            n = self._failures.get(item, 0)
            self._failures[item] = n + 1
        return exponential_delay(self.base_delay, n, self.max_delay)

    def forget(self, item: Hashable) -> None:
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        with self._lock:
            return self._failures.get(item, 0)


class BucketRateLimiter:
    """A token bucket over all items (``qps``, ``burst``): bounds the overall retry rate."""

    def __init__(self, qps: float = 10.0, burst: int = 100, *, clock: Clock = REAL_CLOCK) -> None:
        self.bucket = TokenBucket(qps, burst, clock=clock)
        self.qps = qps
        self.burst = burst

    def when(self, item: Hashable) -> float:
        return self.bucket.reserve() or 0.0

    def forget(self, item: Hashable) -> None:
        pass

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay of several limiters; requeues are the largest count any of them keeps."""

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self.limiters = limiters

    def when(self, item: Hashable) -> float:
        return max(limiter.when(item) for limiter in self.limiters)

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


def default_controller_rate_limiter() -> MaxOfRateLimiter:
    """client-go's default: 5ms doubling to 1000s per item, and 10 qps (burst 100) overall."""
    return MaxOfRateLimiter(ItemExponentialFailureRateLimiter(0.005, 1000.0), BucketRateLimiter(10.0, 100))


# --- queues --------------------------------------------------------------------------------------

class QueueMetrics(Protocol):
    """Where a queue reports client-go's workqueue metrics (``componentbase.metrics.Metrics`` does)."""

    def queue_added(self, name: str, depth: int) -> None:
        """An item became queued; ``depth`` is the number waiting now."""
        ...

    def queue_taken(self, name: str, depth: int, waited: float) -> None:
        """A worker took an item that waited ``waited`` seconds."""
        ...

    def queue_done(self, name: str, worked: float) -> None:
        """A worker finished an item after ``worked`` seconds."""
        ...

    def queue_retried(self, name: str) -> None:
        """An item was added back after a failure."""
        ...

    def queue_created(self, name: str, in_flight: Callable[[], list[float]]) -> None:
        """A queue named ``name`` exists: ``in_flight()`` gives, when scraped, how long each item in work has been
        (client-go's unfinished-work and longest-running-processor gauges; the newest queue of a name wins)."""
        ...


class WorkQueue(Generic[T]):
    """A FIFO of distinct items with ``add_after`` for delayed adds; ``get`` blocks.

    With ``metrics``, it reports depth, adds, time in queue and time in work under ``name``.
    """

    def __init__(self, name: str = "", metrics: QueueMetrics | None = None) -> None:
        self.name = name
        self.metrics = metrics
        self._added_at: dict[T, float] = {}
        self._taken_at: dict[T, float] = {}
        self._cond = threading.Condition(threading.Lock())
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._waiting: list[tuple[float, int, T]] = []  # heap of (ready at, tie-break, item)
        self._ready_at: dict[T, float] = {}
        self._counter = itertools.count()
        self._shutting_down = False
        if metrics is not None:
            metrics.queue_created(name, self.in_flight)

    # --- adding --------------------------------------------------------------------------------

    def add(self, item: T) -> None:
        """Queue ``item`` unless it is already queued; while it is processed, queue it after ``done``."""
        with self._cond:
            self._add(item)

    def _add(self, item: T) -> None:
        if self._shutting_down or item in self._dirty:
            return
        self._dirty.add(item)
        if self.metrics is not None:
            self._added_at[item] = time.monotonic()
        if item not in self._processing:
            self._queue.append(item)
            self._cond.notify()
        if self.metrics is not None:
            self.metrics.queue_added(self.name, len(self._queue))

    def add_after(self, item: T, delay: float) -> None:
        """Add ``item`` once ``delay`` seconds passed; an earlier pending time for it wins."""
        if delay <= 0:
            self.add(item)
            return
        with self._cond:
            if self._shutting_down:
                return
            ready = time.monotonic() + delay
            pending = self._ready_at.get(item)
            if pending is not None and pending <= ready:
                return
            self._ready_at[item] = ready
            heapq.heappush(self._waiting, (ready, next(self._counter), item))
            self._cond.notify_all()  # a getter may need to wake earlier than it planned

    def _promote(self, now: float) -> float | None:
        """Move due delayed items into the queue; returns when the next one is due."""
        waiting = self._waiting
        while waiting and waiting[0][0] <= now:
            ready, _, item = heapq.heappop(waiting)
            if self._ready_at.get(item) == ready:
                del self._ready_at[item]
                self._add(item)
        return waiting[0][0] if waiting else None

    # --- taking --------------------------------------------------------------------------------

    def get(self, timeout: float | None = None) -> T:
        """The next item, marked as processing until ``done``.

        Raises ``ShutDown`` once the queue is shut down and empty, ``TimeoutError`` after ``timeout``.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                now = time.monotonic()
                next_due = self._promote(now)
                if self._queue:
                    item = self._queue.popleft()
                    self._processing.add(item)
                    self._dirty.discard(item)
                    if self.metrics is not None:
                        self._taken_at[item] = now
                        self.metrics.queue_taken(self.name, len(self._queue), now - self._added_at.pop(item, now))
                    return item
                if self._shutting_down:
                    raise ShutDown(self.name)
                wait = None if next_due is None else next_due - now
                if deadline is not None:
                    left = deadline - now
                    if left <= 0:
                        raise TimeoutError(f"no item within {timeout}s")
                    wait = left if wait is None else min(wait, left)
                self._cond.wait(wait)

    def done(self, item: T) -> None:
        """The worker finished ``item``; if it was added meanwhile, it is queued again now."""
        with self._cond:
            self._processing.discard(item)
            if self.metrics is not None:
                self.metrics.queue_done(self.name, time.monotonic() - self._taken_at.pop(item, time.monotonic()))
            if item in self._dirty:
                self._queue.append(item)
                self._cond.notify()
            if self._shutting_down:
                self._cond.notify_all()  # shut_down_with_drain may be waiting

    def in_flight(self) -> list[float]:
        """How long, in seconds, each item taken and not yet ``done`` has been in work (kept with metrics only)."""
        with self._cond:
            now = time.monotonic()
            return [now - taken for taken in self._taken_at.values()]

    def __len__(self) -> int:
        """Items ready to be taken (not those processing or still delayed)."""
        with self._cond:
            self._promote(time.monotonic())
            return len(self._queue)

    # --- stopping ------------------------------------------------------------------------------

    def shut_down(self) -> None:
        """Refuse new items and drop delayed ones; workers get what is queued, then ``ShutDown``."""
        with self._cond:
            self._shutting_down = True
            self._waiting.clear()
            self._ready_at.clear()
            self._cond.notify_all()

    def shut_down_with_drain(self, timeout: float | None = None) -> bool:
        """Shut down, then wait until workers have taken and finished every queued item.

        Returns False if ``timeout`` passed first.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        self.shut_down()
        with self._cond:
            while self._queue or self._processing:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def shutting_down(self) -> bool:
        with self._cond:
            return self._shutting_down


class RateLimitingQueue(WorkQueue[T]):
    """A ``WorkQueue`` whose retries wait as a ``RateLimiter`` says (client-go's default if none given)."""

    def __init__(self, rate_limiter: RateLimiter | None = None, name: str = "",
                 metrics: QueueMetrics | None = None) -> None:
        super().__init__(name, metrics)
        self.rate_limiter: RateLimiter = rate_limiter or default_controller_rate_limiter()

    def add_rate_limited(self, item: T) -> float:
        """Add ``item`` after its backoff: call this when processing it failed. Returns the backoff, in seconds."""
        if self.metrics is not None:
            self.metrics.queue_retried(self.name)
        delay = self.rate_limiter.when(item)
        self.add_after(item, delay)
        return delay

    def forget(self, item: T) -> None:
        """``item`` succeeded (or was given up on): its next failure starts the backoff over."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self.rate_limiter.num_requeues(item)
