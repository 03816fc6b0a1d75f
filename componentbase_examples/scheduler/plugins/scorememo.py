"""Scores remembered per node state: a score that depends only on the node and a few numbers of the pod.

A cycle scores hundreds of nodes, and from one cycle to the next all but the node the last pod went to
are unchanged; pods of one workload ask for the same resources. So NodeResourcesFit and
NodeResourcesBalancedAllocation remember each node's score under a key naming the plugin instance and the
pod's numbers, in ``NodeInfo.memo``, which the node replaces with an empty dict whenever it changes (a
node or pod event, an assumed or a dry-run pod). Remembering is a dict lookup where the arithmetic on
memory-sized integers costs several times that; a node keeps at most ``LIMIT`` keys.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from componentbase_examples.scheduler.snapshot import NodeInfo

__all__ = ["LIMIT", "memo_prefix", "remembered_scores"]

#: At most this many remembered scores per node state (distinct pod shapes times memoizing plugins).
LIMIT = 64


def memo_prefix(plugin: object) -> str:
    """A key prefix unique to a plugin instance: two profiles' instances may score with different args."""
    return f"{type(plugin).__name__}@{id(plugin):x}:"


def _remember(memo: dict[str, int], key: str, score: int) -> int:
    if len(memo) < LIMIT:
        memo[key] = score
    return score


def remembered_scores(nodes: list[NodeInfo], key: str, score: Callable[[NodeInfo], int]) -> list[int]:
    """``score(n)`` for each node, from the node's memo under ``key`` when it is there."""
    key = sys.intern(key)  # the memos' keys are then this very object: found without comparing text
    return [memo[key] if key in (memo := n.memo) else _remember(memo, key, score(n)) for n in nodes]
