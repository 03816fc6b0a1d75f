"""The weighted sum of the score plugins' lists and the pick among the highest totals, each in C.

The sum: each list packed into one big integer, a lane per node.

A cycle adds five or so lists of hundreds of scores; adding them element by element makes an int object
per node per plugin, which cost more than the plugins' own scoring. Scores are 0..100 after normalizing,
so a list becomes the integer whose fixed-width lanes hold the nodes' scores: weighting and adding lists
are then single big-integer operations, no lane carries into the next (the lane holds 100 times the sum of
the weights), and the totals come out as a list in one ``memoryview.tolist``. A list that is not all
integers of 0..255 (a third party's floats) is added element by element, as before.

The pick: kube's ``selectHost`` is a reservoir sample over the totals, a random draw at every total that
ties the best so far; on hundreds of equal nodes (a pool's empty ones) the draws were the cost. The same
draws are made in C and the same node is chosen, found by positions rather than a walk.
"""

from __future__ import annotations

import math
import sys
from collections import deque
from collections.abc import Callable, Iterable
from itertools import islice, repeat, starmap
from operator import add, mul
from typing import Literal

from componentbase_examples.scheduler.interface import MAX_NODE_SCORE

__all__ = ["WeightedSum", "as_bytes", "select_host", "valid_scores"]

_VALID = bytes(range(MAX_NODE_SCORE + 1))
#: Lane widths in bytes, with their ``memoryview`` formats.
_LANES: tuple[tuple[int, Literal["H", "I", "Q"]], ...] = ((2, "H"), (4, "I"), (8, "Q"))
_LOW = 0 if sys.byteorder == "little" else -1  # where a lane's low byte is, from its start


def as_bytes(scores: list[int]) -> bytes | None:
    """``scores`` as bytes, or None when one is not an integer of 0..255."""
    try:
        return bytes(scores)
    except (TypeError, ValueError):
        return None


def valid_scores(scores: list[int], raw: bytes | None) -> bool:
    """Every score in 0..100 (``raw`` is ``as_bytes(scores)``): the valid bytes deleted, nothing is left."""
    if raw is not None:
        return not raw.translate(None, _VALID)
    return not scores or (min(scores) >= 0 and max(scores) <= MAX_NODE_SCORE)


class WeightedSum:
    """The sum of weighted score lists of ``count`` nodes, no total above ``max_total``."""

    def __init__(self, count: int, max_total: int) -> None:
        self.count = count
        self.lane = next((lane for lane in _LANES if max_total < 1 << (8 * lane[0])), None)
        self.packed = 0
        self.unpacked: Iterable[int] | None = None  # the lists that could not be packed, as nested maps

    def add(self, scores: list[int], raw: bytes | None, weight: int) -> None:
        """Add ``weight`` times ``scores`` (``raw`` is ``as_bytes(scores)``)."""
        if raw is not None and self.lane is not None and weight >= 0:
            width = self.lane[0]
            lanes = bytearray(len(raw) * width)
            lanes[(_LOW % width)::width] = raw
            self.packed += int.from_bytes(lanes, sys.byteorder) * weight
            return
        weighted = scores if weight == 1 else map(mul, scores, repeat(weight))
        self.unpacked = weighted if self.unpacked is None else map(add, self.unpacked, weighted)

    def totals(self) -> list[int]:
        if self.lane is None:
            return [0] * self.count if self.unpacked is None else list(self.unpacked)
        width, fmt = self.lane
        packed = memoryview(self.packed.to_bytes(self.count * width, sys.byteorder)).cast(fmt).tolist()
        return packed if self.unpacked is None else list(map(add, packed, self.unpacked))


def select_host(totals: list[int], rnd: Callable[[], float]) -> int:
    """The index the one-pass reservoir picks (kube's ``selectHost``), drawing the same numbers from ``rnd``.

    The reservoir starts at the first total (extenders' totals may be negative) and draws wherever a total
    equals the best before it; the ``j``-th total equal to the highest replaces the choice when its draw
    times ``j`` is below 1. So: the draws before the first highest total are counted and made (they only
    tie lower bests), then one per further highest total, all at once, and the last winning one names the
    position.
    """
    if not totals:
        return 0
    best = max(totals)
    first = totals.index(best)
    if first > 1:
        running, before = totals[0], 0
        for total in islice(totals, 1, first):
            if total > running:
                running = total
            elif total == running:
                before += 1
        deque(starmap(rnd, repeat((), before)), maxlen=0)
    ties = totals.count(best)
    if ties == 1:
        return first
    draws = list(starmap(rnd, repeat((), ties - 1)))  # for the 2nd to the last highest total
    thresholds = _thresholds(ties)
    for k in range(ties - 2, -1, -1):  # the last winner: the (k + 2)-th highest total
        if draws[k] < thresholds[k]:
            break
    else:
        return first
    chosen = first
    for _ in range(k + 1):
        chosen = totals.index(best, chosen + 1)
    return chosen


#: ``_THRESHOLDS[j]``: the least float ``d`` with ``d * j >= 1.0`` (as rounded), so that the reservoir's test
#: ``draw * j < 1.0`` is exactly ``draw < _THRESHOLDS[j]``, a comparison with no product to compute.
_THRESHOLDS: list[float] = [math.inf, math.inf]


def _thresholds(ties: int) -> list[float]:
    """The thresholds of the 2nd to the ``ties``-th highest total."""
    for j in range(len(_THRESHOLDS), ties + 1):
        t = 1.0 / j
        while t * j >= 1.0:
            t = math.nextafter(t, 0.0)
        while t * j < 1.0:  # the product rounds monotonically in t: the first t past the boundary
            t = math.nextafter(t, 1.0)
        _THRESHOLDS.append(t)
    return _THRESHOLDS[2:ties + 1]
