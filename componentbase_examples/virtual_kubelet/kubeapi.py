"""How the virtual kubelet talks to the API server: its call timeout, and the library's error helpers."""

from __future__ import annotations

from typing import Any

from componentbase.client import describe as _describe
from componentbase.client import (
    is_already_exists,
    is_conflict,
    is_not_found,
    json_body,
    request,
    status_of,
)

__all__ = ["REQUEST_TIMEOUT", "body", "call", "describe", "is_already_exists", "is_conflict", "is_not_found",
           "status_of"]

#: Seconds any single call may take before the controller gives up on it and retries.
REQUEST_TIMEOUT = 10.0

body = json_body


def call(api_client: Any, method: str, path: str, *, timeout: float, body: Any = None,
         **path_params: str) -> dict[str, Any]:
    """``method path`` with a JSON body we built; the answer's JSON.

    Through the client's request API, not ``CoreV1Api``: that class builds a pydantic validator for each of
    its ~400 methods when first imported, about 1 s of CPU at every start of the virtual kubelet.
    """
    answer: dict[str, Any] = json_body(request(api_client, method, path, path_params=path_params, body=body,
                                               content_type="application/json" if body is not None else None,
                                               timeout=timeout))
    return answer


def describe(err: BaseException) -> str:
    """One line: ``409 Conflict: ...``, or the error's type and first line when the server did not answer."""
    return _describe(err).summary
