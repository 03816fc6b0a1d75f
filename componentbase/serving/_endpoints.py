"""What a component serves: health, ``/configz``, ``/version``, ``/metrics``, behind delegated auth.

Every request goes: always-allowed path? serve. Else authenticate (a verified client certificate, else a
bearer token reviewed by the API server): no credentials or a bad token is 401. Then authorize ``get`` on
the path: denied is 403. A failure to ask the API server refuses the request (401 or 403), never lets it
through. Without delegation configured nothing but the always-allowed paths is served (403).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence

import attrs

from componentbase.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from componentbase.metrics import Metrics
from componentbase.serving import _healthz as healthz
from componentbase.serving import configz
from componentbase.serving._authn import AuthenticationInfo
from componentbase.serving._authz import Authorizer
from componentbase.serving._delegation import (
    ANONYMOUS,
    DelegationError,
    UserInfo,
)
from componentbase.serving._redact import redact
from componentbase.serving._server import (
    Request,
    Response,
)
from componentbase.util import version

__all__ = ["Endpoints", "version_json"]

log = logging.getLogger("componentbase.serving")

JSON = "application/json"
HEALTH_KINDS = ("healthz", "livez", "readyz")


def _status(code: int, reason: str, message: str) -> Response:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "details": {}, "code": code}
    return Response(code, json.dumps(body).encode() + b"\n", JSON)


UNAUTHORIZED = _status(401, "Unauthorized", "Unauthorized")
#: Everything here is read-only.
METHOD_NOT_ALLOWED = Response(405, b"405: Method Not Allowed\n", headers={"Allow": "GET, HEAD"})


def _forbidden(user: UserInfo, path: str, reason: str = "") -> Response:
    message = f'forbidden: User "{user.name}" cannot get path "{path}"' + (f": {reason}" if reason else "")
    return _status(403, "Forbidden", message)


def version_json(info: version.Info) -> bytes:
    """``/version``: upstream's keys, with ``pythonVersion`` where Go has ``goVersion``."""
    doc = {"major": info.major, "minor": info.minor, "gitVersion": info.git_version, "gitCommit": info.git_commit,
           "gitTreeState": info.git_tree_state, "buildDate": info.build_date,
           "pythonVersion": info.python_version, "compiler": info.compiler, "platform": info.platform}
    return (json.dumps(doc, indent=2) + "\n").encode()


@attrs.define(kw_only=True)
class Endpoints:
    """The component's request handler (an ``App`` for ``SecureServer``)."""

    authentication: AuthenticationInfo | None
    authorization: Authorizer | None
    #: Checks of ``/healthz`` and ``/livez``; ``/readyz`` has these plus ``readyz_checks``.
    checks: Sequence[healthz.HealthChecker] = (healthz.PING,)
    readyz_checks: Sequence[healthz.HealthChecker] = ()
    configz: configz.Registry = attrs.field(factory=configz.default_registry)
    metrics: Metrics | None = None
    version: version.Info = attrs.field(factory=version.get)
    #: How long a rendered ``/configz`` is reused: rendering a real config costs more than serving it.
    configz_max_age: float = 1.0
    _version_body: bytes = attrs.field(init=False, default=b"")
    _configz_body: tuple[float, bytes] = attrs.field(init=False, default=(0.0, b""))

    def __attrs_post_init__(self) -> None:
        self._version_body = version_json(self.version)

    def __call__(self, req: Request) -> Response:
        authz = self.authorization
        if authz is None or not authz.path_always_allowed(req.path):
            refused = self._refuse(req)
            if refused is not None:
                return refused
        if req.method not in ("GET", "HEAD"):
            return METHOD_NOT_ALLOWED
        return self._serve(req)

    def _refuse(self, req: Request) -> Response | None:
        """401/403 unless the caller may ``get`` the path."""
        authn, authz = self.authentication, self.authorization
        if authn is None or not authn.configured or authz is None:
            return _forbidden(ANONYMOUS, req.path)
        user = authn.user_from_certificate(req.peercert()) if authn.client_ca else None
        if user is None:
            scheme, _, token = (req.headers.get("Authorization") or "").partition(" ")
            token = token.strip()
            if scheme.lower() != "bearer" or not token or authn.token is None:
                return UNAUTHORIZED
            try:
                user = authn.token.authenticate(token)
            except DelegationError as err:
                log.warning("Unable to authenticate the request: %s", err)
                return UNAUTHORIZED
            if user is None:
                return UNAUTHORIZED
        try:
            decision = authz.authorize(user, "get", req.path)
        except DelegationError as err:
            log.warning("Unable to authorize %s for %s: %s", req.path, user.name, err)
            return _forbidden(user, req.path, "authorization check failed")
        return None if decision.allowed else _forbidden(user, req.path, decision.reason)

    def _configz(self) -> bytes:
        """The redacted document, rendered at most once per ``configz_max_age`` (a race renders twice)."""
        now = time.monotonic()
        rendered_at, body = self._configz_body
        if not body or now - rendered_at >= self.configz_max_age:
            body = self.configz.render(redact=redact)
            self._configz_body = (now, body)
        return body

    def _serve(self, req: Request) -> Response:
        path = req.path
        kind, _, name = path.lstrip("/").partition("/")
        if kind in HEALTH_KINDS:
            checks = [*self.checks, *self.readyz_checks] if kind == "readyz" else list(self.checks)
            if not name:
                code, text = healthz.check_root(kind, checks, req.query)
                return Response(code, text.encode())
            found = healthz.check_one(checks, name)
            if found is not None:
                return Response(found[0], found[1].encode())
        elif path == "/configz":
            return Response(200, self._configz(), JSON)
        elif path == "/version":
            return Response(200, self._version_body, JSON)
        elif path == "/metrics" and self.metrics is not None:
            return Response(200, self.metrics.render(), METRICS_CONTENT_TYPE)
        return Response(404, b"404 page not found\n")
