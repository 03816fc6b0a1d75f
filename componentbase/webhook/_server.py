"""``WebhookServer``: admission and conversion webhooks over HTTPS, on the serving stack.

The serving package's ``Server`` takes any ``Request -> Response`` function, so the webhooks need no server of
their own: they get its reactor (slow clients cost no thread, TLS handshakes off the workers), its limits
(``max_in_flight``, timeouts) and its shutdown (requests in flight finish). The webhook server adds routes by
path, the certificate watcher's context and controller-runtime's metrics.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar, overload

from componentbase.metrics import Metrics
from componentbase.serving import Request, Response, Server, ServerLimits
from componentbase.webhook._admission import Denied, Handler, answer_admission
from componentbase.webhook._certwatcher import CertWatcher, cert_paths
from componentbase.webhook._conversion import Conversion, answer_conversion
from componentbase.webhook._metrics import WebhookMetrics
from componentbase.webhook._options import WebhookOptions

__all__ = ["DEFAULT_CERT_DIR", "DEFAULT_PORT", "WebhookServer", "mutate_path", "validate_path"]

log = logging.getLogger("componentbase.webhook")

#: controller-runtime's defaults: port 9443, certificates in ``$TMPDIR/k8s-webhook-server/serving-certs``.
DEFAULT_PORT = 9443
DEFAULT_CERT_DIR = os.path.join(tempfile.gettempdir(), "k8s-webhook-server", "serving-certs")
#: The largest review read; controller-runtime's limit (an object and its old version, up to 3 MiB each).
MAX_REQUEST_BYTES = 7 * 1024 * 1024
CONVERT_PATH = "/convert"

H = TypeVar("H", bound=Handler)


def _gvk_path(prefix: str, api_version: str, kind: str) -> str:
    group, _, version = api_version.rpartition("/")
    return f"/{prefix}-{group.replace('.', '-')}-{version}-{kind.lower()}"


def mutate_path(api_version: str, kind: str) -> str:
    """controller-runtime's path of a defaulting webhook: ``/mutate-apps-v1-deployment``, ``/mutate--v1-pod``."""
    return _gvk_path("mutate", api_version, kind)


def validate_path(api_version: str, kind: str) -> str:
    """controller-runtime's path of a validating webhook: ``/validate-example-com-v1-widget``."""
    return _gvk_path("validate", api_version, kind)


class _Route:
    """One path: how it answers a request body, and its metrics."""

    def __init__(self, path: str, serve: Callable[[Request], tuple[int, bytes]], metrics: WebhookMetrics) -> None:
        self.path = path
        self.serve = serve
        self.latency, self.in_flight, self._requests = metrics.path(path)
        self._by_code: dict[int, Any] = {}

    def counted(self, code: int) -> None:
        if self._requests is None:
            return
        child = self._by_code.get(code)
        if child is None:
            child = self._by_code[code] = self._requests.labels(self.path, str(code))
        child.inc()


class WebhookServer:
    """Admission webhooks for any kind and CRD conversions, served over HTTPS from ``cert_dir``.

    ``@server.mutate("apps/v1", "Deployment")`` and ``@server.validate(...)`` register handlers of an
    ``AdmissionRequest`` at controller-runtime's paths (or ``path=``); ``server.conversion(group, kind,
    hub=...)`` the conversions of a CRD, served at ``/convert``. ``cert_dir`` holds ``tls.crt`` and
    ``tls.key`` (cert-manager's names), reloaded as they rotate (every ``poll_interval`` seconds). Port 0
    picks a free one (see ``port``). ``metrics`` is the component's ``Metrics`` (a fresh one by default).

    A ``Manager`` starts it before its caches (a conversion webhook must answer the caches' first list) on
    every replica, leader or not (``needs_leader`` is False), and stops it after everything else.
    """

    needs_leader = False
    name = "webhook-server"

    def __init__(self, cert_dir: str = DEFAULT_CERT_DIR, *, port: int = DEFAULT_PORT, host: str = "",
                 cert_name: str = "tls.crt", key_name: str = "tls.key", metrics: Any = None,
                 poll_interval: float = 1.0, shutdown_timeout: float = 5.0) -> None:
        if metrics is None:
            metrics = Metrics(process_metrics=False)
        self.cert_dir = cert_dir
        self.cert_file, self.key_file = cert_paths(cert_dir, cert_name, key_name)
        self.host = host or "0.0.0.0"
        self.requested_port = port
        self.metrics = metrics
        self.poll_interval = poll_interval
        self.shutdown_timeout = shutdown_timeout
        self._series = WebhookMetrics.of(metrics)
        self._routes: dict[str, _Route] = {}
        self._conversions: dict[tuple[str, str], Conversion] = {}
        self._server: Server | None = None
        self._watcher: CertWatcher | None = None

    @classmethod
    def from_options(cls, options: WebhookOptions, metrics: Any = None) -> WebhookServer:
        """The server ``--webhook-*`` flags describe, its metrics in ``metrics`` (the component's)."""
        return cls(options.cert_dir, port=options.port, host=options.bind_address, cert_name=options.cert_name,
                   key_name=options.key_name, metrics=metrics)

    # --- registering -----------------------------------------------------------------------------------

    def register(self, path: str, serve: Callable[[Request], tuple[int, bytes]]) -> None:
        """Serve ``path`` with ``serve(request) -> (status, JSON body)``; a path is registered once."""
        if not path.startswith("/"):
            raise ValueError(f"webhook path {path!r} must start with /")
        if path in self._routes:
            raise ValueError(f"can't register duplicate path: {path}")
        self._routes[path] = _Route(path, serve, self._series)
        log.info("webhook: registering webhook path=%s", path)

    def _admission(self, mutating: bool, api_version: str, kind: str, handler: Handler | None,
                   path: str | None) -> Any:
        route = path or (mutate_path if mutating else validate_path)(api_version, kind)
        group, _, version = api_version.rpartition("/")

        def add(func: Handler) -> Handler:
            checked = _for_kind(func, group, version, kind)

            def serve(request: Request) -> tuple[int, bytes]:
                return 200, answer_admission(request.body, request.headers.get("Content-Type"), checked, mutating,
                                             route)

            self.register(route, serve)
            return func

        return add if handler is None else add(handler)

    @overload
    def mutate(self, api_version: str, kind: str, handler: None = None, *, path: str | None = None
               ) -> Callable[[H], H]: ...
    @overload
    def mutate(self, api_version: str, kind: str, handler: H, *, path: str | None = None) -> H: ...

    def mutate(self, api_version: str, kind: str, handler: Handler | None = None, *, path: str | None = None) -> Any:
        """A mutating (defaulting) handler of ``kind``; as a decorator without ``handler``. It changes
        ``request.object`` in place or returns the new object; the library sends the JSON patch."""
        return self._admission(True, api_version, kind, handler, path)

    @overload
    def validate(self, api_version: str, kind: str, handler: None = None, *, path: str | None = None
                 ) -> Callable[[H], H]: ...
    @overload
    def validate(self, api_version: str, kind: str, handler: H, *, path: str | None = None) -> H: ...

    def validate(self, api_version: str, kind: str, handler: Handler | None = None, *, path: str | None = None
                 ) -> Any:
        """A validating handler of ``kind``: it returns to allow, raises ``Denied`` to refuse."""
        return self._admission(False, api_version, kind, handler, path)

    def conversion(self, group: str, kind: str, *, hub: str) -> Conversion:
        """The conversions of ``kind`` of ``group`` through ``hub``; add each other version with ``.spoke``."""
        if (group, kind) in self._conversions:
            raise ValueError(f"a conversion of {kind} of group {group!r} is already registered")
        conversion = self._conversions[(group, kind)] = Conversion(group, kind, hub)
        if CONVERT_PATH not in self._routes:
            self.register(CONVERT_PATH, lambda r: answer_conversion(r.body, self._conversions, CONVERT_PATH))
        return conversion

    @property
    def paths(self) -> list[str]:
        """The registered paths; a server with none has nothing to serve, and a Manager does not start it."""
        return sorted(self._routes)

    # --- serving ---------------------------------------------------------------------------------------

    def _app(self, request: Request) -> Response:
        route = self._routes.get(request.path)
        if route is None:
            return Response(404, b"404 page not found\n")
        start = time.perf_counter()
        if route.in_flight is not None:
            route.in_flight.inc()
        try:
            status, body = route.serve(request)
        finally:
            if route.in_flight is not None:
                route.in_flight.dec()
        if route.latency is not None:
            route.latency.observe(time.perf_counter() - start)
        route.counted(status)
        return Response(status, body, "application/json")

    def start(self) -> WebhookServer:
        """Load the certificate and serve in threads; ``CertificateError``, or ``OSError`` saying
        ``listen tcp HOST:PORT: bind: address already in use`` as Go would."""
        if self._server is not None:
            raise RuntimeError("webhook server already started")
        watcher = CertWatcher(self.cert_file, self.key_file, self.poll_interval)
        limits = ServerLimits(max_body_bytes=MAX_REQUEST_BYTES)
        server = Server(self.host, self.requested_port, watcher.front, self._app, self.shutdown_timeout,
                        limits=limits)
        try:
            server.start()
        except OSError as err:
            why = (err.strerror or str(err)).lower()
            raise OSError(f"listen tcp {self.host}:{self.requested_port}: bind: {why}") from None
        self._server, self._watcher = server, watcher
        watcher.start()
        log.info("webhook: serving webhooks on %s, certificate %s", server.address, self.cert_file)
        return self

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("webhook server not started")
        return self._server.port

    @property
    def certificates(self) -> CertWatcher:
        """The certificate watcher (``check()`` reloads now); RuntimeError before ``start``."""
        if self._watcher is None:
            raise RuntimeError("webhook server not started")
        return self._watcher

    def stop(self) -> None:
        """Stop serving: the port is released at once, reviews in flight finish (``shutdown_timeout``)."""
        server, watcher, self._server, self._watcher = self._server, self._watcher, None, None
        if watcher is not None:
            watcher.stop()
        if server is not None:
            server.stop()

    def run(self, stop: threading.Event) -> None:
        """A runnable: serve until ``stop`` is set."""
        self.start()
        try:
            stop.wait()
        finally:
            self.stop()


def _for_kind(func: Handler, group: str, version: str, kind: str) -> Handler:
    """``func``, called only for requests of its kind: a configuration sending another kind is a 400."""

    def check(req: Any) -> Any:
        got = req.kind
        if (got.get("group", ""), got.get("version", ""), got.get("kind", "")) != (group, version, kind):
            api = f"{got.get('group')}/{got.get('version')}".lstrip("/")
            raise Denied(f"this webhook handles {f'{group}/{version}'.lstrip('/')} {kind}, not {api} "
                         f"{got.get('kind')}", reason="BadRequest", code=400)
        return func(req)

    return check
