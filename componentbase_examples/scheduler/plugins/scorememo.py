"""Scores remembered per resource state: a score that depends only on a node's CPU and memory numbers
(allocatable, requested, non-zero requested) and a few numbers of the pod.

A cycle scores hundreds of nodes, and from one cycle to the next all but the node the last pod went to
are unchanged; pods of one workload ask for the same resources, and the nodes of a pool start equal and
often stay so. So NodeResourcesFit and NodeResourcesBalancedAllocation remember a score under a key naming
the plugin instance and the pod's numbers, in ``NodeInfo.memo``: one dict per resource state, shared by
the snapshot's nodes in that state, which a node trades for its new state's whenever it changes (a node
or pod event, an assumed or a dry-run pod). Remembering is a dict lookup where the arithmetic on
memory-sized integers costs several times that; a state keeps at most ``LIMIT`` keys.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable

from componentbase_examples.scheduler.snapshot import NodeInfo

__all__ = ["LIMIT", "memo_prefix", "remembered_scores"]

#: At most this many remembered scores per node state (distinct pod shapes times memoizing plugins).
LIMIT = 64


_instances = itertools.count()


def memo_prefix(plugin: object) -> str:
    """A key prefix unique to a plugin instance: two profiles' instances may score with different args
    (a counter, not ``id()``: a later instance may get a freed one's id while its memos live on)."""
    return f"{type(plugin).__name__}#{next(_instances)}:"


def _remember(memo: dict[str, int], key: str, score: int) -> int:
    if len(memo) < LIMIT:
        memo[key] = score
    return score


def remembered_scores(nodes: list[NodeInfo], key: str, score: Callable[[NodeInfo], int]) -> list[int]:
    """``score(n)`` for each node, from the node's memo under ``key`` when it is there."""
    key = sys.intern(key)  # the memos' keys are then this very object: found without comparing text
    return [memo[key] if key in (memo := n.memo) else _remember(memo, key, score(n)) for n in nodes]
