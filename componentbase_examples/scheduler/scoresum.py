"""The weighted sum of the score plugins' lists, in C: each list packed into one big integer, a lane per node.

A cycle adds five or so lists of hundreds of scores; adding them element by element makes an int object
per node per plugin, which cost more than the plugins' own scoring. Scores are 0..100 after normalizing,
so a list becomes the integer whose fixed-width lanes hold the nodes' scores: weighting and adding lists
are then single big-integer operations, no lane carries into the next (the lane holds 100 times the sum of
the weights), and the totals come out as a list in one ``memoryview.tolist``. A list that is not all
integers of 0..255 (a third party's floats) is added element by element, as before.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from itertools import repeat
from operator import add, mul
from typing import Literal

from componentbase_examples.scheduler.interface import MAX_NODE_SCORE

__all__ = ["WeightedSum", "as_bytes", "valid_scores"]

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
