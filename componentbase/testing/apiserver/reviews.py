"""TokenReview and SubjectAccessReview: the delegated authn/authz endpoints components call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._wire import Reply, decode_object
from .auth import Attributes, Authorizer, User
from .resources import Resource
from .store import encode

__all__ = ["access_review", "token_review"]


def _answer(res: Resource, review: dict[str, Any], status: dict[str, Any]) -> Reply:
    obj = {
        "kind": res.kind,
        "apiVersion": res.group_version,
        "metadata": review.get("metadata") or {},
        "spec": review.get("spec") or {},
        "status": status,
    }
    return Reply(201, encode(obj))


def token_review(res: Resource, body: bytes, tokens: Mapping[str, User]) -> Reply:
    review = decode_object(body)
    spec = review.get("spec") or {}
    user = tokens.get(str(spec.get("token") or ""))
    status: dict[str, Any]
    if user is None:
        status = {"authenticated": False, "error": "invalid bearer token"}
    else:
        status = {"authenticated": True, "user": user.to_user_info()}
        if spec.get("audiences"):
            status["audiences"] = spec["audiences"]
    return _answer(res, review, status)


def access_review(res: Resource, body: bytes, authorizer: Authorizer) -> Reply:
    review = decode_object(body)
    spec = review.get("spec") or {}
    user = User(str(spec.get("user") or ""), str(spec.get("uid") or ""), tuple(spec.get("groups") or ()))
    ra = spec.get("resourceAttributes")
    nra = spec.get("nonResourceAttributes")
    if isinstance(ra, dict):
        attrs = Attributes(
            verb=str(ra.get("verb") or ""),
            resource=str(ra.get("resource") or ""),
            subresource=str(ra.get("subresource") or ""),
            group=str(ra.get("group") or ""),
            namespace=str(ra.get("namespace") or ""),
            name=str(ra.get("name") or ""),
        )
    elif isinstance(nra, dict):
        attrs = Attributes(verb=str(nra.get("verb") or ""), path=str(nra.get("path") or ""))
    else:
        return _answer(res, review, {"allowed": False, "evaluationError":
                                     "spec.resourceAttributes or spec.nonResourceAttributes is required"})
    allowed, reason = authorizer.decide(user, attrs)
    status: dict[str, Any] = {"allowed": allowed, "reason": reason}
    if not allowed:
        status["denied"] = True
    return _answer(res, review, status)
