"""Failed API calls in one line, and the small questions controllers ask of a call's outcome.

The official client's ``ApiException`` prints headers and bodies over several lines; controllers want
``500 InternalError: Internal error occurred`` and, for 429, how long the server asked them to wait.
Raw answers (``_preload_content=False``) are read here too, always to the end, so their connection goes
back to the pool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CallFailure",
    "ThrottledTimeout",
    "describe",
    "is_conflict",
    "is_not_found",
    "json_body",
    "status_of",
    "status_reason",
]


class ThrottledTimeout(TimeoutError):
    """The call's ``_request_timeout`` would pass before its turn came: not sent, its token not taken.

    Without it a call given up on by its caller (the lease lock stops waiting at its deadline) would
    still go out later, a renewal after the elector stopped leading.
    """


@dataclass(frozen=True, slots=True)
class CallFailure:
    """What went wrong with one call: an HTTP status (None if no answer), a summary, Retry-After."""

    status: int | None
    summary: str
    retry_after: float | None = None
    reason: str = ""


def _status_body(body: Any) -> dict[str, Any]:
    if isinstance(body, bytes | bytearray):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str) or not body.startswith("{"):
        return {}
    try:
        doc = json.loads(body)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    value = headers.get("Retry-After") if hasattr(headers, "get") else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def status_reason(status: dict[str, Any]) -> str:
    """``410 Expired: too old resource version`` from a ``Status`` object."""
    code = status.get("code")
    parts = [str(code) if code else "", str(status.get("reason") or "")]
    head = " ".join(p for p in parts if p)
    message = str(status.get("message") or "")
    return f"{head}: {message}" if head and message else head or message or "unknown error"


def describe(exc: BaseException) -> CallFailure:
    """Summarise ``exc`` (an ``ApiException``, a urllib3 or socket error, a bad response) on one line."""
    from kubernetes.client.exceptions import ApiException  # slow import (~0.5 s): on first use, never for --help

    if isinstance(exc, ApiException):
        status = int(exc.status) if exc.status else None
        doc = _status_body(exc.body)
        if doc.get("kind") == "Status":
            summary = status_reason({"code": status, **{k: doc.get(k) for k in ("reason", "message")}})
        else:
            summary = f"{status or ''} {exc.reason or ''}".strip() or "unknown error"
        return CallFailure(status, summary, _retry_after(exc.headers), str(doc.get("reason") or ""))
    text = str(exc).splitlines()[0] if str(exc) else ""
    summary = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return CallFailure(None, summary)


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of an ``ApiException``; None when the server did not answer."""
    status = getattr(exc, "status", None)
    return int(status) if isinstance(status, int) and status else None


def is_not_found(exc: BaseException) -> bool:
    """The object is gone (404): a delete that raced another, or a cache that is behind."""
    return status_of(exc) == 404


def is_conflict(exc: BaseException) -> bool:
    """Someone else wrote first (409, stale resourceVersion or the name is taken): re-read and retry."""
    return status_of(exc) == 409


def json_body(resp: Any) -> dict[str, Any]:
    """The JSON object of a raw (``_preload_content=False``) answer, read to the end."""
    doc = json.loads(resp.data)
    if not isinstance(doc, dict):
        raise ValueError("the API server answered with something that is not an object")
    return doc
