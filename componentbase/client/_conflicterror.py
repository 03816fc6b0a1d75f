"""``Conflict``, the official client's ``ApiException`` for a 409 ``Conflict``, said on one line.

Apart from ``_conflict`` because it imports ``kubernetes`` (~0.25 s), which ``--help`` must not pay for:
``componentbase.client.Conflict`` loads it on first use.
"""

from __future__ import annotations

import json
from typing import Any

from kubernetes.client.exceptions import ApiException

from componentbase.client._conflict import FieldConflict, manager_of, one_line

__all__ = ["Conflict", "conflict_of"]


class Conflict(ApiException):
    """409 ``Conflict``: the object changed since it was read, or an apply met fields another manager owns.

    An ``ApiException`` (``status``, ``reason``, ``body``, ``headers``), so ``except ApiException`` still
    catches it; ``str()`` is one line, kube's message with an apply's several lines joined. ``fields`` lists
    an apply's conflicts (empty for a stale resourceVersion): apply again with ``force=True`` to take them.
    """

    def __init__(self, message: str, *, fields: tuple[FieldConflict, ...] = (), body: str | None = None,
                 headers: Any = None) -> None:
        super().__init__(status=409, reason="Conflict")
        self.message = message
        self.fields = fields
        self.body = body
        self.headers = headers

    def __str__(self) -> str:
        return self.message


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
    fields = tuple(FieldConflict(manager_of(str(c.get("message") or "")), str(c.get("field") or ""))
                   for c in causes if isinstance(c, dict) and c.get("reason") == "FieldManagerConflict")
    return Conflict(one_line(str(doc.get("message") or "conflict")), fields=fields, body=text,
                    headers=getattr(err, "headers", None))
