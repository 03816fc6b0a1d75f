"""Slow clients: a deadline for each request's head, and an idle timeout between requests.

A thread serves each connection, so a client that opens one and then sends its request a byte at a time
(slowloris) would hold that thread for ever. As Go's ``http.Server`` (``ReadHeaderTimeout``,
``IdleTimeout``) does for kube-apiserver: the TLS handshake, the request line and the headers must all
arrive within ``header_timeout`` seconds of the connection opening or of the request's first byte, and a
kept-alive connection may wait ``idle_timeout`` seconds for its next request. The serve loop reaps late
connections (``socketserver``'s ``service_actions``), so no thread per connection is needed.
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time

__all__ = ["HEADER_TIMEOUT", "IDLE_TIMEOUT", "HeadDeadlines", "wait_for_request"]

HEADER_TIMEOUT = 10.0
IDLE_TIMEOUT = 90.0


class HeadDeadlines:
    """Connections whose request head is being read, with the moment it must be complete."""

    def __init__(self, timeout: float = HEADER_TIMEOUT) -> None:
        self.timeout = timeout
        self._due: dict[socket.socket, float] = {}
        self._lock = threading.Lock()

    def start(self, conn: socket.socket) -> None:
        with self._lock:
            self._due[conn] = time.monotonic() + self.timeout

    def done(self, conn: socket.socket) -> None:
        with self._lock:
            self._due.pop(conn, None)

    def reap(self) -> int:
        """Hang up on every connection past its deadline; how many."""
        now = time.monotonic()
        with self._lock:
            late = [conn for conn, due in self._due.items() if due < now]
            for conn in late:
                del self._due[conn]
        for conn in late:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        return len(late)


def wait_for_request(conn: socket.socket, timeout: float = IDLE_TIMEOUT) -> bool:
    """Block until the next request's first byte (or the client's hang-up) arrives; False after ``timeout``."""
    if isinstance(conn, ssl.SSLSocket) and conn.pending():
        return True
    try:
        ready, _, _ = select.select([conn], [], [], timeout)
    except (OSError, ValueError):
        return False
    return bool(ready)
