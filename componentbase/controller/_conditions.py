"""Status conditions (``metav1.Condition``) on plain lists of dicts, as apimachinery's ``meta`` package keeps them.

A condition's ``lastTransitionTime`` says when its ``status`` last changed, not when it was last written:
setting a condition again with the same status keeps the time, so clients can tell how long an object has
been Ready. ``observedGeneration`` says which spec the condition describes. Timestamps are
``metav1.Time`` (``componentbase.client.format_time``) from an injectable clock, so tests step time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from componentbase.client import format_time
from componentbase.controller._types import Obj
from componentbase.util import REAL_CLOCK, Clock

__all__ = [
    "find_status_condition",
    "is_status_condition_false",
    "is_status_condition_present_and_equal",
    "is_status_condition_true",
    "remove_status_condition",
    "set_condition",
    "set_status_condition",
]

Condition = dict[str, Any]

#: The statuses ``metav1.Condition`` allows (kube's schema for it refuses any other).
STATUSES = ("True", "False", "Unknown")


def _status(value: object) -> str:
    """``"True"``/``"False"``/``"Unknown"``; a bool is taken for the first two."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if value not in STATUSES:
        raise ValueError(f'condition status must be "True", "False" or "Unknown", not {value!r}')
    return str(value)


def set_status_condition(conditions: list[Condition], condition: Mapping[str, Any], *,
                         clock: Clock = REAL_CLOCK) -> bool:
    """Set ``condition`` in ``conditions`` by its type (``meta.SetStatusCondition``); whether anything changed.

    A new type is appended, its ``lastTransitionTime`` now unless given. An existing one takes the new
    status, reason, message and observedGeneration in place; its ``lastTransitionTime`` changes (to the
    given one, or now) only when the status does. ``status`` may be a bool.
    """
    new = dict(condition)
    if not new.get("type") or not isinstance(new["type"], str):
        raise ValueError("a condition needs a type (such as Ready)")
    new["status"] = _status(new.get("status"))
    new.setdefault("reason", "")  # metav1.Condition always writes reason and message
    new.setdefault("message", "")
    existing = find_status_condition(conditions, new["type"])
    if existing is None:
        if not new.get("lastTransitionTime"):
            new["lastTransitionTime"] = format_time(clock.now())
        conditions.append(new)
        return True
    changed = False
    if existing.get("status") != new["status"]:
        existing["status"] = new["status"]
        existing["lastTransitionTime"] = new.get("lastTransitionTime") or format_time(clock.now())
        changed = True
    for field in ("reason", "message"):
        if existing.get(field, "") != new[field]:
            existing[field] = new[field]
            changed = True
    generation = new.get("observedGeneration") or 0
    if (existing.get("observedGeneration") or 0) != generation:
        changed = True
        if generation:
            existing["observedGeneration"] = generation
        else:
            existing.pop("observedGeneration", None)  # Go's omitempty: zero is not written
    return changed


def find_status_condition(conditions: list[Condition], condition_type: str) -> Condition | None:
    """The condition of ``condition_type`` (the list's own dict, to read or change), or None."""
    return next((c for c in conditions if c.get("type") == condition_type), None)


def remove_status_condition(conditions: list[Condition], condition_type: str) -> bool:
    """Remove the condition of ``condition_type``, in place; whether there was one."""
    kept = [c for c in conditions if c.get("type") != condition_type]
    removed = len(kept) != len(conditions)
    conditions[:] = kept
    return removed


def is_status_condition_present_and_equal(conditions: list[Condition], condition_type: str, status: str) -> bool:
    """Whether the condition of ``condition_type`` is there with ``status``."""
    found = find_status_condition(conditions, condition_type)
    return found is not None and found.get("status") == status


def is_status_condition_true(conditions: list[Condition], condition_type: str) -> bool:
    """Whether the condition of ``condition_type`` is there and ``"True"``."""
    return is_status_condition_present_and_equal(conditions, condition_type, "True")


def is_status_condition_false(conditions: list[Condition], condition_type: str) -> bool:
    """Whether the condition of ``condition_type`` is there and ``"False"``."""
    return is_status_condition_present_and_equal(conditions, condition_type, "False")


def set_condition(obj: Obj, condition_type: str, status: str | bool, reason: str, message: str = "", *,
                  clock: Clock = REAL_CLOCK) -> bool:
    """Set a condition in ``obj["status"]["conditions"]`` (created if missing) with ``observedGeneration``
    the object's ``metadata.generation``: the usual call of a reconcile about to write its status.

    Whether anything changed, so the status write can be skipped when nothing did.
    """
    status_part = obj.get("status")
    if not isinstance(status_part, dict):
        status_part = obj["status"] = {}
    conditions = status_part.get("conditions")
    if not isinstance(conditions, list):
        conditions = status_part["conditions"] = []
    condition: Condition = {"type": condition_type, "status": status, "reason": reason, "message": message}
    generation = (obj.get("metadata") or {}).get("generation")
    if generation:
        condition["observedGeneration"] = generation
    return set_status_condition(conditions, condition, clock=clock)
