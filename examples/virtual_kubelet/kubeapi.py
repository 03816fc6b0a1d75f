"""Small helpers over the official client: JSON bodies as dicts, and what a failed call was."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["REQUEST_TIMEOUT", "body", "describe", "is_conflict", "is_not_found", "status_of"]

#: Seconds any single call may take before the controller gives up on it and retries.
REQUEST_TIMEOUT = 10.0


def body(resp: Any) -> dict[str, Any]:
    """The JSON object of a ``_preload_content=False`` response."""
    doc = json.loads(resp.data)
    if not isinstance(doc, dict):
        raise ValueError("the API server answered with something that is not an object")
    return doc


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of an ``ApiException``; None when the server did not answer."""
    status = getattr(exc, "status", None)
    return int(status) if isinstance(status, int) and status else None


def is_not_found(exc: BaseException) -> bool:
    return status_of(exc) == 404


def is_conflict(exc: BaseException) -> bool:
    return status_of(exc) == 409


def describe(err: BaseException) -> str:
    """One line: ``409 Conflict``, or the error's type and first line when the server did not answer."""
    status = status_of(err)
    if status is not None:
        return f"{status} {getattr(err, 'reason', '') or ''}".strip()
    text = str(err).splitlines()[0] if str(err) else ""
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
