"""AdmissionReview v1 in and out: what a handler sees (``AdmissionRequest``), how it denies (``Denied``), and
the review a malformed request gets, as controller-runtime's ``admission.Webhook`` answers it.

A review that cannot be read (not JSON, not an ``AdmissionReview`` of ``admission.k8s.io/v1`` or ``v1beta1``,
no ``request`` or no ``uid``, a content type other than ``application/json``) is answered 200 with an
AdmissionReview whose response disallows with code 400 and says why: kube-apiserver then reports the
webhook's message, never a traceback. A handler that raises anything but ``Denied`` is answered as
controller-runtime answers a recovered panic: disallowed, code 500, and the exception logged with its stack.
"""

from __future__ import annotations

import base64
import copy
import json
import logging
from collections.abc import Callable
from typing import Any

import attrs

from componentbase.webhook._patch import json_patch

__all__ = ["AdmissionRequest", "Denied", "Handler", "answer_admission", "errored"]

log = logging.getLogger("componentbase.webhook")

_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")


class Denied(Exception):
    """Raise in a handler to refuse the request: kube-apiserver answers ``admission webhook "NAME" denied the
    request: MESSAGE`` with ``code`` (403 by default, as controller-runtime's ``Denied``) and ``reason``."""

    def __init__(self, message: str, *, reason: str = "Forbidden", code: int = 403) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.code = code


@attrs.define
class AdmissionRequest:
    """One admission request (``AdmissionReview.request``), with kube's field names in snake case.

    ``object`` is the handler's own copy: a mutating handler changes it in place (or returns a new one),
    and the library sends the JSON patch between what came and what the handler left. ``old_object`` is
    set on UPDATE and DELETE, ``object`` is None on DELETE. ``warn(text)`` adds a warning the client shows
    (kubectl prints ``Warning: text``), allowed or denied.
    """

    uid: str
    operation: str
    kind: dict[str, str]
    resource: dict[str, str]
    name: str
    namespace: str
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None
    user_info: dict[str, Any]
    dry_run: bool
    sub_resource: str = ""
    request_kind: dict[str, str] | None = None
    request_resource: dict[str, str] | None = None
    options: dict[str, Any] | None = None
    warnings: list[str] = attrs.field(factory=list)

    def warn(self, text: str) -> None:
        """Add a warning to the answer (at most 120 characters each is kube's advice, not its rule)."""
        self.warnings.append(text)

    @classmethod
    def from_review(cls, request: dict[str, Any]) -> AdmissionRequest:
        obj, old = request.get("object"), request.get("oldObject")
        return cls(uid=str(request["uid"]), operation=str(request.get("operation") or ""),
                   kind=dict(request.get("kind") or {}), resource=dict(request.get("resource") or {}),
                   name=str(request.get("name") or ""), namespace=str(request.get("namespace") or ""),
                   object=copy.deepcopy(obj) if isinstance(obj, dict) else None,
                   old_object=old if isinstance(old, dict) else None,
                   user_info=dict(request.get("userInfo") or {}), dry_run=bool(request.get("dryRun")),
                   sub_resource=str(request.get("subResource") or ""), request_kind=request.get("requestKind"),
                   request_resource=request.get("requestResource"), options=request.get("options"))


#: A handler: the request in; a mutating one may return the changed object (or change ``request.object``).
Handler = Callable[[AdmissionRequest], "dict[str, Any] | None"]


def errored(code: int, message: str) -> dict[str, Any]:
    """controller-runtime's ``Errored``: a response that disallows with ``code`` and ``message``."""
    return {"allowed": False, "status": {"metadata": {}, "code": code, "message": message}}


def _review(api_version: str, response: dict[str, Any]) -> bytes:
    return json.dumps({"apiVersion": api_version, "kind": "AdmissionReview", "response": response},
                      separators=(",", ":")).encode()


def _decode(body: bytes, content_type: str | None) -> tuple[str, dict[str, Any]]:
    """(apiVersion, request) of a review, or ValueError saying why it is not one."""
    if not body:
        raise ValueError("request body is empty")
    if (content_type or "").split(";")[0].strip() != "application/json":
        raise ValueError(f"contentType={content_type or ''}, expected application/json")
    try:
        review = json.loads(body)
    except (ValueError, UnicodeDecodeError) as err:
        raise ValueError(f"couldn't decode the AdmissionReview: {err}") from None
    if not isinstance(review, dict):
        raise ValueError("couldn't decode the AdmissionReview: not a JSON object")
    api_version, kind = review.get("apiVersion"), review.get("kind")
    if api_version not in _VERSIONS or kind != "AdmissionReview":
        raise ValueError(f'no kind "{kind}" is registered for version "{api_version}": want an AdmissionReview '
                         f"of {' or '.join(_VERSIONS)}")
    request = review.get("request")
    if not isinstance(request, dict):
        raise ValueError("the AdmissionReview has no request")
    if not request.get("uid"):
        raise ValueError("the AdmissionReview's request has no uid")
    return str(api_version), request


def _mutation(req: AdmissionRequest, original: dict[str, Any] | None, result: Any) -> dict[str, Any]:
    changed = result if isinstance(result, dict) else req.object
    response: dict[str, Any] = {"allowed": True, "status": {"metadata": {}, "code": 200}}
    if original is None or changed is None:
        return response
    ops = json_patch(original, changed)
    if ops:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(ops, separators=(",", ":")).encode()).decode()
    return response


def answer_admission(body: bytes, content_type: str | None, handler: Handler, mutating: bool, path: str) -> bytes:
    """The AdmissionReview (JSON) answering ``body``: ``handler``'s verdict, or why the review is malformed."""
    api_version = _VERSIONS[0]
    try:
        api_version, raw = _decode(body, content_type)
    except ValueError as err:
        log.error("webhook %s: bad request: %s", path, err)
        return _review(api_version, errored(400, str(err)))
    req = AdmissionRequest.from_review(raw)
    original = raw.get("object") if mutating and isinstance(raw.get("object"), dict) else None
    try:
        result = handler(req)
        response = _mutation(req, original, result) if mutating else {
            "allowed": True, "status": {"metadata": {}, "code": 200}}
    except Denied as denied:
        response = {"allowed": False, "status": {"metadata": {}, "code": denied.code, "reason": denied.reason,
                                                 "message": denied.message}}
    except Exception as err:
        log.exception("webhook %s: the handler failed on %s %s/%s", path, req.operation, req.namespace, req.name)
        response = errored(500, f"{type(err).__name__}: {err}")
    response["uid"] = req.uid
    if req.warnings:
        response["warnings"] = list(req.warnings)
    return _review(api_version, response)
