"""Hostile clients for any port the library serves: slowloris senders, raw requests, probes that time themselves.

Shared by the secure serving tests and the virtual kubelet's (kubelet API and metrics ports).
"""

from __future__ import annotations

import logging
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest


def connect(port: int, tls: bool, timeout: float = 5.0) -> socket.socket:
    """A connection to 127.0.0.1:port, TLS handshake done when ``tls`` (the server is not verified)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    if not tls:
        return sock
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    return ctx.wrap_socket(sock)


def read_all(sock: socket.socket, timeout: float = 5.0) -> bytes:
    """Everything the server sends until it closes (or ``timeout`` passes)."""
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return data


def raw(port: int, tls: bool, request: bytes, timeout: float = 5.0) -> bytes:
    """Send ``request`` bytes as they are; what the server answers before it closes the connection."""
    with connect(port, tls, timeout) as sock:
        sock.sendall(request)
        return read_all(sock, timeout)


def status_of(reply: bytes) -> int:
    """The status code of a raw reply; fails the test on anything but an HTTP/1.1 status line."""
    line = reply.split(b"\r\n", 1)[0]
    assert line.startswith(b"HTTP/1.1 "), f"not an HTTP/1.1 reply: {reply[:80]!r}"
    return int(line.split()[1])


def get_timed(port: int, tls: bool, path: str) -> tuple[int, float]:
    """(status, seconds) of one GET on a new connection, as a kubelet's probe does it."""
    started = time.monotonic()
    reply = raw(port, tls, f"GET {path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n".encode())
    return status_of(reply), time.monotonic() - started


def slowloris(port: int, tls: bool, n: int, give_up: float, interval: float = 0.2) -> list[float | None]:
    """``n`` clients, one thread: a third connect and send nothing (not even a TLS hello), a third send a
    request head a byte at a time, a third send a head then a body a byte at a time. Each is timed from its
    connect to the server's hang-up; None for one still connected after ``give_up`` seconds."""
    opened: list[tuple[socket.socket, float, bytes]] = []
    head = b"GET /healthz HTTP/1.1\r\nHost: slow\r\nX-Slow: " + b"a" * 100_000
    body = b"POST /healthz HTTP/1.1\r\nHost: slow\r\nContent-Length: 100000\r\n\r\n" + b"b" * 100_000
    for i in range(n):
        started = time.monotonic()
        sock = socket.create_connection(("127.0.0.1", port), timeout=5) if i % 3 == 0 else connect(port, tls)
        if i % 3 == 2:
            end = body.index(b"\r\n\r\n") + 4
            sock.sendall(body[:end])
            opened.append((sock, started, body[end:]))
        else:
            opened.append((sock, started, b"" if i % 3 == 0 else head))
    for sock, _, _ in opened:
        sock.setblocking(False)
    ended: dict[int, float] = {}
    sel = selectors.DefaultSelector()
    for index, (sock, _, _) in enumerate(opened):
        sel.register(sock, selectors.EVENT_READ, index)
    sent = 0
    deadline = time.monotonic() + give_up
    try:
        while len(ended) < n and time.monotonic() < deadline:
            for key, _ in sel.select(interval):
                _hung_up(opened, key.data, ended, sel)
            for index, (sock, _, trickle) in enumerate(opened):
                if index not in ended and trickle:
                    try:
                        sock.send(trickle[sent:sent + 1])
                    except (ssl.SSLWantWriteError, BlockingIOError):
                        pass
                    except OSError:
                        _hung_up(opened, index, ended, sel)
            sent += 1
    finally:
        sel.close()
        for sock, _, _ in opened:
            sock.close()
    return [ended.get(i) for i in range(n)]


def _hung_up(opened: list[tuple[socket.socket, float, bytes]], index: int, ended: dict[int, float],
             sel: selectors.BaseSelector) -> None:
    sock, started, _ = opened[index]
    try:
        if sock.recv(1024):
            return  # the server said something: not a hang-up
    except (ssl.SSLWantReadError, BlockingIOError):
        return
    except OSError:
        pass
    if index not in ended:
        ended[index] = time.monotonic() - started
        sel.unregister(sock)


def probe_while(busy: Callable[[], object], probe: Callable[[], tuple[int, float]], every: float = 0.1
                ) -> tuple[object, list[tuple[int, float]]]:
    """Run ``busy()`` and, meanwhile, ``probe()`` every ``every`` seconds; (busy's result, the probes)."""
    probes: list[tuple[int, float]] = []
    done = threading.Event()

    def loop() -> None:
        while not done.is_set():
            probes.append(probe())
            done.wait(every)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        result = busy()
    finally:
        done.set()
        thread.join(10)
    return result, probes


def assert_cut_off_at_deadline(ended: list[float | None], deadline: float, margin: float) -> None:
    """Every slow client was hung up on, none before its deadline, none later than ``margin`` after it."""
    still = [i for i, t in enumerate(ended) if t is None]
    assert not still, f"{len(still)} of {len(ended)} slow clients still connected"
    times = [t for t in ended if t is not None]
    assert min(times) >= deadline - 0.05, f"a slow client was cut off before the deadline: {min(times):.2f}s"
    assert max(times) <= deadline + margin, f"a slow client was cut off late: {max(times):.2f}s"


def worker_threads(port: int) -> int:
    return sum(t.name == f"serving-worker-{port}" for t in threading.enumerate())


@contextmanager
def no_tracebacks(caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> Iterator[None]:
    """Fail if anything in the block logs an exception or prints a traceback (threads' excepthook included)."""
    caplog.set_level(logging.DEBUG)
    capfd.readouterr()
    yield
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err, out + err
    with_trace = [r.getMessage() for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not with_trace, with_trace
