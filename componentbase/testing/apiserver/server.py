"""The HTTP side: one thread per connection, HTTP/1.1 keep-alive, chunked watches, faults, auth."""

from __future__ import annotations

import select
import socket
import ssl
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ._control import FAULTS_PATH, apply_faults, control, is_control
from ._deadlines import IDLE_TIMEOUT, HeadDeadlines, wait_for_request
from ._media import render, request_body, watch_metadata, watch_rows
from .admission._webhooks import with_warnings
from .apimachinery.errors import ApiError
from .apimachinery.resources import Registry
from .auth import Authorizer, User
from .auth._authn import Authenticator, authorize
from .auth._impersonate import impersonated
from .auth._rbac import Decider
from .auth.reviews import REVIEWS, answer_review
from .faults import Decision, Faults
from .kinds._builtin import builtin_resources
from .kinds.discovery import Discovery
from .proxy import _proxy
from .registry._options import options_of
from .rest import Reply, Request, Rest, selectors_of
from .routing import Route, resolve
from .storage._rv import watch_start
from .storage.store import Store, encode
from .storage.watch import DEFAULT_BOOKMARK_INTERVAL, WatchSpec, error_event, stream
from .wire._fields import check_fields
from .wire._http import HeaderError, Headers, read_headers

__all__ = ["FAULTS_PATH", "LoopbackHTTPServer"]

_PHRASES = {s.value: s.phrase for s in HTTPStatus}
_STREAM_HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\nCache-Control: no-cache, private\r\n\r\n")


class LoopbackHTTPServer(ThreadingHTTPServer):
    """Owns the store and the policies; tracks connections so ``close`` can hang up on all of them."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        store: Store,
        faults: Faults,
        tokens: Mapping[str, User] | None = None,
        authorizer: Decider | None = None,
        enforce_authorization: bool = False,
        bookmark_interval: float = DEFAULT_BOOKMARK_INTERVAL,
        registry: Registry | None = None,
        garbage_collection: bool = True,
        tls: ssl.SSLContext | None = None,
        authenticator: Authenticator | None = None,
    ) -> None:
        super().__init__(address, _Handler)
        self.tls = tls
        self.store = store
        self.registry = registry if registry is not None else Registry(builtin_resources())
        self.rest = Rest(store, self.registry, garbage_collection=garbage_collection)
        self.discovery = Discovery(self.registry, self.address)
        self.faults = faults
        self.tokens = tokens
        self.authenticator = authenticator or Authenticator(tokens or {}, enabled=tokens is not None)
        self.authorizer: Decider = authorizer or Authorizer()
        self.enforce_authorization = enforce_authorization
        self.bookmark_interval = bookmark_interval
        self._conns: set[socket.socket] = set()
        self.heads = HeadDeadlines()
        self.idle_timeout = IDLE_TIMEOUT
        self._conns_lock = threading.Lock()
        self._requests: Counter[tuple[str, str]] = Counter()
        faults.on_watch_close(self._wake_watches)

    def count(self, verb: str, resource: str) -> None:
        with self._conns_lock:
            self._requests[(verb, resource)] += 1

    def request_counts(self) -> Counter[tuple[str, str]]:
        """Requests served so far by (verb, resource), so tests can assert how many calls a client made."""
        with self._conns_lock:
            return Counter(self._requests)

    def _wake_watches(self) -> None:
        with self.store.cond:
            self.store.wake_watches()

    def get_request(self) -> tuple[Any, Any]:
        """Accept; with TLS the handshake is left to the connection's own thread (``_Handler.setup``)."""
        conn, addr = super().get_request()
        if self.tls is not None:
            conn = self.tls.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
        return conn, addr

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conns_lock:
            self._conns.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conns_lock:
            self._conns.discard(request)
        self.heads.done(request)
        super().shutdown_request(request)

    def service_actions(self) -> None:
        """Each turn of the serve loop: hang up on clients too slow to send a request head."""
        self.heads.reap()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up mid-request are routine here (drop faults, closed pools): stay quiet."""
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)

    def hang_up_all(self) -> None:
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    @property
    def address(self) -> str:
        host, port = self.server_address[:2]
        return f"{host!s}:{port}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: LoopbackHTTPServer
    headers: Headers  # type: ignore[assignment]  # read by ``read_headers``, not the email parser

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests and benchmarks make thousands of requests."""

    def setup(self) -> None:
        self.server.heads.start(self.request)  # the handshake and the first request's head are due together
        self._kept_alive = False
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()  # a failed handshake is an OSError: the server stays quiet
        super().setup()

    def handle_one_request(self) -> None:
        """A kept-alive connection waits ``idle_timeout`` for its next request, whose head is then due in time."""
        if self._kept_alive:
            if not wait_for_request(self.connection, self.server.idle_timeout):
                self.close_connection = True
                return
            self.server.heads.start(self.connection)
        self._kept_alive = True
        super().handle_one_request()

    def parse_request(self) -> bool:
        """``http.server``'s, but the headers are read by a plain loop: its email parser took a quarter of
        the server's time. HTTP/1.0 and 1.1 only; obsolete line folding is refused."""
        self.command = ""  # send_error reads it before the request line is known
        self.request_version = self.protocol_version  # no HTTP/0.9: refusals carry a status line
        self.close_connection = True
        raw: bytes = self.raw_requestline  # type: ignore[attr-defined]  # set by handle_one_request
        self.requestline = str(raw, "iso-8859-1").rstrip("\r\n")
        words = self.requestline.split()
        if len(words) != 3 or not words[2].startswith("HTTP/"):
            self.send_error(HTTPStatus.BAD_REQUEST, f"Bad request syntax ({self.requestline!r})")
            return False
        if words[2] not in ("HTTP/1.0", "HTTP/1.1"):
            self.send_error(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, f"Invalid HTTP version ({words[2]})")
            return False
        self.command, self.path, self.request_version = words
        if self.path.startswith("//"):
            self.path = "/" + self.path.lstrip("/")  # as http.server: never an authority-like path
        try:
            self.headers = read_headers(self.rfile)
        except HeaderError as err:
            self.send_error(err.status, err.message)
            return False
        finally:
            self.server.heads.done(self.connection)
        connection = self.headers.get("Connection", "").lower()
        self.close_connection = connection == "close" or (self.request_version == "HTTP/1.0"
                                                          and connection != "keep-alive")
        if self.headers.get("Expect", "").lower() == "100-continue" and self.request_version == "HTTP/1.1":
            return self.handle_expect_100()
        return True

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    # --- plumbing ------------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, code: int, body: bytes, headers: Mapping[str, str] | None = None,
              content_type: str = "application/json") -> None:
        """Headers and body in one write: with small replies that avoids Nagle/delayed-ACK stalls."""
        head = [f"HTTP/1.1 {code} {_PHRASES.get(code, '')}",
                f"Content-Type: {content_type}",
                f"Content-Length: {len(body)}",
                "Cache-Control: no-cache, private"]
        for key, value in (headers or {}).items():
            head.append(f"{key}: {value}")
        if self.close_connection:
            head.append("Connection: close")
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

    def _send_error(self, err: ApiError) -> None:
        self._send(err.code, encode(err.status()), err.headers)

    def _serve(self, method: str) -> None:
        split = urlsplit(self.path)
        path = split.path
        pairs = parse_qsl(split.query, keep_blank_values=True)
        query = dict(pairs)
        try:
            body = self._read_body()
        except (ValueError, OSError):
            self.close_connection = True
            self._send_error(ApiError.bad_request("malformed request body"))
            return
        if is_control(path):
            try:
                self._send(200, control(self.server.faults, method, path, body))
            except ApiError as err:
                self._send_error(err)
            return
        try:
            user = self._authenticate()
            if (target := _proxy.match(path)) is not None:  # pods/log, exec, ...: relayed to the kubelet
                _proxy.connect(self, user, target, method, pairs, split.query, body)
                return
            route = resolve(self.server.registry, method, path, query.get("watch") in ("true", "1"))
            self.server.count(route.verb, route.res.plural if route.res else path)
            decision = self.server.faults.decide(route.verb, route.res.plural if route.res else "", path)
            if decision is not None and not apply_faults(self, decision):
                return
            if self.server.enforce_authorization:
                creates = route.verb == "update" and route.res is not None \
                    and self.server.rest.creates_on_update(route.res, route.namespace, route.name, route.sub)
                authorize(self.server.authorizer, user, route, query, creates)
            if route.res is None:
                self._discovery(route.path)
                return
            content_type = self.headers.get("Content-Type") or "application/json"
            body, content_type = request_body(route.verb, route.res, route.sub, body, content_type)
            req = Request(route.verb, route.res, route.namespace, route.name, route.sub, query, body,
                          content_type, options_of(route.verb, pairs, body, content_type),
                          self.headers.get("User-Agent") or "", user)
            if route.verb == "watch":
                self._watch(req, decision)
                return
            warnings, req.body = check_fields(route.verb, route.res, route.sub, query, body, content_type)
            try:
                reply = render(self.headers.get("Accept") or "", req, self._dispatch(route, req, user),
                               self.server.store)
            finally:
                self.server.rest.settle()  # the lifecycle work a write caused, before it is answered
            self._send(reply.code, reply.body, with_warnings(warnings, req.warnings))
        except ApiError as err:
            self._send_error(err)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as err:  # a bug here must not kill the connection thread silently
            self._send_error(ApiError(500, "InternalError", f"Internal error occurred: {err!r}"))

    def _discovery(self, path: str) -> None:
        doc = self.server.discovery.document(path, self.headers.get("Accept") or "")
        if doc is None:
            self._send(200, b"ok")
            return
        headers = {"ETag": doc.etag, "Vary": "Accept"} if doc.etag else None
        fresh = bool(doc.etag) and doc.etag == self.headers.get("If-None-Match")
        self._send(304 if fresh else 200, b"" if fresh else doc.body, headers, doc.content_type)

    def _dispatch(self, route: Route, req: Request, user: User) -> Reply:
        rest = self.server.rest
        res = req.res
        if route.verb == "create":
            if route.sub or res.key == "bindings":  # binding, eviction, token
                req.body = rest.webhooks.create_subresource(req)
                return {"eviction": rest.evict, "token": rest.token}.get(route.sub, rest.bind)(req)
            if res.key in REVIEWS:
                server = self.server
                return answer_review(res, req.body, req.namespace, user, server.authenticator.token,
                                     server.authorizer, server.enforce_authorization)
            return rest.create(req)
        if route.verb == "get":
            return rest.get(req)
        if route.verb == "list":
            return rest.list(req, selectors_of(req.query, req.res))
        if route.verb == "update":
            return rest.update(req)
        if route.verb == "patch":
            return rest.patch(req)
        if route.verb == "delete":
            return rest.delete(req)
        return rest.delete_collection(req, selectors_of(req.query, req.res))

    # --- auth and faults -----------------------------------------------------------------------

    def _authenticate(self) -> User:
        user = self.server.authenticator.request(self.headers.get("Authorization") or "", self.connection)
        if user is None:
            raise ApiError(401, "Unauthorized", "Unauthorized")
        return impersonated(self.headers, user, self.server.authorizer, self.server.enforce_authorization)

    # --- watch ---------------------------------------------------------------------------------

    def _watch(self, req: Request, decision: Decision | None) -> None:
        try:
            since_rv, send_initial = watch_start(self.server.store, req.query)
        except ApiError as err:
            if err.code != 504:
                raise
            chunk = error_event(err.status())  # kube's errWatcher: a stream that ends with the error
            self.wfile.write(_STREAM_HEAD + b"%x\r\n%s\r\n0\r\n\r\n" % (len(chunk), chunk))
            return
        deadline = None
        timeout = req.query.get("timeoutSeconds")
        if timeout:
            try:
                deadline = time.monotonic() + float(timeout)
            except ValueError:
                raise ApiError.bad_request("timeoutSeconds must be a number") from None
        if decision is not None and decision.watch_close_after is not None:
            close_at = time.monotonic() + decision.watch_close_after
            deadline = close_at if deadline is None else min(deadline, close_at)
        query = req.query
        if req.name:
            fields = ",".join(f for f in (query.get("fieldSelector"), f"metadata.name={req.name}") if f)
            query = dict(query, fieldSelector=fields)
        accept = self.headers.get("Accept") or ""
        spec = WatchSpec(req.res, req.namespace or None, selectors_of(query, req.res), since_rv,
                         req.query.get("allowWatchBookmarks") in ("true", "1"), deadline, send_initial,
                         watch_metadata(accept))
        faults = self.server.faults
        epoch = faults.watch_epoch
        shape = watch_rows(accept, req, self.server.store)
        self.wfile.write(_STREAM_HEAD)
        try:
            for chunk in shape(stream(self.server.store, spec, lambda: faults.watch_epoch != epoch, self._gone,
                                      self.server.bookmark_interval)):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
        except ApiError:  # an object its conversion webhook fails to convert ends the watch, as kube's encoder does
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    def _gone(self) -> bool:
        """Has the client hung up? A closed socket reads as ready with zero bytes."""
        try:
            ready, _, _ = select.select([self.connection], [], [], 0)
            if ready and isinstance(self.connection, ssl.SSLSocket):
                return True  # a TLS client sends nothing during a watch but its close_notify
            return bool(ready) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True
