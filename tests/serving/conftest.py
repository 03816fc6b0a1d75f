"""Fixtures for serving tests: a loopback API server that knows some users, and HTTPS helpers.

Users (kube-apiserver's --token-auth-file format): ``admin`` is in ``system:masters``; ``alice`` may
``get`` ``/metrics``, ``/configz`` and ``/version`` by policy; ``bob`` may do nothing. The API server's
kubeconfig carries the admin token: it is what the component uses to create TokenReviews and SARs.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from componentbase.testing import LoopbackAPIServer

ADMIN = "admin-token-0123456789"
ALICE = "alice-token-0123456789"
BOB = "bob-token-0123456789"

TOKENS_CSV = f"""{ADMIN},admin,uid-admin,"system:masters"
{ALICE},alice,uid-alice,"team-a"
{BOB},bob,uid-bob
"""

POLICY = [{"user": "alice", "verbs": ["get"], "paths": ["/metrics", "/configz", "/version"]}]


def _apiserver(folder: Path) -> LoopbackAPIServer:
    tokens = folder / "tokens.csv"
    tokens.write_text(TOKENS_CSV)
    policy = folder / "policy.json"
    policy.write_text(json.dumps(POLICY))
    return LoopbackAPIServer(token_auth_file=tokens, authorization_policy_file=policy)


@pytest.fixture
def apiserver(tmp_path: Path) -> Iterator[LoopbackAPIServer]:
    with _apiserver(tmp_path) as server:
        yield server


@pytest.fixture(scope="module")
def module_apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackAPIServer]:
    """One ``apiserver`` for the tests of a module that only read from it (mark them with one xdist_group)."""
    with _apiserver(tmp_path_factory.mktemp("apiserver")) as server:
        yield server


def tls_context(cafile: str | Path | None) -> ssl.SSLContext:
    """A client context verifying the server against ``cafile`` (or not verifying, when None)."""
    if cafile is None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    return ssl.create_default_context(cafile=str(cafile))


class Client:
    """One keep-alive HTTPS connection to 127.0.0.1:port."""

    def __init__(self, port: int, ctx: ssl.SSLContext, timeout: float = 10.0) -> None:
        self.conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=timeout)

    def get(self, path: str, token: str | None = None) -> tuple[int, str, dict[str, str]]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.conn.request("GET", path, headers=headers)
        resp = self.conn.getresponse()
        body = resp.read().decode()
        return resp.status, body, {k.lower(): v for k, v in resp.getheaders()}

    def close(self) -> None:
        self.conn.close()


def get(port: int, path: str, token: str | None = None, cafile: str | Path | None = None) -> tuple[int, str]:
    client = Client(port, tls_context(cafile))
    try:
        status, body, _ = client.get(path, token)
        return status, body
    finally:
        client.close()


#: Errors that mean "not serving yet" to ``eventually(..., ignoring=NOT_YET)``.
NOT_YET = (OSError, http.client.HTTPException)


def port_is_free(port: int) -> bool:
    """Could a restarted component listen here? (SO_REUSEADDR, as ours: closed connections may linger.)"""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            s.listen()
        except OSError:
            return False
        return True


class Background:
    """Run ``fn`` in a daemon thread; ``join`` returns its result or raises what it raised."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.result: list[Any] = []
        self.error: list[BaseException] = []

        def target() -> None:
            try:
                self.result.append(fn())
            except BaseException as err:
                self.error.append(err)

        self.thread = threading.Thread(target=target, daemon=True)
        self.thread.start()

    def join(self, timeout: float = 15.0) -> Any:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "still running"
        if self.error:
            raise self.error[0]
        return self.result[0]
