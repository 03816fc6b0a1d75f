"""A small HTTP/1.1 server, over TLS or plain, that stays up under slow, greedy and vanishing clients.

One I/O thread (``_reactor``) accepts connections, does the TLS handshakes and reads requests without
blocking, so a client that sends slowly costs no thread and is cut off at its deadline; complete requests
run on worker threads, at most ``max_in_flight`` at a time (429 with ``Retry-After`` beyond, as
kube-apiserver's max-in-flight filter), health probes counted apart so that busy or slow clients never
starve them. A client that goes away at any point is logged at debug level, never with a traceback.
``stop`` closes the listener first (the port is free at once), hangs up waiting connections, lets
requests in flight finish within the shutdown timeout, then hangs up on the rest.
"""

from __future__ import annotations

import io
import logging
import select
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

import attrs

from componentbase.serving import _wire as wire
from componentbase.serving._limits import ServerLimits
from componentbase.serving._reactor import Conn, Reactor

__all__ = ["App", "Request", "Response", "SecureServer", "Server", "ServerLimits"]

log = logging.getLogger("componentbase.serving")

#: How long a worker waits on a keep-alive connection for the next request before handing it back.
KEEP_ALIVE_LINGER = 0.005


class Headers(Protocol):
    """Request headers, looked up case-insensitively."""

    def get(self, name: str, default: None = None) -> str | None: ...


@attrs.frozen
class Request:
    """What an ``App`` is asked: the method, the path and its parsed query (raw, not percent-decoded), headers."""

    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Headers
    #: The verified client certificate (``ssl.getpeercert()`` form), read only when asked for.
    peercert: Callable[[], dict[str, Any] | None] = lambda: None
    #: The request body (at most ``ServerLimits.max_body_bytes``).
    body: bytes = b""


@attrs.frozen
class Response:
    """What a handler answers: status, body and headers, or a stream or a connection takeover for logs and exec."""

    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"
    headers: Mapping[str, str] = attrs.field(factory=dict)
    #: Sent instead of ``body``, chunk by chunk as it comes (chunked encoding): logs that follow.
    stream: Iterable[bytes] | None = None
    #: Called with a reader of the connection and its socket once the head is sent (a protocol upgrade
    #: such as WebSocket); it owns the connection until it returns, then the connection is closed.
    takeover: Callable[[Any, ssl.SSLSocket], None] | None = None


App = Callable[[Request], Response]


class _Workers:
    """Threads for requests, started when none is free and kept ``keep`` seconds for the next ones."""

    def __init__(self, name: str, keep: float = 30.0) -> None:
        self._name = name
        self._keep = keep
        self._cond = threading.Condition()
        self._tasks: deque[Callable[[], None]] = deque()
        self._idle = 0
        self._closed = False

    def submit(self, task: Callable[[], None]) -> None:
        with self._cond:
            self._tasks.append(task)
            if self._idle >= len(self._tasks):
                self._cond.notify()
                return
        threading.Thread(target=self._work, name=self._name, daemon=True).start()

    def _work(self) -> None:
        while True:
            with self._cond:
                if not self._tasks:
                    self._idle += 1
                    try:
                        self._cond.wait_for(lambda: self._tasks or self._closed, self._keep)
                    finally:
                        self._idle -= 1
                    if not self._tasks:
                        return  # idle too long, or the server stopped
                task = self._tasks.popleft()
            task()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class _Reader(io.RawIOBase):
    """The connection as a file for a takeover: what arrived after the request head first, then the socket."""

    def __init__(self, first: bytes, sock: socket.socket) -> None:
        self._first = first
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self._first:
            n = min(len(b), len(self._first))
            b[:n], self._first = self._first[:n], self._first[n:]
            return n
        return self._sock.recv_into(b)


def _send(sock: socket.socket, r: Response, close: bool, head_only: bool) -> bool:
    """Head and body in one write (no Nagle or delayed-ACK stall); False when a stream ended early."""
    stream = r.stream
    fields = [("Content-Type", r.content_type),
              ("Transfer-Encoding", "chunked") if stream is not None else ("Content-Length", str(len(r.body))),
              ("Cache-Control", "no-cache, private"), ("X-Content-Type-Options", "nosniff"), *r.headers.items()]
    if close:
        fields.append(("Connection", "close"))
    head = wire.response_head(r.status, fields)
    if stream is None or head_only:
        sock.sendall(head if head_only else head + r.body)
        getattr(stream, "close", lambda: None)()
        return True
    sock.sendall(head)
    try:
        for chunk in stream:
            if chunk:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        sock.sendall(b"0\r\n\r\n")
        return True
    except Exception as err:  # the client went away, or the source failed: end the connection
        log.debug("serving: a stream ended early: %s", err)
        return False
    finally:
        getattr(stream, "close", lambda: None)()


class Server:
    """Serves ``app`` on ``(host, port)``, over TLS with ``context`` or plain HTTP without; port 0 picks one."""

    def __init__(self, host: str, port: int, context: ssl.SSLContext | None, app: App,
                 shutdown_timeout: float = 5.0, *, limits: ServerLimits | None = None, reuse_port: bool = False,
                 ) -> None:
        self._address = (host, port)
        self._context = context
        self._app = app
        self.shutdown_timeout = shutdown_timeout
        self.limits = limits or ServerLimits()
        self.reuse_port = reuse_port  # SO_REUSEPORT: more than one process may listen on the port
        self._kind = "securely " if context is not None else ""
        self._reactor: Reactor | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self._stopping = False
        self._cond = threading.Condition()
        self._busy: set[Conn] = set()
        self._in_flight = [0, 0]  # requests, probes
        self._workers = _Workers("serving-worker")

    def start(self) -> Server:
        """Bind and serve in a thread; OSError (port taken, no permission) when the port cannot be had."""
        host = self._address[0]
        listener = socket.create_server((host, self._address[1]), backlog=128, reuse_port=self.reuse_port,
                                        family=socket.AF_INET6 if ":" in host else socket.AF_INET)
        self._port = int(listener.getsockname()[1])
        self._workers = _Workers(f"serving-worker-{self._port}")
        self._reactor = Reactor(listener, self._context, self.limits, self._admit, self._dispatch)
        self._thread = threading.Thread(target=self._reactor.run, name=f"serving-{self._port}", daemon=True)
        self._thread.start()
        log.info("Serving %son %s", self._kind, self.address)
        return self

    @property
    def port(self) -> int:
        if not self._port:
            raise RuntimeError("server not started")
        return self._port

    @property
    def address(self) -> str:
        host = self._address[0]
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"

    def _probe(self, head: wire.Head) -> int:
        """1 for a health probe (counted apart), else 0."""
        path = head.target.partition("?")[0]
        return int(head.method in ("GET", "HEAD") and path in self.limits.probe_paths)

    def _admit(self, head: wire.Head) -> bool:
        """On the I/O thread: take a place in flight, or say no (the client gets a 429)."""
        kind = self._probe(head)
        with self._cond:
            if self._in_flight[kind] >= self.limits.max_in_flight:
                return False
            self._in_flight[kind] += 1
        return True

    def _dispatch(self, conn: Conn, head: wire.Head, body: bytes) -> None:
        with self._cond:
            self._busy.add(conn)
        self._workers.submit(lambda: self._serve(conn, head, body))

    def _serve(self, conn: Conn, head: wire.Head, body: bytes) -> None:
        """On a worker: answer, and the next requests a busy client sends at once; then give the connection
        back to the I/O thread to wait for more, or close it."""
        keep = False
        try:
            while True:
                try:
                    keep = self._respond(conn, head, body)
                finally:
                    self._release(head)
                following = self._next(conn) if keep and not self._stopping else None
                if following is None:
                    break
                head, body = following
        except (OSError, ValueError) as err:  # the client went away between requests
            log.debug("serving: connection from %s ended: %s", conn.peer, err)
            keep = False
        except Exception:  # a bug in the server: log it, and hang up
            log.exception("serving %s %s failed", head.method, head.target)
            keep = False
        finally:
            with self._cond:
                self._busy.discard(conn)
                self._cond.notify_all()
            reactor = self._reactor
            if keep and reactor is not None and not self._stopping:
                reactor.resume(conn)
            else:
                conn.close()

    def _release(self, head: wire.Head) -> None:
        with self._cond:
            self._in_flight[self._probe(head)] -= 1

    def _next(self, conn: Conn) -> tuple[wire.Head, bytes] | None:
        """The connection's next request when all of it arrives within a moment, admitted on this thread:
        a keep-alive client asking again at once is served without a round trip through the I/O thread
        (which costs a quarter of the throughput). Anything else goes back to the I/O thread."""
        sock = conn.sock
        if not conn.buf:
            pending = isinstance(sock, ssl.SSLSocket) and sock.pending()
            poll = select.poll()
            poll.register(sock, select.POLLIN)
            if not pending and not poll.poll(KEEP_ALIVE_LINGER * 1000):
                return None
            sock.setblocking(False)
            try:
                while len(conn.buf) <= self.limits.max_header_bytes and (data := sock.recv(65536)):
                    conn.buf += data
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                pass
        found = wire.complete_request(conn.buf, self.limits.max_header_bytes, self.limits.max_body_bytes)
        if found is None or not self._admit(found[0]):
            return None
        head, end = found
        body = bytes(conn.buf[end - head.content_length:end])
        del conn.buf[:end]
        return head, body

    def _respond(self, conn: Conn, head: wire.Head, body: bytes) -> bool:
        """Run the app and write its answer; True when the connection may serve another request."""
        sock = conn.sock
        split = urlsplit(head.target)
        peercert: Callable[[], dict[str, Any] | None] = (
            (lambda: sock.getpeercert() or None) if isinstance(sock, ssl.SSLSocket) else (lambda: None))
        request = Request(head.method, split.path, parse_qs(split.query, keep_blank_values=True), head.headers,
                          peercert, body)
        try:
            response = self._app(request)
        except Exception:
            log.exception("serving %s failed", split.path)
            response = Response(500, b"Internal Server Error\n")
        close = not head.keep_alive or self._stopping
        try:
            sock.settimeout(self.limits.write_timeout)
            if response.takeover is not None:
                sock.sendall(wire.response_head(response.status, response.headers.items()))
                response.takeover(io.BufferedReader(_Reader(bytes(conn.buf), sock)), sock)  # type: ignore[arg-type]
                return False
            return _send(sock, response, close, head.method == "HEAD") and not close
        except (OSError, ValueError) as err:  # the client went away or stopped reading: nothing to answer
            log.debug("serving %s: connection from %s ended: %s", split.path, conn.peer, err)
            return False

    def stop(self) -> None:
        """Release the port, finish requests in flight (bounded by ``shutdown_timeout``); safe to call twice."""
        reactor, thread = self._reactor, self._thread
        if reactor is None or thread is None:
            return
        self._stopping = True
        reactor.stop()
        thread.join(timeout=5)
        self._reactor = None
        deadline = time.monotonic() + self.shutdown_timeout
        with self._cond:
            while self._busy and (left := deadline - time.monotonic()) > 0:
                self._cond.wait(left)
            stuck = list(self._busy)
        if stuck:
            log.warning("Stopped serving with %d request(s) unfinished after %.1fs", len(stuck), self.shutdown_timeout)
        for conn in stuck:
            conn.hang_up()
        self._workers.close()
        log.info("Stopped serving %son %s", self._kind, self.address)


class SecureServer(Server):
    """Serves ``app`` over TLS on ``(host, port)``; port 0 picks a free one (see :attr:`port`)."""

    def __init__(self, host: str, port: int, context: ssl.SSLContext, app: App, shutdown_timeout: float = 5.0,
                 *, limits: ServerLimits | None = None, reuse_port: bool = False) -> None:
        super().__init__(host, port, context, app, shutdown_timeout, limits=limits, reuse_port=reuse_port)

    def start(self) -> SecureServer:
        super().start()
        return self
