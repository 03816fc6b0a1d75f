"""Failed API calls in one line, and the questions controllers ask of a call's outcome.

The official client's ``ApiException`` prints headers and bodies over several lines; controllers want
``500 InternalError: Internal error occurred`` and, for 429, how long the server asked them to wait.
The ``is_*`` questions answer as apimachinery's ``errors.IsXxx`` do: by the ``Status`` reason the
server gave, or by the HTTP code when the reason is missing or unknown (so a 409 ``AlreadyExists`` is
not a conflict). They also take a ``Status`` dict, as a watch's ERROR event carries. Raw answers
(``_preload_content=False``) are read here too, always to the end, so their connection goes back to
the pool.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from componentbase.client._json import decode_json
from componentbase.util import Backoff, retry_on_error

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_RETRY",
    "CallFailure",
    "ThrottledTimeout",
    "describe",
    "is_already_exists",
    "is_bad_request",
    "is_conflict",
    "is_connection_error",
    "is_forbidden",
    "is_gone",
    "is_internal_error",
    "is_invalid",
    "is_not_found",
    "is_resource_expired",
    "is_server_timeout",
    "is_service_unavailable",
    "is_timeout",
    "is_too_large_resource_version",
    "is_too_many_requests",
    "is_transient",
    "is_unauthorized",
    "json_body",
    "reason_of",
    "retry_on_conflict",
    "status_of",
    "status_reason",
    "suggests_client_delay",
]

T = TypeVar("T")

#: client-go's ``retry.DefaultRetry``: 5 tries 10ms apart (jittered 10%), for conflicts.
DEFAULT_RETRY = Backoff(duration=0.01, factor=1.0, jitter=0.1, steps=5, cap=0.0)
#: client-go's ``retry.DefaultBackoff``: 4 tries at 10ms, 50ms, 250ms, for servers that may be down.
DEFAULT_BACKOFF = Backoff(duration=0.01, factor=5.0, jitter=0.1, steps=4, cap=0.0)

#: The reasons apimachinery knows; a code alone classifies only errors without one of these.
_KNOWN_REASONS = frozenset({
    "Unauthorized", "Forbidden", "NotFound", "AlreadyExists", "Conflict", "Gone", "Invalid", "ServerTimeout",
    "StoreReadError", "Timeout", "TooManyRequests", "BadRequest", "MethodNotAllowed", "NotAcceptable",
    "RequestEntityTooLarge", "UnsupportedMediaType", "InternalError", "Expired", "ServiceUnavailable",
})

Failed = BaseException | Mapping[str, Any]


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


def _status(err: Failed) -> tuple[dict[str, Any], int | None]:
    """The ``Status`` the server sent (empty if none) and the HTTP code."""
    if isinstance(err, Mapping):
        code = err.get("code")
        return dict(err), code if isinstance(code, int) and code else None
    doc = _status_body(getattr(err, "body", None))
    return (doc if doc.get("kind") == "Status" else {}), status_of(err)


def reason_of(err: Failed) -> str:
    """The ``Status`` reason of a failed call (``Conflict``, ``Expired``...); "" when the server gave none."""
    return str(_status(err)[0].get("reason") or "")


def _is(err: Failed, reason: str, code: int | None) -> bool:
    """apimachinery's rule: the reason decides; the code only when the reason is missing or unknown."""
    doc, status = _status(err)
    given = str(doc.get("reason") or "")
    if given == reason:
        return True
    return code is not None and given not in _KNOWN_REASONS and status == code


def is_not_found(err: Failed) -> bool:
    """The object (or the path) is not there (404 ``NotFound``)."""
    return _is(err, "NotFound", 404)


def is_already_exists(err: Failed) -> bool:
    """A create found the name taken (409 ``AlreadyExists``)."""
    return _is(err, "AlreadyExists", None)


def is_conflict(err: Failed) -> bool:
    """Someone wrote the object since it was read (409 ``Conflict``): read it again and retry."""
    return _is(err, "Conflict", 409)


def is_gone(err: Failed) -> bool:
    """The server no longer has what was asked for (410 ``Gone``)."""
    return _is(err, "Gone", 410)


def is_resource_expired(err: Failed) -> bool:
    """A resourceVersion or continue token too old for the server (410 ``Expired``): list afresh."""
    return _is(err, "Expired", None)


def is_too_large_resource_version(err: Failed) -> bool:
    """The resourceVersion asked for is ahead of the server's (a ``ResourceVersionTooLarge`` cause, as client-go's
    ``IsTooLargeResourceVersion``): the server restarted or is behind; list afresh."""
    doc = _status(err)[0]
    causes = (doc.get("details") or {}).get("causes") or ()
    if any(isinstance(c, Mapping) and c.get("reason") == "ResourceVersionTooLarge" for c in causes):
        return True
    return "Too large resource version" in str(doc.get("message") or "")


def is_too_many_requests(err: Failed) -> bool:
    """The server asks the client to slow down (429 ``TooManyRequests``); see ``suggests_client_delay``."""
    return _is(err, "TooManyRequests", 429)


def is_server_timeout(err: Failed) -> bool:
    """The server could not finish in time and asks for a retry (``ServerTimeout``)."""
    return _is(err, "ServerTimeout", None)


def is_timeout(err: Failed) -> bool:
    """The request timed out on the server (504 ``Timeout``)."""
    return _is(err, "Timeout", 504)


def is_internal_error(err: Failed) -> bool:
    """The server failed (500 ``InternalError``)."""
    return _is(err, "InternalError", 500)


def is_service_unavailable(err: Failed) -> bool:
    """The server cannot serve now (503 ``ServiceUnavailable``)."""
    return _is(err, "ServiceUnavailable", 503)


def is_forbidden(err: Failed) -> bool:
    """The user may not do this (403 ``Forbidden``): an RBAC rule is missing."""
    return _is(err, "Forbidden", 403)


def is_unauthorized(err: Failed) -> bool:
    """The credentials were refused (401 ``Unauthorized``)."""
    return _is(err, "Unauthorized", 401)


def is_invalid(err: Failed) -> bool:
    """The object failed validation (422 ``Invalid``): retrying the same body cannot help."""
    return _is(err, "Invalid", 422)


def is_bad_request(err: Failed) -> bool:
    """The request itself is malformed (400 ``BadRequest``)."""
    return _is(err, "BadRequest", 400)


def is_connection_error(err: Failed) -> bool:
    """No answer came: refused, reset, timed out or cut short (socket, ``http.client`` and urllib3 errors)."""
    if isinstance(err, Mapping) or status_of(err) is not None:
        return False
    import http.client  # with ssl and email, ~10 ms of --help otherwise: only when an error is classified

    import urllib3.exceptions  # slow import (~0.1 s): only when an error is classified, never for --help

    return isinstance(err, OSError | http.client.HTTPException | urllib3.exceptions.HTTPError)


def is_transient(err: Failed) -> bool:
    """Worth trying again later: no answer at all, 429, or a failure on the server's side (5xx)."""
    status = _status(err)[1]
    return status is None or status == 429 or status >= 500


def suggests_client_delay(err: Failed) -> float | None:
    """Seconds the server asked the client to wait before retrying, as apimachinery's ``SuggestsClientDelay``.

    From the Status' ``details.retryAfterSeconds`` (``ServerTimeout`` may ask for 0), else from a
    ``Retry-After`` header on a 429 or 5xx, as client-go's request reads it. None: no suggestion.
    """
    doc, status = _status(err)
    details = doc.get("details")
    if isinstance(details, Mapping):
        after = details.get("retryAfterSeconds")
        seconds = float(after) if isinstance(after, int | float) else 0.0
        if doc.get("reason") == "ServerTimeout" or seconds > 0:
            return max(0.0, seconds)
    if status is not None and (status == 429 or status >= 500):
        return _retry_after(getattr(err, "headers", None))
    return None


def _retry_after(headers: Any) -> float | None:
    value = headers.get("Retry-After") if headers is not None and hasattr(headers, "get") else None
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

    from componentbase.client._conflicterror import Conflict  # imports kubernetes, as the line above

    if isinstance(exc, Conflict):  # its message is already one line, an apply's several joined
        return CallFailure(409, f"409 Conflict: {exc.message}", None, "Conflict")

    if isinstance(exc, ApiException):
        doc, status = _status(exc)
        if doc:
            summary = status_reason({"code": status, **{k: doc.get(k) for k in ("reason", "message")}})
        else:
            summary = f"{status or ''} {exc.reason or ''}".strip() or "unknown error"
        return CallFailure(status, summary, suggests_client_delay(exc), str(doc.get("reason") or ""))
    text = str(exc).splitlines()[0] if str(exc) else ""
    summary = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return CallFailure(None, summary)


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of an ``ApiException``; None when the server did not answer."""
    status = getattr(exc, "status", None)
    return int(status) if isinstance(status, int) and status else None


def retry_on_conflict(fn: Callable[[], T], backoff: Backoff = DEFAULT_RETRY, stop: threading.Event | None = None) -> T:
    """``fn()`` (read, modify, write) again while it fails with a conflict, as client-go's ``RetryOnConflict``."""
    return retry_on_error(backoff, is_conflict, fn, stop)


def json_body(resp: Any) -> dict[str, Any]:
    """The JSON object of a raw (``_preload_content=False``) answer, read to the end."""
    doc = decode_json(resp.data)
    if not isinstance(doc, dict):
        raise ValueError("the API server answered with something that is not an object")
    return doc
