"""Delegated authorization: the API server says whether a user may ``get`` a path (a ``SubjectAccessReview``).

As apiserver's ``DelegatingAuthorizationOptions``: ``--authorization-always-allow-paths`` pass without
asking (a trailing ``*`` matches a prefix), members of ``system:masters`` pass without asking (the API
server would allow them anyway), everything else is one SubjectAccessReview for the non-resource path,
cached for the authorized or unauthorized TTL. Without a client nothing else is allowed; a failure to ask
denies (fail closed) and is not cached.

A server that stands for an API object asks about that object instead (``authorize_resource``): the
kubelet asks whether the caller may ``get`` ``nodes/proxy`` of its node, so RBAC roles written for real
kubelets (``system:kubelet-api-admin``) work unchanged.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import attrs

from componentbase.cli import _flags as cliflags
from componentbase.cli._options import (
    Options,
    flag,
)
from componentbase.serving._delegation import (
    DelegationError,
    UserInfo,
    delegation_client,
    describe_error,
)
from componentbase.util._duration import Duration
from componentbase.util._ttlcache import TTLCache

__all__ = ["AuthorizationOptions", "Authorizer", "Decision", "ResourceAttributes"]

SECTION = "Authorization flags"

log = logging.getLogger("componentbase.serving")


@attrs.frozen
class Decision:
    allowed: bool
    reason: str = ""


_ALLOWED = Decision(True)


@attrs.frozen
class ResourceAttributes:
    """What a resource request asks (a SubjectAccessReview's ``resourceAttributes``)."""

    verb: str
    resource: str
    subresource: str = ""
    group: str = ""
    version: str = ""
    namespace: str = ""
    name: str = ""

    def describe(self) -> str:
        """The kubelet's wording: ``verb=get, resource=nodes, subresource=proxy``."""
        return f"verb={self.verb}, resource={self.resource}, subresource={self.subresource}"


@attrs.frozen
class _PathRequest:
    verb: str
    path: str


class Authorizer:
    """Path and group short-cuts, then SubjectAccessReviews (when there is a client), cached."""

    def __init__(self, api_client: Any, *, always_allow_paths: list[str], always_allow_groups: list[str],
                 allowed_ttl: float, denied_ttl: float, timeout: float = 10.0) -> None:
        self.api_client = api_client
        self._exact = frozenset(p for p in always_allow_paths if not p.endswith("*"))
        self._prefixes = tuple(p[:-1] for p in always_allow_paths if p.endswith("*"))
        self.always_allow_groups = frozenset(always_allow_groups)
        self.allowed_ttl = allowed_ttl
        self.denied_ttl = denied_ttl
        self.timeout = timeout
        self._cache: TTLCache[Decision] = TTLCache()

    def path_always_allowed(self, path: str) -> bool:
        return path in self._exact or any(path.startswith(p) for p in self._prefixes)

    def authorize(self, user: UserInfo, verb: str, path: str) -> Decision:
        """May ``user`` do ``verb`` on ``path``? DelegationError when the API server could not be asked."""
        return self._decide(user, path, _PathRequest(verb, path))

    def authorize_resource(self, user: UserInfo, request: ResourceAttributes, path: str) -> Decision:
        """May ``user`` do what ``request`` says? ``path`` is asked for only in the always-allowed paths."""
        return self._decide(user, path, request)

    def _decide(self, user: UserInfo, path: str, request: _PathRequest | ResourceAttributes) -> Decision:
        if self.always_allow_groups.intersection(user.groups) or self.path_always_allowed(path):
            return _ALLOWED
        if self.api_client is None:
            return Decision(False)
        key = (user, request)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        decision = self._review(user, path, request)
        self._cache.put(key, decision, self.allowed_ttl if decision.allowed else self.denied_ttl)
        return decision

    def _review(self, user: UserInfo, path: str, request: _PathRequest | ResourceAttributes) -> Decision:
        spec: dict[str, Any] = {"user": user.name, "groups": list(user.groups)}
        if isinstance(request, _PathRequest):
            spec["nonResourceAttributes"] = {"path": request.path, "verb": request.verb}
        else:
            attributes = {"verb": request.verb, "resource": request.resource, "subresource": request.subresource,
                          "group": request.group, "version": request.version, "namespace": request.namespace,
                          "name": request.name}
            spec["resourceAttributes"] = {k: v for k, v in attributes.items() if v or k == "group"}
        if user.uid:
            spec["uid"] = user.uid
        if user.extra_dict():
            spec["extra"] = user.extra_dict()
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        from componentbase.client import observe_request  # the client: not on the --help path
        from componentbase.client import request as call

        try:
            with observe_request(self.api_client, "POST") as obs:
                resp = obs.response(call(self.api_client, "POST",
                                         "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=body,
                                         timeout=self.timeout))
            status = json.loads(resp.data).get("status") or {}
        except Exception as err:
            raise DelegationError(f"SubjectAccessReview failed: {describe_error(err)}") from None
        if status.get("evaluationError") and not status.get("allowed"):
            log.warning("SubjectAccessReview for %s: %s", path, status["evaluationError"])
        return Decision(bool(status.get("allowed")) and not status.get("denied"), str(status.get("reason") or ""))


@attrs.define
class AuthorizationOptions(Options):
    """The "Authorization flags" section (apiserver's delegating authorization)."""

    kubeconfig: str = flag(
        "authorization-kubeconfig", "kubeconfig file pointing at the 'core' kubernetes server with enough rights to "
        "create subjectaccessreviews.authorization.k8s.io. This is optional. If empty, all requests not skipped "
        "by authorization are forbidden.", default="", section=SECTION)
    always_allow_paths: list[str] = flag(
        "authorization-always-allow-paths", "A list of HTTP paths to skip during authorization, i.e. these are "
        "authorized without contacting the 'core' kubernetes server.",
        factory=lambda: ["/healthz", "/readyz", "/livez"], section=SECTION)
    allowed_ttl: Duration = flag(
        "authorization-webhook-cache-authorized-ttl", "The duration to cache 'authorized' responses from the "
        "webhook authorizer.", default=Duration("10s"), section=SECTION, type=cliflags.DURATION)
    denied_ttl: Duration = flag(
        "authorization-webhook-cache-unauthorized-ttl", "The duration to cache 'unauthorized' responses from the "
        "webhook authorizer.", default=Duration("10s"), section=SECTION, type=cliflags.DURATION)
    #: Groups allowed without asking; upstream's default, since the API server allows them everything.
    always_allow_groups: list[str] = attrs.field(factory=lambda: ["system:masters"])
    #: Bounds each SubjectAccessReview (upstream's ClientTimeout).
    client_timeout: float = 10.0

    def validate(self) -> list[Exception]:
        errs = super().validate()
        for flag_name, value in (("authorization-webhook-cache-authorized-ttl", self.allowed_ttl),
                                 ("authorization-webhook-cache-unauthorized-ttl", self.denied_ttl)):
            if value < 0:
                errs.append(ValueError(f"--{flag_name}: must not be negative, got {value}"))
        for i, path in enumerate(self.always_allow_paths):
            if not path.startswith("/"):
                errs.append(ValueError(f"--authorization-always-allow-paths[{i}]: {path!r}: must start with '/'"))
            elif "*" in path[:-1]:
                errs.append(ValueError(f"--authorization-always-allow-paths[{i}]: {path!r}: "
                                       "only a trailing '*' is allowed"))
        return errs

    def apply_to(self, config: Any) -> None:
        super().apply_to(config)
        if getattr(config, "secure_serving", None) is None:
            config.authorization = None
            return
        api = delegation_client(self.kubeconfig, "authorization", self.client_timeout)
        if api is None:
            log.warning("No authorization-kubeconfig provided, so SubjectAccessReview of authorization tokens "
                        "won't work.")
        config.authorization = Authorizer(
            api, always_allow_paths=list(self.always_allow_paths), always_allow_groups=list(self.always_allow_groups),
            allowed_ttl=float(self.allowed_ttl), denied_ttl=float(self.denied_ttl), timeout=self.client_timeout)
