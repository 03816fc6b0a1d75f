"""Errors as kube-apiserver reports them: a ``Status`` object plus an HTTP code."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .resources import Resource

__all__ = ["ApiError", "status_body"]


def status_body(
    code: int, reason: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success" if code < 300 else "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:
        body["details"] = details
    if not message:
        del body["message"]
    if not reason:
        del body["reason"]
    return body


class ApiError(Exception):
    """Raised anywhere in request handling; the HTTP layer turns it into a Status reply."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        return status_body(self.code, self.reason, self.message, self.details)

    @classmethod
    def not_found(cls, res: Resource, name: str) -> ApiError:
        return cls(404, "NotFound", f'{res.key} "{name}" not found', _details(res, name))

    @classmethod
    def already_exists(cls, res: Resource, name: str) -> ApiError:
        return cls(409, "AlreadyExists", f'{res.key} "{name}" already exists', _details(res, name))

    @classmethod
    def conflict(cls, res: Resource, name: str, why: str) -> ApiError:
        message = f'Operation cannot be fulfilled on {res.key} "{name}": {why}'
        return cls(409, "Conflict", message, _details(res, name))

    @classmethod
    def modified(cls, res: Resource, name: str) -> ApiError:
        why = "the object has been modified; please apply your changes to the latest version and try again"
        return cls.conflict(res, name, why)

    @classmethod
    def invalid(cls, res: Resource, name: str, field: str, why: str) -> ApiError:
        return cls.invalid_fields(res.group, res.kind, name, [("FieldValueRequired", field, why)])

    @classmethod
    def invalid_fields(cls, group: str, kind: str, name: str, causes: Sequence[tuple[str, str, str]]) -> ApiError:
        """kube's ``NewInvalid``: one cause per ``(reason, field, message)``, the message naming the
        qualified kind (``Lease.coordination.k8s.io``) and aggregating the causes as its ErrorList does."""
        details: dict[str, Any] = {"name": name, "group": group, "kind": kind,
                                   "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes]}
        for key in ("name", "group"):
            if not details[key]:
                del details[key]
        lines = list(dict.fromkeys(f"{f}: {m}" if f else m for _, f, m in causes))
        why = lines[0] if len(lines) == 1 else "[" + ", ".join(lines) + "]"
        qualified = f"{kind}.{group}" if group else kind
        return cls(422, "Invalid", f'{qualified} "{name}" is invalid: {why}', details)

    @classmethod
    def bad_request(cls, message: str) -> ApiError:
        return cls(400, "BadRequest", message)

    @classmethod
    def path_not_found(cls) -> ApiError:
        return cls(404, "NotFound", "the server could not find the requested resource", {})

    @classmethod
    def method_not_allowed(cls) -> ApiError:
        message = "the server does not allow this method on the requested resource"
        return cls(405, "MethodNotAllowed", message, {})


def _details(res: Resource, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name}
    if res.group:
        details["group"] = res.group
    details["kind"] = res.plural
    return details
