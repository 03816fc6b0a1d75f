"""Serving under hostile clients: slow senders, greedy ones, huge bodies, malformed requests, vanishing peers."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator

import attrs
import pytest

import componentbase
from componentbase.serving import Request, Response, SecureServer, Server, ServerLimits, start_serving
from componentbase.testing import LoopbackAPIServer

from .hostile import (
    assert_cut_off_at_deadline,
    connect,
    get_timed,
    no_tracebacks,
    probe_while,
    raw,
    read_all,
    slowloris,
    status_of,
    worker_threads,
)
from .test_serving_health import serving_config

pytestmark = pytest.mark.integration

DEADLINE = 1.0
#: How much later than its deadline a slow client may be cut off on this shared, loaded machine.
MARGIN = 1.5
LIMITS = ServerLimits(header_timeout=DEADLINE, idle_timeout=1.5)


def _secure(apiserver: LoopbackAPIServer) -> Iterator[SecureServer]:
    config = serving_config(apiserver.kubeconfig_path)
    assert config.secure_serving is not None
    config.secure_serving = attrs.evolve(config.secure_serving, limits=LIMITS)
    srv = start_serving(config, threading.Event())
    yield srv
    srv.stop()


@pytest.fixture
def secure(apiserver: LoopbackAPIServer) -> Iterator[SecureServer]:
    yield from _secure(apiserver)


@pytest.fixture(scope="module")
def shared_secure(module_apiserver: LoopbackAPIServer) -> Iterator[SecureServer]:
    """One server that every malformed request is sent to in turn: each must still get its own answer."""
    yield from _secure(module_apiserver)


def test_slowloris_clients_are_cut_off_at_the_header_deadline_and_healthz_answers_meanwhile(
        secure: SecureServer) -> None:
    threads: list[int] = []

    def probe() -> tuple[int, float]:
        threads.append(worker_threads(secure.port))
        return get_timed(secure.port, True, "/healthz")

    ended, probes = probe_while(lambda: slowloris(secure.port, True, 30, give_up=DEADLINE + MARGIN + 3), probe)
    assert isinstance(ended, list)
    assert_cut_off_at_deadline(ended, DEADLINE, MARGIN)
    assert len(probes) >= 5 and all(status == 200 for status, _ in probes), probes
    slowest = max(seconds for _, seconds in probes)
    assert slowest < 1.0, f"/healthz took {slowest:.2f}s next to 30 slow clients"
    assert max(threads) <= 2, f"{max(threads)} worker threads for 30 slow clients and a probe"


def test_an_idle_keep_alive_connection_is_closed_after_the_idle_timeout(secure: SecureServer) -> None:
    with connect(secure.port, True) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        started = time.monotonic()
        reply = read_all(sock, timeout=LIMITS.idle_timeout + MARGIN + 1)
        waited = time.monotonic() - started
    assert status_of(reply) == 200 and reply.endswith(b"ok")
    assert LIMITS.idle_timeout - 0.1 <= waited <= LIMITS.idle_timeout + MARGIN


@pytest.mark.parametrize(("request_bytes", "status", "says"), [
    (b"GET /healthz\r\n\r\n", 400, b"malformed HTTP request"),  # an HTTP/0.9 request line
    (b"GARBAGE\r\n\r\n", 400, b"malformed HTTP request"),
    (b"GET /healthz HTTP/1.1 extra\r\n\r\n", 400, b"malformed HTTP request"),
    (b"G(T /healthz HTTP/1.1\r\n\r\n", 400, b"malformed HTTP method"),
    (b"GET /healthz HTTP/one\r\n\r\n", 400, b"malformed HTTP version"),
    (b"GET healthz HTTP/1.1\r\n\r\n", 400, b"malformed request target"),
    (b"GET /healthz HTTP/2.0\r\n\r\n", 505, b"unsupported protocol version"),
    (b"GET /healthz HTTP/1.1\r\nNo colon here\r\n\r\n", 400, b"malformed MIME header line"),
    (b"GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n", 400, b"malformed MIME header line"),
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400, b"obsolete line folding"),
    (b"GET /healthz HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, b"bad Content-Length"),
    (b"GET /healthz HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, b"bad Content-Length"),
    (b"POST /healthz HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411, b"needs a Content-Length"),
    (b"GET /healthz HTTP/1.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n", 431, b"too large"),
])
@pytest.mark.xdist_group("serving-malformed")  # one worker, so one shared_secure
def test_malformed_requests_get_a_400_class_answer_and_a_close(shared_secure: SecureServer, request_bytes: bytes,
                                                                status: int, says: bytes) -> None:
    reply = raw(shared_secure.port, True, request_bytes)
    assert status_of(reply) == status, reply
    assert says in reply and b"Connection: close" in reply


def test_a_huge_body_is_413_before_it_is_sent_and_a_small_one_is_read(secure: SecureServer) -> None:
    reply = raw(secure.port, True, b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n"
                                   b"Expect: 100-continue\r\n\r\n")
    assert status_of(reply) == 413 and b"at most 1048576" in reply
    with connect(secure.port, True) as sock:  # a body within the limit is read; the read-only paths say 405
        sock.sendall(b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
                     b"HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        replies = read_all(sock)
    first, _, second = replies.partition(b"405: Method Not Allowed\n")
    assert status_of(first) == 405 and b"Allow: GET, HEAD" in first
    assert status_of(second) == 200 and second.endswith(b"\r\n\r\n")  # HEAD: no body


def blocking_app(release: threading.Event, entered: threading.Semaphore) -> componentbase.serving.Server:
    def app(req: Request) -> Response:
        if req.path == "/slow":
            entered.release()
            release.wait(10)
        return Response(200, b"ok")

    return Server("127.0.0.1", 0, None, app, limits=ServerLimits(max_in_flight=2)).start()


def test_beyond_max_in_flight_is_429_with_retry_after_and_probes_still_pass() -> None:
    release, entered = threading.Event(), threading.Semaphore(0)
    srv = blocking_app(release, entered)
    try:
        held = [connect(srv.port, False) for _ in range(2)]
        for sock in held:
            sock.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            assert entered.acquire(timeout=5)
        refused = raw(srv.port, False, b"GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert status_of(refused) == 429 and b"Retry-After: 1" in refused and b"try again later" in refused
        assert get_timed(srv.port, False, "/healthz")[0] == 200  # a probe is counted apart
        release.set()
        for sock in held:
            assert status_of(sock.recv(4096)) == 200
            sock.close()
        assert get_timed(srv.port, False, "/slow")[0] == 200
    finally:
        release.set()
        srv.stop()


def test_beyond_max_connections_the_longest_waiting_is_closed_and_a_probe_gets_in() -> None:
    srv = Server("127.0.0.1", 0, None, lambda req: Response(200, b"ok"),
                 limits=ServerLimits(max_connections=10)).start()
    try:
        waiting = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(25)]
        status, seconds = get_timed(srv.port, False, "/healthz")
        assert status == 200 and seconds < 1.0
        waiting[0].settimeout(5)
        assert waiting[0].recv(1) == b""  # the oldest was closed to make room
        for sock in waiting:
            sock.close()
    finally:
        srv.stop()


def reset(sock: socket.socket) -> None:
    """Close with a TCP reset, as a client that crashed or was killed."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_clients_going_away_at_any_point_leave_no_traceback(caplog: pytest.LogCaptureFixture,
                                                             capfd: pytest.CaptureFixture[str]) -> None:
    entered = threading.Event()

    def app(req: Request) -> Response:
        if req.path == "/slow":
            entered.set()
            time.sleep(0.3)
            return Response(200, b"x" * 1_000_000)
        if req.path == "/stream":
            return Response(200, b"", stream=iter(lambda: b"y" * 65536, None))
        return Response(200, b"ok")

    for tls in (False, True):
        context = serving_config().secure_serving.ssl_context() if tls else None  # type: ignore[union-attr]
        srv = Server("127.0.0.1", 0, context, app).start()
        try:
            with no_tracebacks(caplog, capfd):
                reset(socket.create_connection(("127.0.0.1", srv.port)))  # before the TLS handshake
                half = connect(srv.port, tls)
                half.sendall(b"GET /healthz HTTP/1.1\r\nHo")  # mid-head
                reset(half)
                slow = connect(srv.port, tls)
                slow.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")  # gone before the answer
                assert entered.wait(5)
                reset(slow)
                streaming = connect(srv.port, tls)
                streaming.sendall(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
                assert streaming.recv(65536)  # gone mid-stream
                reset(streaming)
                time.sleep(0.6)
                assert get_timed(srv.port, tls, "/healthz")[0] == 200
            ended = [r.getMessage() for r in caplog.records if "ended" in r.getMessage()]
            assert ended, "the server never noticed a client going away"
        finally:
            srv.stop()
        entered.clear()
