"""The loopback server's HTTP/1.1 request handling, spoken over a raw socket: headers, keep-alive, refusals."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from componentbase.testing import LoopbackAPIServer

pytestmark = pytest.mark.integration


@pytest.fixture
def conn(kube_apiserver: LoopbackAPIServer) -> Iterator[socket.socket]:
    sock = socket.create_connection(("127.0.0.1", kube_apiserver.port), timeout=5)
    yield sock
    sock.close()


def _exchange(sock: socket.socket, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request``; the status, headers (lower-cased names) and body of the one reply."""
    sock.sendall(request)
    stream = sock.makefile("rb")
    status = int(stream.readline().split()[1])
    headers: dict[str, str] = {}
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.lower()] = value.strip()
    return status, headers, stream.read(int(headers.get("content-length", "0")))


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except OSError:
        return True


def test_header_names_are_case_insensitive_and_the_connection_is_kept(conn: socket.socket) -> None:
    body = json.dumps({"metadata": {"name": "cm1"}, "data": {"k": "v"}}).encode()
    status, _, reply = _exchange(conn, b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nhost: x\r\n"
                                       b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                                       % (len(body), body))
    assert status == 201 and json.loads(reply)["data"] == {"k": "v"}
    status, _, reply = _exchange(conn, b"GET /api/v1/namespaces/default/configmaps/cm1 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 200 and json.loads(reply)["metadata"]["name"] == "cm1"


def test_connection_close_and_http_1_0_close_after_the_reply(kube_apiserver: LoopbackAPIServer) -> None:
    for request in (b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                    b"GET /version HTTP/1.0\r\n\r\n"):
        with socket.create_connection(("127.0.0.1", kube_apiserver.port), timeout=5) as sock:
            status, headers, _ = _exchange(sock, request)
            assert status == 200 and headers.get("connection") == "close"
            assert _closed(sock)
    with socket.create_connection(("127.0.0.1", kube_apiserver.port), timeout=5) as sock:
        assert _exchange(sock, b"GET /version HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")[0] == 200
        assert _exchange(sock, b"GET /version HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")[0] == 200


@pytest.mark.parametrize(("request_bytes", "status"), [
    (b"GET /version HTTP/1.1\r\nHost: x\r\n  folded: continuation\r\n\r\n", 400),
    (b"GET /version HTTP/1.1\r\nno colon here\r\n\r\n", 400),
    (b"GET /version HTTP/1.1\r\nName : spaced\r\n\r\n", 400),
    (b"GET /version HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(101)) + b"\r\n", 431),
    (b"GET /version HTTP/1.1\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n", 431),
    (b"GET /version HTTP/2.0\r\n\r\n", 505),
    (b"GET /version\r\n\r\n", 400),
    (b"GET /version SPDY/3\r\n\r\n", 400),
])
def test_malformed_requests_are_refused_and_the_connection_closed(conn: socket.socket, request_bytes: bytes,
                                                                  status: int) -> None:
    assert _exchange(conn, request_bytes)[0] == status
    assert _closed(conn)
