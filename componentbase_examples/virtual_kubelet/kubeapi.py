"""How the virtual kubelet talks to the API server: its call timeout, and the library's error helpers."""

from __future__ import annotations

from componentbase.client import describe as _describe
from componentbase.client import (
    is_already_exists,
    is_conflict,
    is_not_found,
    json_body,
    status_of,
)

__all__ = ["REQUEST_TIMEOUT", "body", "describe", "is_already_exists", "is_conflict", "is_not_found", "status_of"]

#: Seconds any single call may take before the controller gives up on it and retries.
REQUEST_TIMEOUT = 10.0

body = json_body


def describe(err: BaseException) -> str:
    """One line: ``409 Conflict: ...``, or the error's type and first line when the server did not answer."""
    return _describe(err).summary
