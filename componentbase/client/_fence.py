"""Fencing: a leader's writes are refused locally once its leadership can no longer be vouched for.

client-go does not do this: a deposed leader's in-flight work keeps writing until it notices. A ``Fence``
answers from the elector's own deadline (last successful renewal + renewDeadline, on the monotonic clock),
so a paused or partitioned leader that wakes up after its successor took over sends nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Fence", "NotLeader"]

#: Verbs that change nothing: a fenced client still sends them.
_READS = frozenset({"GET", "HEAD", "OPTIONS"})


class NotLeader(RuntimeError):
    """A write refused before it was sent: this replica does not (or may no longer) lead."""


class Fence:
    """Open until ``until`` is set; then writes go out only while ``clock() < until()``."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until: Callable[[], float] | None = None

    def close_after(self, until: Callable[[], float]) -> None:
        """Judge writes by ``until()``: the monotonic time leadership is vouched for (``-inf`` when not leading)."""
        self._until = until

    def allows(self) -> bool:
        """Whether a write may go out now."""
        return self._until is None or self._clock() < self._until()

    def __call__(self, method: str, url: str) -> None:
        """The guard of a fenced client: raise ``NotLeader`` for a write the fence does not allow."""
        if method.upper() not in _READS and not self.allows():
            raise NotLeader(f"refused {method} {url}: this replica is not the leader (lease deadline passed "
                            f"or leadership lost)")
