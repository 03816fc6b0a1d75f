"""The kubelet API a virtual kubelet serves on ``--listen-port`` (upstream ``node/api``), behind delegated auth.

``/containerLogs/{namespace}/{pod}/{container}``, ``/pods`` (the API's view of this node's pods),
``/runningpods/`` (the provider's), ``/exec`` and ``/attach/{namespace}/{pod}/{container}`` (WebSocket),
``/portForward/{namespace}/{pod}`` (SPDY, or SPDY in WebSocket: ``portforward``), ``/stats/summary``
and ``/metrics/resource`` (``statsapi``), and the health paths. Every kubelet path needs an authenticated
caller the API server authorizes, asked as the kubelet asks: the verb of the HTTP method on
``nodes/proxy`` of this node (``nodes/log``, ``nodes/stats`` or ``nodes/metrics`` under ``/logs``,
``/stats`` and ``/metrics``), so RBAC written for real kubelets (``system:kubelet-api-admin``) works
unchanged. The always-allowed paths (``/healthz``...) need nothing.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import componentbase
from componentbase.client import parse_time
from componentbase.tracing import span
from componentbase_examples.virtual_kubelet import execws, portforward, statsapi
from componentbase_examples.virtual_kubelet.provider import Provider
from componentbase_examples.virtual_kubelet.provider_types import ExecIO, LogOptions, PodNotFound, PortStream

__all__ = ["KubeletAPI", "LogOptionsError", "parse_log_options", "request_attributes"]

log = logging.getLogger("componentbase_examples.virtual_kubelet.api")

JSON = "application/json"


class LogOptionsError(ValueError):
    """A ``/containerLogs`` query parameter that does not parse, worded as upstream."""


def _one(query: Mapping[str, list[str]], name: str) -> str:
    values = query.get(name) or [""]
    return values[0]


#: Go's ``strconv.ParseBool``: exactly these spellings.
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")
#: Go's ``strconv.Atoi`` on a 64-bit platform: ASCII digits with an optional sign, within int64.
_ATOI = re.compile(r"[+-]?[0-9]+")
_INT64 = 1 << 63


def _bool(query: Mapping[str, list[str]], name: str) -> bool:
    text = _one(query, name)
    if text == "" or text in _FALSE:
        return False
    if text in _TRUE:
        return True
    raise LogOptionsError(f'could not parse "{name}": strconv.ParseBool: parsing "{text}": invalid syntax')


def _int(query: Mapping[str, list[str]], name: str, minimum: int) -> int | None:
    text = _one(query, name)
    if text == "":
        return None
    if not _ATOI.fullmatch(text):
        raise LogOptionsError(f'could not parse "{name}": strconv.Atoi: parsing "{text}": invalid syntax')
    value = int(text)
    if not -_INT64 <= value < _INT64:
        raise LogOptionsError(f'could not parse "{name}": strconv.Atoi: parsing "{text}": value out of range')
    if value < minimum:
        raise LogOptionsError(f'"{name}" is {value}: must be at least {minimum}')
    return value


def parse_log_options(query: Mapping[str, list[str]]) -> LogOptions:
    """Upstream's ``parseLogOptions``: the same parameters and checks; each message says what is wrong.

    Beyond upstream, ``sinceSeconds`` may not reach back before 1970: no log line is older, and a provider
    subtracting it from now would fail (upstream's Go arithmetic overflows silently instead).
    """
    since_time = None
    text = _one(query, "sinceTime")
    if text:
        try:
            since_time = parse_time(text)
        except ValueError:
            raise LogOptionsError(f'could not parse "sinceTime": {text!r} is not RFC 3339') from None
    since_seconds = _int(query, "sinceSeconds", 1)
    if since_seconds is not None and since_seconds > (epoch := int(time.time())):
        raise LogOptionsError(f'"sinceSeconds" is {since_seconds}: more than the {epoch} seconds since 1970')
    if since_time is not None and since_seconds is not None:
        raise LogOptionsError('both "sinceSeconds" and "sinceTime" are set')
    return LogOptions(tail=_int(query, "tailLines", 0), limit_bytes=_int(query, "limitBytes", 1),
                      timestamps=_bool(query, "timestamps"), follow=_bool(query, "follow"),
                      previous=_bool(query, "previous"), since_seconds=since_seconds, since_time=since_time)


def _text(status: int, message: str) -> Any:
    from componentbase.serving import Response

    return Response(status, (message + "\n").encode())


def _forbidden(user: str, request: componentbase.serving.ResourceAttributes) -> Any:
    """The kubelet's 403, which names the request and keeps the authorizer's reason to the log."""
    return _text(403, f"Forbidden (user={user}, {request.describe()})")


def _pod_list(items: Sequence[dict[str, Any]]) -> Any:
    from componentbase.serving import Response

    body = {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": list(items)}
    return Response(200, json.dumps(body).encode(), JSON)


#: The kubelet's verbs for HTTP methods.
_VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
#: Paths the kubelet authorizes as their own subresource of the node; everything else is ``proxy``.
_SUBRESOURCES = {"/stats": "stats", "/metrics": "metrics", "/logs": "log"}


def request_attributes(node_name: str, method: str, path: str) -> componentbase.serving.ResourceAttributes:
    """The kubelet's ``GetRequestAttributes``: what a request to this node's API asks of the node object."""
    subresource = "proxy"
    for prefix, name in _SUBRESOURCES.items():
        if path == prefix or path.startswith(prefix + "/"):
            subresource = name
    return componentbase.serving.ResourceAttributes(verb=_VERBS.get(method, ""), resource="nodes",
                                                    subresource=subresource, version="v1", name=node_name)


_READ = ("GET", "HEAD")


def _method_not_allowed(methods: Sequence[str]) -> Any:
    """go-restful's answer to a known path asked with another method, listing the ones it takes."""
    from componentbase.serving import Response

    return Response(405, b"405: Method Not Allowed\n", headers={"Allow": ", ".join(methods)})


def _route(path: str) -> tuple[Callable[[KubeletAPI, Any], Any], Sequence[str]] | None:
    """The handler of ``path`` and the methods it takes (the kubelet's routes: exec is a WebSocket GET
    here, as SPDY's POST is not served), or None for an unknown path."""
    kind, _, rest = path.lstrip("/").partition("/")
    if kind in ("healthz", "livez", "readyz"):
        return (lambda api, req: api._health(kind, rest, req.query)), _READ
    if path == "/pods":
        return (lambda api, req: _pod_list(api.pods())), _READ
    if path in ("/runningpods", "/runningpods/"):
        return (lambda api, req: _pod_list(api.provider.get_pods())), _READ
    if path in ("/stats/summary", "/stats/summary/"):
        return (lambda api, req: statsapi.stats_summary(api.provider)), _READ
    if path == "/metrics/resource":
        return (lambda api, req: statsapi.resource_metrics(api.provider)), _READ
    parts = rest.split("/")
    if kind == "portForward" and len(parts) == 2 and all(parts):
        return (lambda api, req: api._port_forward(parts[0], parts[1], req)), ("GET", "POST")
    if len(parts) != 3 or not all(parts):
        return None
    namespace, pod, container = parts
    if kind == "containerLogs":
        return (lambda api, req: api._logs(namespace, pod, container, req.query)), _READ
    if kind == "exec":
        return (lambda api, req: api._exec(namespace, pod, container, req)), ("GET",)
    if kind == "attach":
        return (lambda api, req: api._attach(namespace, pod, container, req)), ("GET",)
    return None


#: Paths whose last parts are names: a span is named by the route, not by the pod.
_TEMPLATES = {"containerLogs": "/{namespace}/{pod}/{container}", "exec": "/{namespace}/{pod}/{container}",
              "attach": "/{namespace}/{pod}/{container}", "portForward": "/{namespace}/{pod}"}


def span_name(method: str, path: str) -> str:
    """``GET /containerLogs/{namespace}/{pod}/{container}``: the method and route of a kubelet API call."""
    kind = path.lstrip("/").partition("/")[0]
    return f"{method} /{kind}{_TEMPLATES[kind]}" if kind in _TEMPLATES else f"{method} {path}"


class KubeletAPI:
    """The request handler (a ``componentbase.serving`` App) for one node."""

    def __init__(self, provider: Provider, pods: Callable[[], list[dict[str, Any]]], *, node_name: str,
                 authentication: Any, authorization: Any, checks: Sequence[Any] = (),
                 stream_idle_timeout: float = 30.0, stream_creation_timeout: float = 30.0) -> None:
        self.provider = provider
        #: ``--stream-idle-timeout``: a stream with no traffic either way this long is closed (0: never).
        self.stream_idle_timeout = stream_idle_timeout
        #: ``--stream-creation-timeout``: how long a port-forward waits for the streams it was promised.
        self.stream_creation_timeout = stream_creation_timeout
        self.node_name = node_name
        self.pods = pods
        self.authentication = authentication
        self.authorization = authorization
        self.checks = [componentbase.serving.PING, *checks]

    def __call__(self, req: Any) -> Any:
        """The answer to one request, in a span that joins the caller's trace (its ``traceparent``)."""
        with span(span_name(req.method, req.path), {"http.request.method": req.method, "url.path": req.path},
                  headers=req.headers) as current:
            response = self._answer(req)
            current.set_attribute("http.response.status_code", response.status)
            return response

    def _answer(self, req: Any) -> Any:
        path = req.path
        if self.authorization is None or not self.authorization.path_always_allowed(path):
            refused = self._refuse(req)
            if refused is not None:
                return refused
        route = _route(path)
        if route is None:
            return _text(404, "404 page not found")
        handler, methods = route
        if req.method not in methods:
            return _method_not_allowed(methods)
        return handler(self, req)

    # --- auth -----------------------------------------------------------------------------------

    def _refuse(self, req: Any) -> Any:
        """401 without a user the API server vouches for; 403 unless it authorizes what the request asks."""
        from componentbase.serving import DelegationError

        request = request_attributes(self.node_name, req.method, req.path)
        authn, authz = self.authentication, self.authorization
        if authn is None or not authn.configured or authz is None:
            return _forbidden("system:anonymous", request)
        user = authn.user_from_certificate(req.peercert()) if authn.client_ca else None
        if user is None:
            scheme, _, token = (req.headers.get("Authorization") or "").partition(" ")
            token = token.strip()
            if scheme.lower() != "bearer" or not token or authn.token is None:
                return _text(401, "Unauthorized")
            try:
                user = authn.token.authenticate(token)
            except DelegationError as err:
                log.warning("Unable to authenticate the request: %s", err)
                return _text(401, "Unauthorized")
            if user is None:
                return _text(401, "Unauthorized")
        try:
            decision = authz.authorize_resource(user, request, req.path)
        except DelegationError as err:
            log.warning("Unable to authorize %s for %s: %s", req.path, user.name, err)
            return _text(500, f"Authorization error (user={user.name}, {request.describe()})")
        if decision.allowed:
            return None
        log.log(componentbase.V(2), "Forbidden %s %s for %s: %s", req.method, req.path, user.name, decision.reason)
        return _forbidden(user.name, request)

    # --- handlers -------------------------------------------------------------------------------

    def _health(self, kind: str, name: str, query: Mapping[str, list[str]]) -> Any:
        from componentbase.serving import check_one, check_root

        if not name:
            code, text = check_root(kind, self.checks, query)
            return _text(code, text.rstrip("\n"))
        found = check_one(self.checks, name)
        return _text(found[0], found[1].rstrip("\n")) if found is not None else _text(404, "404 page not found")

    def _logs(self, namespace: str, pod: str, container: str, query: Mapping[str, list[str]]) -> Any:
        from componentbase.serving import Response

        if not self.provider.implements("get_container_logs"):
            return _text(501, "not implemented")
        try:
            opts = parse_log_options(query)
            chunks = self.provider.get_container_logs(namespace, pod, container, opts)
        except LogOptionsError as err:
            return _text(400, str(err))
        except PodNotFound as err:
            return _text(404, str(err))
        except Exception as err:
            log.error("error getting container logs of %s/%s/%s: %s", namespace, pod, container, err)
            return _text(500, f"error getting container logs?): {err}")
        return Response(200, b"", "text/plain", stream=chunks)

    def _exec(self, namespace: str, pod: str, container: str, req: Any) -> Any:
        command = list(req.query.get("command") or [])
        if not command:
            return _text(400, "you must specify at least 1 command")

        def run(io: ExecIO) -> int:
            return self.provider.run_in_container(namespace, pod, container, command, io)

        return self._stream("run_in_container", req, run, command)

    def _attach(self, namespace: str, pod: str, container: str, req: Any) -> Any:
        def run(io: ExecIO) -> int:
            return self.provider.attach_to_container(namespace, pod, container, io)

        return self._stream("attach_to_container", req, run, [])

    def _port_forward(self, namespace: str, pod: str, req: Any) -> Any:
        from componentbase.serving import Response

        if not self.provider.implements("port_forward"):
            return _text(501, "not implemented")
        headers, why, tunnelled = portforward.accept(req.headers)
        if headers is None:
            return _text(400, why)

        def forward(port: int, stream: PortStream) -> None:
            self.provider.port_forward(namespace, pod, port, stream)

        def takeover(_rfile: Any, sock: Any) -> None:
            portforward.serve(sock, tunnelled, forward, f"{namespace}/{pod}",
                              creation_timeout=self.stream_creation_timeout, idle_timeout=self.stream_idle_timeout)

        return Response(101, b"", headers=headers, takeover=takeover)

    def _stream(self, hook: str, req: Any, run: Callable[[ExecIO], int], command: list[str]) -> Any:
        """exec and attach: the WebSocket channel protocol around ``run``, idle connections closed."""
        from componentbase.serving import Response

        if not self.provider.implements(hook):
            return _text(501, "not implemented")
        flags = {name: _flag(req.query, name) for name in ("stdin", "stdout", "stderr", "tty")}
        if not (flags["stdin"] or flags["stdout"] or flags["stderr"]):
            return _text(400, "you must specify at least 1 of stdin, stdout, stderr")
        headers, why = execws.accept_headers(req.headers)
        if headers is None:
            return _text(400, why)
        protocol = headers["Sec-WebSocket-Protocol"]

        def takeover(_rfile: Any, sock: Any) -> None:
            execws.serve_exec(sock, protocol, command=command, run=run, idle_timeout=self.stream_idle_timeout,
                              **flags)

        return Response(101, b"", headers=headers, takeover=takeover)


def _flag(query: Mapping[str, list[str]], name: str) -> bool:
    return _one(query, name).lower() in ("1", "true", "t")
