"""A small HTTPS server: one thread per connection, HTTP/1.1 keep-alive, and a graceful stop.

The TLS handshake happens on the connection's own thread, so a slow or silent client never holds up
``accept``. ``stop`` closes the listener first (the port is free at once), hangs up idle keep-alive
connections, lets requests in flight finish within the shutdown timeout, then hangs up on the rest.
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

import attrs

__all__ = ["App", "Request", "Response", "SecureServer"]

log = logging.getLogger("componentbase.serving")

_PHRASES = {s.value: s.phrase for s in HTTPStatus}

#: How long a client may take to finish the TLS handshake, and to send a request on an idle connection.
HANDSHAKE_TIMEOUT = 10.0
IDLE_TIMEOUT = 90.0


class Headers(Protocol):
    """Request headers, looked up case-insensitively (``email.message.Message`` is one)."""

    def get(self, name: str, default: None = None) -> str | None: ...


@attrs.frozen
class Request:
    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Headers
    #: The verified client certificate (``ssl.getpeercert()`` form), read only when asked for.
    peercert: Callable[[], dict[str, Any] | None] = lambda: None


@attrs.frozen
class Response:
    """What a handler answers: status, body and headers, or a stream or a connection takeover for logs and exec."""

    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"
    headers: Mapping[str, str] = attrs.field(factory=dict)
    #: Sent instead of ``body``, chunk by chunk as it comes (chunked encoding): logs that follow.
    stream: Iterable[bytes] | None = None
    #: Called with the connection's reader and socket once the head is sent (a protocol upgrade such as
    #: WebSocket); it owns the connection until it returns, then the connection is closed.
    takeover: Callable[[Any, ssl.SSLSocket], None] | None = None


App = Callable[[Request], Response]


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True  # as Go's listeners: a restart need not wait out TIME_WAIT
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], context: ssl.SSLContext, app: App) -> None:
        self.ssl_context = context
        self.app = app
        self.stopping = False
        self.cond = threading.Condition()
        #: Open TLS connections, and whether each is serving a request right now.
        self.conns: dict[ssl.SSLSocket, bool] = {}
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        """Runs on the connection's thread: handshake, then serve requests until the connection ends."""
        try:
            request.settimeout(HANDSHAKE_TIMEOUT)
            conn = self.ssl_context.wrap_socket(request, server_side=True)
        except (OSError, ValueError):
            return  # a failed handshake or a client that went away: nothing to answer
        with self.cond:
            if self.stopping:
                conn.close()
                return
            self.conns[conn] = False
        try:
            conn.settimeout(IDLE_TIMEOUT)
            _Handler(conn, client_address, self)
        except (OSError, ValueError):
            pass
        finally:
            with self.cond:
                self.conns.pop(conn, None)
                self.cond.notify_all()
            try:
                conn.close()
            except OSError:
                pass

    def set_busy(self, conn: ssl.SSLSocket, busy: bool) -> None:
        with self.cond:
            if conn in self.conns:
                self.conns[conn] = busy

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("serving: connection from %s ended with an error", client_address, exc_info=True)


def _hang_up(conn: ssl.SSLSocket) -> None:
    """Shut the socket down under TLS, so a thread blocked reading it wakes at once."""
    try:
        socket.socket.shutdown(conn, socket.SHUT_RDWR)
    except OSError:
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _HTTPServer
    connection: ssl.SSLSocket

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: scrapers and probes call every few seconds."""

    def handle_one_request(self) -> None:
        self.server.set_busy(self.connection, False)
        if self.server.stopping:
            self.close_connection = True
            return
        super().handle_one_request()

    def parse_request(self) -> bool:
        self.server.set_busy(self.connection, True)
        return super().parse_request()

    def do_GET(self) -> None:
        split = urlsplit(self.path)
        conn = self.connection
        request = Request("GET", split.path, parse_qs(split.query, keep_blank_values=True), self.headers,
                          lambda: conn.getpeercert() or None)
        try:
            response = self.server.app(request)
        except Exception:
            log.exception("serving %s failed", split.path)
            response = Response(500, b"Internal Server Error\n")
        if self.server.stopping:
            self.close_connection = True
        self._send(response)

    def _send(self, r: Response) -> None:
        """Headers and body in one write: one TLS record, no Nagle or delayed-ACK stall."""
        if r.takeover is not None:
            self._take_over(r)
            return
        length = "Transfer-Encoding: chunked" if r.stream is not None else f"Content-Length: {len(r.body)}"
        head = [f"HTTP/1.1 {r.status} {_PHRASES.get(r.status, '')}", f"Content-Type: {r.content_type}",
                length, "Cache-Control: no-cache, private", "X-Content-Type-Options: nosniff"]
        head.extend(f"{key}: {value}" for key, value in r.headers.items())
        if self.close_connection:
            head.append("Connection: close")
        head_bytes = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
        if r.stream is None:
            self.wfile.write(head_bytes + r.body)
            return
        self.wfile.write(head_bytes)
        try:
            for chunk in r.stream:
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except Exception as err:  # the client went away, or the source failed: end the connection
            log.debug("serving: stream of %s ended: %s", self.path, err)
            self.close_connection = True
        finally:
            close = getattr(r.stream, "close", None)
            if close is not None:
                close()

    def _take_over(self, r: Response) -> None:
        head = [f"HTTP/1.1 {r.status} {_PHRASES.get(r.status, '')}"]
        head.extend(f"{key}: {value}" for key, value in r.headers.items())
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        self.wfile.flush()
        self.close_connection = True
        assert r.takeover is not None
        r.takeover(self.rfile, self.connection)


class SecureServer:
    """Serves ``app`` over TLS on ``(host, port)``; port 0 picks a free one (see :attr:`port`)."""

    def __init__(self, host: str, port: int, context: ssl.SSLContext, app: App,
                 shutdown_timeout: float = 5.0) -> None:
        self._address = (host, port)
        self._context = context
        self._app = app
        self.shutdown_timeout = shutdown_timeout
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> SecureServer:
        """Bind and serve in a thread; OSError (port taken, no permission) when the port cannot be had."""
        httpd = _HTTPServer(self._address, self._context, self._app)
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name=f"secure-serving-{self.port}", daemon=True)
        self._thread.start()
        log.info("Serving securely on %s", self.address)
        return self

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def address(self) -> str:
        host = self._address[0]
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"

    def stop(self) -> None:
        """Release the port, finish requests in flight (bounded by ``shutdown_timeout``); safe to call twice."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        with httpd.cond:
            httpd.stopping = True
        httpd.shutdown()
        httpd.server_close()
        deadline = time.monotonic() + self.shutdown_timeout
        with httpd.cond:
            for conn, busy in list(httpd.conns.items()):
                if not busy:
                    _hang_up(conn)
            while httpd.conns and (left := deadline - time.monotonic()) > 0:
                httpd.cond.wait(left)
            stuck = list(httpd.conns)
        if stuck:
            log.warning("Stopped serving with %d request(s) unfinished after %.1fs", len(stuck), self.shutdown_timeout)
        for conn in stuck:
            _hang_up(conn)
        if self._thread is not None:
            self._thread.join(timeout=5)
        log.info("Stopped serving securely on %s:%s", self._address[0], httpd.server_address[1])
