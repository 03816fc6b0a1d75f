"""``Conflict``: a write refused with 409 ``Conflict``, on one line, with server-side apply's field conflicts.

Two writes meet this: an update (or a patch, or a delete with preconditions) that carried a resourceVersion
someone else moved past, and a server-side apply that would take fields another manager owns. kube-apiserver
words the second over several lines (``Apply failed with 2 conflicts: conflicts with "a":\\n- .data.x``);
a controller's log wants one, and a caller who wants to force or give up wants the managers and fields.

The exception itself, an ``ApiException``, lives in ``_conflicterror``: importing the official client costs
~0.25 s, and this module is imported by ``--help``; it is loaded by the first conflict.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FieldConflict", "manager_of", "one_line"]


@dataclass(frozen=True, slots=True)
class FieldConflict:
    """One field another manager owns, as kube's ``FieldManagerConflict`` cause names it."""

    manager: str  # as kube prints it: '"kubectl" using v1', '"other"', '"ctl" with subresource "status"'
    field: str  # '.data.x', '.spec.containers[name="app"].image'


def manager_of(message: str) -> str:
    """The manager a ``FieldManagerConflict`` cause names (its message is ``conflict with "mgr" ...``)."""
    return message.removeprefix("conflict with ")


def one_line(message: str) -> str:
    """An apply conflict's lines (``conflicts with "a":`` then ``- .data.x`` per field) as
    ``conflicts with "a": .data.x, .data.y; conflicts with "b": .data.z``."""
    groups: list[tuple[str, list[str]]] = []
    for line in message.splitlines():
        if line.startswith("- ") and groups:
            groups[-1][1].append(line[2:])
        else:
            groups.append((line, []))
    return "; ".join(f"{head} {', '.join(fields)}" if fields else head for head, fields in groups)
