"""The server's one I/O thread: it accepts, does TLS handshakes and reads requests, holding no thread per client.

A connection lives here while it is not being served: handshaking, sending a request head or body, idle
between keep-alive requests, or being hung up on. Only a complete request goes to a worker thread, so a
slow client ("slowloris") costs a socket and a buffer, never a thread, and is closed when its deadline
passes: the TLS handshake and the head within ``header_timeout`` of the connection (or of the first byte
of a keep-alive request), a body within ``header_timeout`` of its head, the next request within
``idle_timeout``. Each group times out in the order it entered, so deadlines are checked in O(1).

Beyond ``max_connections`` waiting connections, the one waiting longest is closed to make room (one being
hung up on first, then an idle one, then the slowest sender): a new client, such as a health probe, always
gets in, and slow clients compete only with each other.
"""

from __future__ import annotations

import errno
import logging
import selectors
import socket
import ssl
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

from componentbase.serving import _wire as wire

__all__ = ["Conn", "Reactor"]

log = logging.getLogger("componentbase.serving")

HANDSHAKE, HEAD, BODY, IDLE, CLOSING = range(5)
#: How long an answer the server gave itself (400, 413...) waits for the client to read it before the close.
LINGER = 0.5
_WOULD_BLOCK = (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError)


class Conn:
    """One client connection and what has been read from it."""

    __slots__ = ("buf", "head", "peer", "scanned", "since", "sock", "state")

    def __init__(self, sock: socket.socket, peer: Any, state: int, now: float) -> None:
        self.sock = sock
        self.peer = peer
        self.state = state
        self.since = now
        self.buf = bytearray()
        self.scanned = 0
        self.head: wire.Head | None = None

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def hang_up(self) -> None:
        """Shut the socket down under TLS, so a thread blocked on it wakes at once."""
        try:
            socket.socket.shutdown(self.sock, socket.SHUT_RDWR)
        except OSError:
            pass


class Reactor:
    """Reads requests off ``listener``; ``admit(head)`` says whether one may be served now (else 429),
    ``serve(conn, head, body)`` hands a complete one to a worker, which gives it back with ``resume``."""

    def __init__(self, listener: socket.socket, context: ssl.SSLContext | None, limits: Any,
                 admit: Callable[[wire.Head], bool], serve: Callable[[Conn, wire.Head, bytes], None]) -> None:
        self.listener = listener
        self.context = context
        self.limits = limits
        self.admit = admit
        self.serve = serve
        self.stopping = False
        self._done = False
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._resumed: deque[Conn] = deque()
        self._lock = threading.Lock()
        #: Waiting connections by how their deadline is counted, each in the order its wait began.
        self._reading: OrderedDict[Conn, None] = OrderedDict()
        self._idle: OrderedDict[Conn, None] = OrderedDict()
        self._closing: OrderedDict[Conn, None] = OrderedDict()

    # --- other threads ------------------------------------------------------------------------------

    def resume(self, conn: Conn) -> None:
        """A worker is done with ``conn``: wait for its next request (or close it when stopping)."""
        with self._lock:
            if self._done:
                conn.close()
                return
            first = not self._resumed
            self._resumed.append(conn)
        if first:  # else a wake-up is already on its way
            self._wake()

    def stop(self) -> None:
        self.stopping = True
        self._wake()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass  # the pipe is full: the loop is already awake

    # --- the loop -----------------------------------------------------------------------------------

    def run(self) -> None:
        """Serve until ``stop``; then close the listener and every waiting connection."""
        self.listener.setblocking(False)
        self._sel.register(self.listener, selectors.EVENT_READ, None)
        self._sel.register(self._wake_r, selectors.EVENT_READ, self)
        try:
            while not self.stopping:
                for key, _ in self._sel.select(self._timeout()):
                    if key.data is None:
                        self._accept()
                    elif key.data is self:
                        self._drain_wake()
                    else:
                        self._step(key.data)
                self._expire(time.monotonic())
        except Exception:  # a bug here would stop all serving: say so loudly
            log.exception("serving: the connection loop failed")
        finally:
            self._shut()

    def _shut(self) -> None:
        self._sel.close()
        self.listener.close()
        for group in (self._reading, self._idle, self._closing):
            for conn in group:
                conn.close()
            group.clear()
        with self._lock:
            self._done = True
            resumed, self._resumed = list(self._resumed), deque()
        for conn in resumed:
            conn.close()
        self._wake_r.close()
        self._wake_w.close()

    def _timeout(self) -> float | None:
        limits = self.limits
        ends = [next(iter(group)).since + timeout for group, timeout in
                ((self._reading, limits.header_timeout), (self._idle, limits.idle_timeout), (self._closing, LINGER))
                if group]
        return max(0.0, min(ends) - time.monotonic()) if ends else None

    def _expire(self, now: float) -> None:
        limits = self.limits
        for group, timeout in ((self._reading, limits.header_timeout), (self._idle, limits.idle_timeout),
                               (self._closing, LINGER)):
            while group:
                conn = next(iter(group))
                if conn.since + timeout > now:
                    break
                if conn.state != IDLE and conn.state != CLOSING:
                    log.debug("serving: closing %s: no complete request within %.1fs", conn.peer, timeout)
                self._close(conn)

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:
            pass
        with self._lock:
            resumed, self._resumed = list(self._resumed), deque()
        for conn in resumed:
            if self.stopping:
                conn.close()
                continue
            conn.sock.setblocking(False)
            self._wait(conn, IDLE)
            self._sel.register(conn.sock, selectors.EVENT_READ, conn)
            if conn.buf:  # a pipelined request arrived with the last one
                self._step(conn, read=False)

    # --- connections --------------------------------------------------------------------------------

    def _accept(self) -> None:
        for _ in range(64):
            try:
                sock, peer = self.listener.accept()
            except _WOULD_BLOCK:
                return
            except OSError as err:  # out of file descriptors or memory: make room, try on the next turn
                if err.errno != errno.ECONNABORTED:
                    log.warning("serving: accepting a connection failed: %s", err)
                    if not self._evict():
                        time.sleep(0.05)
                    return
                continue
            if len(self._reading) + len(self._idle) + len(self._closing) >= self.limits.max_connections:
                self._evict()
            try:
                self._open(sock, peer)
            except (OSError, ValueError) as err:  # gone already (a reset before the TLS wrap)
                log.debug("serving: connection from %s ended: %s", peer, err)
                sock.close()

    def _open(self, sock: socket.socket, peer: Any) -> None:
        sock.setblocking(False)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass  # not TCP (a test's Unix socket) or already gone
        conn_sock = sock if self.context is None else self.context.wrap_socket(
            sock, server_side=True, do_handshake_on_connect=False)
        conn = Conn(conn_sock, peer, HEAD if self.context is None else HANDSHAKE, time.monotonic())
        self._reading[conn] = None
        self._sel.register(conn_sock, selectors.EVENT_READ, conn)

    def _evict(self) -> bool:
        """Close the connection that has waited longest; False when none waits."""
        for group in (self._closing, self._idle, self._reading):
            if group:
                conn = next(iter(group))
                log.debug("serving: too many connections; closing the one from %s", conn.peer)
                self._close(conn)
                return True
        return False

    def _wait(self, conn: Conn, state: int) -> None:
        """Start a new wait (and deadline) for ``conn`` in ``state``."""
        for group in (self._reading, self._idle, self._closing):
            group.pop(conn, None)
        conn.state = state
        conn.since = time.monotonic()
        group = self._idle if state == IDLE else self._closing if state == CLOSING else self._reading
        group[conn] = None

    def _close(self, conn: Conn) -> None:
        for group in (self._reading, self._idle, self._closing):
            group.pop(conn, None)
        try:
            self._sel.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        conn.close()

    def _step(self, conn: Conn, read: bool = True) -> None:
        """Move ``conn`` on with what it sent; any socket or TLS error closes it quietly."""
        try:
            if conn.state == HANDSHAKE:
                try:
                    conn.sock.do_handshake()  # type: ignore[attr-defined]
                except _WOULD_BLOCK:
                    return
                conn.state = HEAD
            if read and not self._fill(conn):
                self._close(conn)
                return
            if conn.state == CLOSING:
                conn.buf.clear()
                return
            self._advance(conn)
        except (OSError, ValueError) as err:
            log.debug("serving: connection from %s ended: %s", conn.peer, err)
            self._close(conn)

    def _fill(self, conn: Conn) -> bool:
        """Read what is there; False once the client closed its side."""
        head = conn.head
        cap = head.content_length if conn.state == BODY and head is not None else self.limits.max_header_bytes
        while len(conn.buf) <= cap:
            try:
                data = conn.sock.recv(65536)
            except _WOULD_BLOCK:
                return True
            if not data:
                return False
            conn.buf += data
        return True

    def _advance(self, conn: Conn) -> None:
        limits = self.limits
        if conn.state == IDLE:
            if not conn.buf.strip(b"\r\n"):
                conn.buf.clear()  # stray line ends between requests, as a client may send
                return
            self._wait(conn, HEAD)  # the head's deadline runs from its first byte
        if conn.state == HEAD:
            while conn.buf.startswith((b"\r", b"\n")):
                del conn.buf[:1]
            end = wire.find_head_end(conn.buf, conn.scanned)
            if end < 0 or end > limits.max_header_bytes:
                if end > 0 or len(conn.buf) > limits.max_header_bytes:
                    self._refuse(conn, 431, "request header fields too large")
                else:
                    conn.scanned = max(0, len(conn.buf) - 2)
                return
            try:
                head = wire.parse_head(bytes(conn.buf[:end]))
            except wire.BadRequest as err:
                self._refuse(conn, err.status, f"{err.status} {wire.PHRASES.get(err.status, '')}: {err.reason}")
                return
            del conn.buf[:end]
            conn.scanned = 0
            if head.content_length > limits.max_body_bytes:
                self._refuse(conn, 413, f"request body too large: {head.content_length} bytes, at most "
                                        f"{limits.max_body_bytes}")
                return
            conn.head = head
            conn.state = BODY
            if len(conn.buf) < head.content_length:
                self._wait(conn, BODY)  # the body's deadline runs from the end of the head
                if head.expect_continue:
                    self._send_now(conn, b"HTTP/1.1 100 Continue\r\n\r\n")
        complete = conn.head
        if conn.state != BODY or complete is None or len(conn.buf) < complete.content_length:
            return
        self._complete(conn, complete)

    def _complete(self, conn: Conn, head: wire.Head) -> None:
        """A whole request is in: hand it to a worker, or answer 429 when too many are in flight."""
        limits = self.limits
        body = bytes(conn.buf[:head.content_length])
        del conn.buf[:head.content_length]
        conn.head = None
        if not self.admit(head):
            retry = str(limits.retry_after)
            answer = wire.error_response(429, "Too many requests, please try again later.", close=not head.keep_alive,
                                         head_only=head.method == "HEAD", extra=[("Retry-After", retry)])
            if self._send_now(conn, answer) and head.keep_alive:
                self._wait(conn, IDLE)
                if conn.buf:
                    self._advance(conn)
            else:
                self._linger(conn)
            return
        for group in (self._reading, self._idle, self._closing):
            group.pop(conn, None)
        self._sel.unregister(conn.sock)
        self.serve(conn, head, body)

    def _refuse(self, conn: Conn, status: int, message: str) -> None:
        """Answer a request the server will not serve, and hang up."""
        log.debug("serving: %d for %s: %s", status, conn.peer, message)
        self._send_now(conn, wire.error_response(status, message, close=True))
        self._linger(conn)

    def _linger(self, conn: Conn) -> None:
        """Close our side, read and drop what still comes for a moment, then close: were unread bytes
        there at the close, the kernel would reset the connection and the client might lose our answer."""
        try:
            socket.socket.shutdown(conn.sock, socket.SHUT_WR)
        except OSError:
            self._close(conn)
            return
        conn.buf.clear()
        self._wait(conn, CLOSING)

    @staticmethod
    def _send_now(conn: Conn, data: bytes) -> bool:
        """Write without waiting: a short answer fits the socket's buffer, or the client is not reading."""
        try:
            return conn.sock.send(data) == len(data)
        except (OSError, ValueError):
            return False
