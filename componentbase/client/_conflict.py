"""``Conflict``: a write refused with 409 ``Conflict``, on one line, with server-side apply's field conflicts.

Two writes meet this: an update (or a patch, or a delete with preconditions) that carried a resourceVersion
someone else moved past, and a server-side apply that would take fields another manager owns. kube-apiserver
words the second over several lines (``Apply failed with 2 conflicts: conflicts with "a":\\n- .data.x``);
a controller's log wants one, and a caller who wants to force or give up wants the managers and fields.

The class does not derive from the official client's ``ApiException``: that import costs ~0.25 s, and this
package is imported by ``--help``. It carries the same ``status``, ``reason``, ``body`` and ``headers``, and
the ``ApiException`` as its ``__cause__``, so ``is_conflict``, ``status_of`` and ``describe`` answer for it
as for the exception it replaces.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["Conflict", "FieldConflict", "conflict_of"]


@dataclass(frozen=True, slots=True)
class FieldConflict:
    """One field another manager owns, as kube's ``FieldManagerConflict`` cause names it."""

    manager: str  # as kube prints it: '"kubectl" using v1', '"other"', '"ctl" with subresource "status"'
    field: str  # '.data.x', '.spec.containers[name="app"].image'


class Conflict(Exception):
    """409 ``Conflict``: the object changed since it was read, or an apply met fields another manager owns.

    ``str()`` is one line: kube's message, an apply's several lines joined. ``fields`` lists an apply's
    conflicts (empty for a stale resourceVersion): apply again with ``force=True`` to take them.
    """

    def __init__(self, message: str, *, fields: tuple[FieldConflict, ...] = (), body: str | None = None,
                 headers: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields
        #: As ``ApiException`` has them: the HTTP status and reason phrase, the raw Status body, the headers.
        self.status = 409
        self.reason = "Conflict"
        self.body = body
        self.headers = headers


def conflict_of(err: BaseException) -> Conflict | None:
    """The ``Conflict`` an ``ApiException`` of a 409 ``Conflict`` Status stands for; None for anything else
    (an ``AlreadyExists`` is a 409 too, and stays what it was)."""
    body = getattr(err, "body", None)
    if getattr(err, "status", None) != 409 or body is None:
        return None
    text = body.decode("utf-8", "replace") if isinstance(body, bytes | bytearray) else str(body)
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("reason") != "Conflict":
        return None
    causes = (doc.get("details") or {}).get("causes") or ()
    fields = tuple(FieldConflict(_manager(str(c.get("message") or "")), str(c.get("field") or ""))
                   for c in causes if isinstance(c, dict) and c.get("reason") == "FieldManagerConflict")
    return Conflict(one_line(str(doc.get("message") or "conflict")), fields=fields, body=text,
                    headers=getattr(err, "headers", None))


def _manager(message: str) -> str:
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
