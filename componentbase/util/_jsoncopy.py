"""A deep copy of JSON-shaped data (what the API server sends), several times faster than ``copy.deepcopy``.

Objects from an informer's cache are shared and read-only; a component that hands one to code that may
change it (a provider, a mutation before a write) copies it first. ``copy.deepcopy`` pays for generality
(a memo of every node, ``__deepcopy__`` lookups): about 0.2 ms for a pod, a tenth of the virtual kubelet's
CPU per pod. Dicts, lists and scalars need none of that.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

__all__ = ["deepcopy_json"]

T = TypeVar("T")

_SCALARS = frozenset({str, int, float, bool, type(None)})


def deepcopy_json(obj: T) -> T:
    """A deep copy of ``obj``: new dicts and lists all the way down, scalars shared (they are immutable).

    Anything that is not a dict, list or JSON scalar (a tuple, a datetime, a model) is copied with
    ``copy.deepcopy``. Unlike ``copy.deepcopy``, a dict or list reachable twice is copied twice, and a
    cycle is a ``RecursionError``: decoded JSON has neither.
    """
    return _copy(obj)  # type: ignore[no-any-return]


def _copy(obj: Any) -> Any:
    t = type(obj)
    if t is dict:
        return {k: v if type(v) in _SCALARS else _copy(v) for k, v in obj.items()}
    if t is list:
        return [v if type(v) in _SCALARS else _copy(v) for v in obj]
    if t in _SCALARS:
        return obj
    return copy.deepcopy(obj)
