"""The loopback server hangs up on clients too slow to send a request head, and keeps serving the others."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer

pytestmark = pytest.mark.integration

SLOW_CLIENTS = 30


@pytest.fixture
def server() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer(header_timeout=1.0) as s:
        yield s


def _slowloris(port: int, stop: threading.Event, cut: list[float], started: float) -> None:
    """A request head sent a byte every 0.2 s; records when the server hung up."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n")
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                sock.sendall(b"X")
                if sock.recv(1) == b"":
                    break
            except TimeoutError:
                continue
            except OSError:
                break
        cut.append(time.monotonic() - started)


def test_slowloris_clients_are_cut_off_after_the_header_deadline_and_others_are_served(
        server: LoopbackAPIServer) -> None:
    stop = threading.Event()
    cut: list[float] = []
    started = time.monotonic()
    threads = [threading.Thread(target=_slowloris, args=(server.port, stop, cut, started))
               for _ in range(SLOW_CLIENTS)]
    for t in threads:
        t.start()
    try:
        with server.api_client() as api:
            v1 = client.CoreV1Api(api)
            t0 = time.monotonic()
            assert v1.list_namespace().items
            assert time.monotonic() - t0 < 1.0  # the slow clients hold threads, not the server
        for t in threads:
            t.join(10)
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    assert len(cut) == SLOW_CLIENTS, "some slow clients were never cut off"
    assert 0.9 < min(cut) and max(cut) < 5.0, (min(cut), max(cut))


def test_a_kept_alive_connection_serves_requests_spaced_wider_than_the_header_deadline(
        server: LoopbackAPIServer) -> None:
    """The deadline runs from a request's first byte, not from the last answer: idle keep-alive is fine."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        for _ in range(2):
            sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            time.sleep(1.5)
