"""Who is asking (a client certificate, a static token or a ServiceAccount token, as kube-apiserver's
union authenticator tries them; with authentication off everybody is the admin), and may they."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..apimachinery.errors import ApiError
from ..apimachinery.user import Attributes, User
from ..routing import Route
from ._sa_tokens import ServiceAccountTokens
from ._tls import peer_user

__all__ = ["ADMIN", "ANONYMOUS", "Authenticator", "authorize", "check"]

ADMIN = User("system:admin", "", ("system:masters", "system:authenticated"))
#: Who a request without credentials is when anonymous requests are on (kube-apiserver's --anonymous-auth).
ANONYMOUS = User("system:anonymous", "", ("system:unauthenticated",))


@dataclass
class Authenticator:
    """``enabled`` False lets every request in as ``ADMIN``; otherwise a request needs a credential, or
    with ``anonymous`` one without any is ``system:anonymous`` (a wrong token is still a 401)."""

    tokens: Mapping[str, User]
    service_accounts: ServiceAccountTokens | None = None
    enabled: bool = False
    anonymous: bool = False

    def token(self, token: str) -> User | None:
        """The user a bearer token names: a static one first, then a ServiceAccount token."""
        user = self.tokens.get(token)
        if user is None and self.service_accounts is not None:
            user = self.service_accounts.authenticate(token)
        return user

    def request(self, authorization: str, conn: Any) -> User | None:
        """The requester, or None for a 401: a verified client certificate wins, then the bearer token."""
        if not self.enabled:
            return ADMIN
        user = peer_user(conn)
        if user is not None:
            return user
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return self.token(token.strip())
        return ANONYMOUS if self.anonymous else None


def _name_of(route: Route, query: Mapping[str, str]) -> str:
    """The request's object name; a list or watch selecting ``metadata.name=X`` names X, as kube's
    RequestInfo does, so a role limited by resourceNames may watch its one object."""
    if route.name or route.verb not in ("list", "watch"):
        return route.name
    for term in (query.get("fieldSelector") or "").split(","):
        key, _, value = term.partition("==") if "==" in term else term.partition("=")
        if key.strip() == "metadata.name" and value.strip():
            return value.strip()
    return ""


def authorize(authorizer: Any, user: User, route: Route, query: Mapping[str, str] | None = None,
              creates: bool = False) -> None:
    """Raise kube's 403 (``pods "p" is forbidden: User "u" cannot get resource ...``) unless allowed.

    ``creates``: an update that creates its object (a kind with AllowCreateOnUpdate), which kube's update
    handler also authorizes as a create.
    """
    res = route.res
    name = _name_of(route, query or {})
    if res is None:
        check(authorizer, user, Attributes(verb="get", path=route.path))
        return
    for verb in (route.verb, "create") if creates else (route.verb,):
        check(authorizer, user, Attributes(verb, res.plural, route.sub, res.group, route.namespace, name), res.key)


def check(authorizer: Any, user: User, attrs: Attributes, key: str = "") -> None:
    """Raise kube's 403 for ``attrs`` unless allowed; ``key`` is the resource as kube qualifies it
    (``pods``, ``deployments.apps``)."""
    allowed, reason = authorizer.decide(user, attrs)
    if allowed:
        return
    if not attrs.resource:
        raise ApiError(403, "Forbidden", f"forbidden: {reason}", {})
    target = f'{key} "{attrs.name}"' if attrs.name else key
    details: dict[str, Any] = {"name": attrs.name} if attrs.name else {}
    if attrs.group:
        details["group"] = attrs.group
    details["kind"] = attrs.resource
    raise ApiError(403, "Forbidden", f"{target} is forbidden: {reason}", details)
