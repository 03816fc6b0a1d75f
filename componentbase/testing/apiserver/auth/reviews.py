"""The review APIs: TokenReview, SubjectAccessReview (local and self), SelfSubjectRulesReview and
SelfSubjectReview, answered from the server's own authenticator and authorizer, as kube-apiserver's are.

The self reviews are what ``kubectl auth can-i`` (with ``--list``) and ``kubectl auth whoami`` ask.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..apimachinery.resources import Resource
from ..apimachinery.user import Attributes, User
from ..storage.store import encode
from ..wire._wire import Reply, decode_object

__all__ = ["REVIEWS", "access_review", "answer_review", "token_review"]

REVIEWS = frozenset({
    "tokenreviews.authentication.k8s.io", "selfsubjectreviews.authentication.k8s.io",
    "subjectaccessreviews.authorization.k8s.io", "localsubjectaccessreviews.authorization.k8s.io",
    "selfsubjectaccessreviews.authorization.k8s.io", "selfsubjectrulesreviews.authorization.k8s.io",
})
_EVERYTHING = ([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
               [{"verbs": ["*"], "nonResourceURLs": ["*"]}])


def _answer(res: Resource, review: dict[str, Any], status: dict[str, Any], spec: Any = None) -> Reply:
    obj = {
        "kind": res.kind,
        "apiVersion": res.group_version,
        "metadata": review.get("metadata") or {},
        "spec": (review.get("spec") or {}) if spec is None else spec,
        "status": status,
    }
    return Reply(201, encode(obj))


def token_review(res: Resource, body: bytes, authenticate: Callable[[str], User | None]) -> Reply:
    review = decode_object(body)
    spec = review.get("spec") or {}
    user = authenticate(str(spec.get("token") or ""))
    status: dict[str, Any]
    if user is None:
        status = {"authenticated": False, "error": "invalid bearer token"}
    else:
        status = {"authenticated": True, "user": user.to_user_info()}
        if spec.get("audiences"):
            status["audiences"] = spec["audiences"]
    return _answer(res, review, status)


def _attributes(spec: dict[str, Any], namespace: str | None = None) -> Attributes | None:
    ra = spec.get("resourceAttributes")
    nra = spec.get("nonResourceAttributes")
    if isinstance(ra, dict):
        return Attributes(
            verb=str(ra.get("verb") or ""),
            resource=str(ra.get("resource") or ""),
            subresource=str(ra.get("subresource") or ""),
            group=str(ra.get("group") or ""),
            namespace=str(ra.get("namespace") or "") if namespace is None else namespace,
            name=str(ra.get("name") or ""),
        )
    if isinstance(nra, dict):
        return Attributes(verb=str(nra.get("verb") or ""), path=str(nra.get("path") or ""))
    return None


def access_review(res: Resource, body: bytes, authorizer: Any, user: User | None = None,
                  namespace: str | None = None) -> Reply:
    """A SubjectAccessReview for ``spec``'s user; a SelfSubjectAccessReview (``user`` given) for the
    requester; a LocalSubjectAccessReview (``namespace`` given) within the namespace of its path."""
    review = decode_object(body)
    spec = review.get("spec") or {}
    if user is None:
        user = User(str(spec.get("user") or ""), str(spec.get("uid") or ""), tuple(spec.get("groups") or ()))
    attrs = _attributes(spec, namespace)
    if attrs is None:
        return _answer(res, review, {"allowed": False, "evaluationError":
                                     "spec.resourceAttributes or spec.nonResourceAttributes is required"})
    allowed, reason = getattr(authorizer, "review", authorizer.decide)(user, attrs)
    status: dict[str, Any] = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    if not allowed and not hasattr(authorizer, "review"):
        status["denied"] = True
    return _answer(res, review, status)


def _rules_review(res: Resource, body: bytes, user: User, authorizer: Any, enforced: bool) -> Reply:
    review = decode_object(body)
    namespace = str((review.get("spec") or {}).get("namespace") or "")
    errors: list[str] = []
    if not enforced or "system:masters" in user.groups:
        resource_rules, url_rules = _EVERYTHING
    else:
        rules, errors = authorizer.rules_for(user, namespace)
        resource_rules = [r for r in rules if "nonResourceURLs" not in r]
        url_rules = [r for r in rules if "nonResourceURLs" in r]
    status: dict[str, Any] = {"resourceRules": resource_rules, "nonResourceRules": url_rules,
                              "incomplete": bool(errors)}
    if errors:
        status["evaluationError"] = ", ".join(errors)
    return _answer(res, review, status)


def answer_review(res: Resource, body: bytes, namespace: str, user: User,
                  authenticate: Callable[[str], User | None], authorizer: Any, enforced: bool) -> Reply:
    """The answer to a create of one of ``REVIEWS`` (``res.key``) made by ``user``."""
    group_resource = res.key
    if group_resource.startswith("tokenreviews."):
        return token_review(res, body, authenticate)
    if group_resource.startswith("selfsubjectreviews."):
        review = decode_object(body)
        return _answer(res, review, {"userInfo": user.to_user_info()}, spec={})
    if group_resource.startswith("selfsubjectrulesreviews."):
        return _rules_review(res, body, user, authorizer, enforced)
    if group_resource.startswith("selfsubjectaccessreviews."):
        return access_review(res, body, authorizer, user)
    if group_resource.startswith("localsubjectaccessreviews."):
        return access_review(res, body, authorizer, namespace=namespace)
    return access_review(res, body, authorizer)
