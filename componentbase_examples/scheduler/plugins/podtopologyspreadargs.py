"""PodTopologySpread's args and their validation, as kube's ``ValidatePodTopologySpreadArgs``.

Kept apart from the plugin: validation runs when the config is read, before any pod is scheduled, and
checks the default constraints as upstream does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from componentbase import field
from componentbase.util import validation

__all__ = ["DO_NOT_SCHEDULE", "SCHEDULE_ANYWAY", "SYSTEM_DEFAULTING", "PodTopologySpreadArgs"]

DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
SYSTEM_DEFAULTING, LIST_DEFAULTING = "System", "List"


_CONSTRAINT_FIELDS = frozenset({"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
                                "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"})
#: The JSON type each field of a v1.TopologySpreadConstraint has; a value of another type is refused by name.
_CONSTRAINT_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "maxSkew": ((int,), "an integer"), "minDomains": ((int,), "an integer"),
    "topologyKey": ((str,), "a string"), "whenUnsatisfiable": ((str,), "a string"),
    "nodeAffinityPolicy": ((str,), "a string"), "nodeTaintsPolicy": ((str,), "a string"),
    "labelSelector": ((dict,), "a map"), "matchLabelKeys": ((list,), "a list of strings"),
}


def _type_problems(c: Mapping[str, Any], p: field.Path) -> list[Exception]:
    """Fields of the wrong JSON type, as the strict decoder upstream reports them."""
    errs: list[Exception] = []
    for name, (types, what) in _CONSTRAINT_TYPES.items():
        value = c.get(name)
        wrong = value is not None and (isinstance(value, bool) or not isinstance(value, types))
        if not wrong and name == "matchLabelKeys" and value is not None:
            wrong = not all(isinstance(item, str) for item in value)
        if wrong:
            errs.append(field.invalid(p.child(name), value, f"must be {what}"))
    return errs


def _validate_constraint(c: Any, p: field.Path) -> list[Exception]:
    if not isinstance(c, Mapping):
        return [field.invalid(p, c, "must be a map of constraint fields")]
    errs: list[Exception] = [field.invalid(p.child(k), k, "unknown field") for k in c if k not in _CONSTRAINT_FIELDS]
    type_errs = _type_problems(c, p)
    if type_errs:
        return errs + type_errs
    skew = c.get("maxSkew", 0)
    if not isinstance(skew, int) or isinstance(skew, bool) or skew <= 0:
        errs.append(field.invalid(p.child("maxSkew"), skew, "not in valid range (0, inf)"))
    key = c.get("topologyKey") or ""
    if not key:
        errs.append(field.required(p.child("topologyKey"), "can not be empty"))
    else:
        errs += [field.invalid(p.child("topologyKey"), key, msg) for msg in validation.qualified_name(key)]
    action = c.get("whenUnsatisfiable") or ""
    if not action:
        errs.append(field.required(p.child("whenUnsatisfiable"), "can not be empty"))
    elif action not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
        errs.append(field.not_supported(p.child("whenUnsatisfiable"), action, [DO_NOT_SCHEDULE, SCHEDULE_ANYWAY]))
    if c.get("labelSelector") is not None:
        errs.append(field.forbidden(p.child("labelSelector"),
                                    "constraint must not define a selector, as they deduced for each pod"))
    return errs


@attrs.define(kw_only=True)
class PodTopologySpreadArgs:
    """Upstream's args: ``System`` applies kube's built-in defaults, ``List`` the ``defaultConstraints``."""

    default_constraints: list[dict[str, Any]] = attrs.field(factory=list)
    defaulting_type: str = SYSTEM_DEFAULTING

    def validate(self, path: field.Path) -> list[Exception]:
        errs: list[Exception] = []
        dpath = path.child("defaultingType")
        kind = self.defaulting_type or SYSTEM_DEFAULTING  # v1 defaulting turns "" into System
        if kind not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            errs.append(field.not_supported(dpath, kind, [SYSTEM_DEFAULTING, LIST_DEFAULTING]))
        elif kind == SYSTEM_DEFAULTING and self.default_constraints:
            errs.append(field.invalid(dpath, kind, "when .defaultConstraints are not empty"))
        cpath = path.child("defaultConstraints")
        seen: set[tuple[Any, Any]] = set()
        for i, c in enumerate(self.default_constraints):
            problems = _validate_constraint(c, cpath.index(i))
            errs += problems
            if problems:
                continue  # a pair of wrong types may not even be hashable
            pair = (c.get("topologyKey"), c.get("whenUnsatisfiable"))
            if pair in seen:
                errs.append(field.duplicate(cpath.index(i), f"{{{pair[0]}, {pair[1]}}}"))
            seen.add(pair)
        return errs
