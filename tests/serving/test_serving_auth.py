"""Delegated authentication and authorization, over real TLS, against the loopback API server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from componentbase.testing import LoopbackAPIServer, eventually, free_port

from .component import Running
from .conftest import ADMIN, ALICE, BOB, NOT_YET, Client, get, tls_context

pytestmark = pytest.mark.integration


def start_tiny(apiserver: LoopbackAPIServer, tmp_path: Path, *extra: str) -> tuple[Running, int, Path]:
    port = free_port()
    kubeconfig = apiserver.kubeconfig_path
    args = [f"--kubeconfig={kubeconfig}", f"--secure-port={port}", "--bind-address=127.0.0.1",
            f"--cert-dir={tmp_path / 'certs'}", f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}", *extra]
    running = Running(args)
    cafile = tmp_path / "certs" / "tiny.crt"
    eventually(lambda: running.bg.result or (cafile.exists() and get(port, "/healthz", cafile=cafile)[0] == 200),
               what="the component serving /healthz", ignoring=NOT_YET)
    assert not running.bg.result, running.err.getvalue()
    return running, port, cafile


@pytest.fixture
def tiny(apiserver: LoopbackAPIServer, tmp_path: Path) -> Iterator[tuple[Running, int, Path]]:
    running, port, cafile = start_tiny(apiserver, tmp_path)
    yield running, port, cafile
    assert running.stop() == 0


def test_health_is_public_and_the_rest_needs_a_token(tiny: tuple[Running, int, Path]) -> None:
    _, port, cafile = tiny
    for path in ("/healthz", "/livez", "/readyz"):
        assert get(port, path, cafile=cafile) == (200, "ok")
    for path in ("/configz", "/metrics", "/version", "/healthz/ping", "/nope"):
        status, body = get(port, path, cafile=cafile)
        assert status == 401, path
        assert json.loads(body)["reason"] == "Unauthorized"


def test_a_bad_token_is_401_a_user_without_rights_403_an_admin_200(tiny: tuple[Running, int, Path]) -> None:
    _, port, cafile = tiny
    assert get(port, "/metrics", token="not-a-token", cafile=cafile)[0] == 401
    status, body = get(port, "/metrics", token=BOB, cafile=cafile)
    assert status == 403
    assert json.loads(body)["message"].startswith('forbidden: User "bob" cannot get path "/metrics"')
    for path in ("/configz", "/metrics", "/version"):
        assert get(port, path, token=ADMIN, cafile=cafile)[0] == 200, path
    # alice is not a master: the SubjectAccessReview allows what the policy gives her, and no more
    assert get(port, "/metrics", token=ALICE, cafile=cafile)[0] == 200
    assert get(port, "/healthz/ping", token=ALICE, cafile=cafile)[0] == 403
    assert get(port, "/healthz/ping", token=ADMIN, cafile=cafile) == (200, "ok")
    assert get(port, "/nope", token=ADMIN, cafile=cafile)[0] == 404


def test_the_generated_certificate_verifies_and_is_reused_on_restart(
        apiserver: LoopbackAPIServer, tmp_path: Path) -> None:
    running, port, cafile = start_tiny(apiserver, tmp_path)
    first = cafile.read_bytes()
    # the pinned file verifies the server: a client with another CA bundle is refused
    import ssl

    with pytest.raises(ssl.SSLCertVerificationError):
        Client(port, ssl.create_default_context()).get("/healthz")
    assert running.stop() == 0
    again, port2, _ = start_tiny(apiserver, tmp_path)
    try:
        assert cafile.read_bytes() == first
        assert get(port2, "/healthz", cafile=cafile) == (200, "ok")
        assert oct((tmp_path / "certs" / "tiny.key").stat().st_mode & 0o777) == "0o600"
    finally:
        assert again.stop() == 0


def test_configz_and_version_documents(tiny: tuple[Running, int, Path]) -> None:
    _, port, cafile = tiny
    status, body = get(port, "/configz", token=ADMIN, cafile=cafile)
    assert status == 200
    doc = json.loads(body)
    cfg = doc["componentconfig"]
    assert cfg["name"] == "tiny"
    assert cfg["bearerToken"] == "<redacted>"
    assert cfg["password"] == ""  # unset stays visibly unset
    assert "tiny-secret-token" not in body
    assert cfg["leaderElection"]["resourceName"] == "tiny"
    status, body = get(port, "/version", token=ADMIN, cafile=cafile)
    version = json.loads(body)
    assert list(version) == ["major", "minor", "gitVersion", "gitCommit", "gitTreeState", "buildDate",
                             "pythonVersion", "compiler", "platform"]
    assert version["gitVersion"].startswith("v")


def count_reviews(apiserver: LoopbackAPIServer, resource: str) -> None:
    """Make the server count requests for ``resource`` (a matching fault with a negligible stall)."""
    apiserver.faults.set(stall=0.001, resources=(resource,))


def test_token_reviews_are_cached_for_their_ttl(apiserver: LoopbackAPIServer, tmp_path: Path) -> None:
    running, port, cafile = start_tiny(apiserver, tmp_path, "--authentication-token-webhook-cache-ttl=1s")
    try:
        count_reviews(apiserver, "tokenreviews")
        client = Client(port, tls_context(cafile))
        for _ in range(5):
            assert client.get("/metrics", ADMIN)[0] == 200
            assert client.get("/metrics", "bogus")[0] == 401
        assert apiserver.faults.counts.get("stall") == 2  # one review per token, valid or not
        eventually(lambda: client.get("/metrics", ADMIN)[0] == 200 and apiserver.faults.counts["stall"] == 3,
                   timeout=5, interval=0.2, ignoring=NOT_YET)
        client.close()
    finally:
        apiserver.faults.clear()
        assert running.stop() == 0


def test_access_reviews_are_cached_allowed_and_denied(apiserver: LoopbackAPIServer, tmp_path: Path) -> None:
    running, port, cafile = start_tiny(apiserver, tmp_path)
    try:
        count_reviews(apiserver, "subjectaccessreviews")
        client = Client(port, tls_context(cafile))
        for _ in range(5):
            assert client.get("/metrics", ALICE)[0] == 200
            assert client.get("/metrics", BOB)[0] == 403
            assert client.get("/metrics", ADMIN)[0] == 200  # system:masters: never asked
        assert apiserver.faults.counts.get("stall") == 2
        assert client.get("/configz", ALICE)[0] == 200  # another path is another question
        assert apiserver.faults.counts.get("stall") == 3
        client.close()
    finally:
        apiserver.faults.clear()
        assert running.stop() == 0


def test_the_api_server_going_away_fails_closed(apiserver: LoopbackAPIServer, tmp_path: Path) -> None:
    running, port, cafile = start_tiny(apiserver, tmp_path, "--authentication-token-webhook-cache-ttl=0s",
                                       "--authorization-webhook-cache-authorized-ttl=0s")
    try:
        assert get(port, "/metrics", token=ALICE, cafile=cafile)[0] == 200
        apiserver.faults.set(error_rate=1.0, error_code=500, resources=("subjectaccessreviews",))
        status, body = get(port, "/metrics", token=ALICE, cafile=cafile)
        assert status == 403 and "authorization check failed" in body
        apiserver.stop()
        for token in (ALICE, BOB, ADMIN):
            assert get(port, "/metrics", token=token, cafile=cafile)[0] == 401
        assert get(port, "/healthz", cafile=cafile) == (200, "ok")
        assert ALICE not in running.err.getvalue() and "Unable to authenticate" in running.err.getvalue()
    finally:
        assert running.stop() == 0


def test_without_delegation_only_always_allowed_paths_are_served(
        apiserver: LoopbackAPIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    port = free_port()
    running = Running([f"--kubeconfig={apiserver.kubeconfig_path}", f"--secure-port={port}",
                       "--bind-address=127.0.0.1", f"--cert-dir={tmp_path}"])
    try:
        eventually(lambda: get(port, "/healthz")[0] == 200, ignoring=NOT_YET)
        for token in (None, ADMIN):
            status, body = get(port, "/metrics", token=token)
            assert status == 403
            assert 'User "system:anonymous" cannot get path "/metrics"' in json.loads(body)["message"]
        logged = running.err.getvalue()
        assert "No authentication-kubeconfig provided" in logged
        assert "No authorization-kubeconfig provided" in logged
    finally:
        assert running.stop() == 0


def test_authentication_without_authorization_lets_only_masters_in(
        apiserver: LoopbackAPIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    port = free_port()
    running = Running([f"--kubeconfig={apiserver.kubeconfig_path}", f"--secure-port={port}",
                       "--bind-address=127.0.0.1", f"--cert-dir={tmp_path}",
                       f"--authentication-kubeconfig={apiserver.kubeconfig_path}"])
    try:
        eventually(lambda: get(port, "/healthz")[0] == 200, ignoring=NOT_YET)
        assert get(port, "/metrics", token=ADMIN)[0] == 200
        assert get(port, "/metrics", token=ALICE)[0] == 403
        assert get(port, "/metrics")[0] == 401
    finally:
        assert running.stop() == 0


def test_rest_client_metrics_count_the_reviews(tiny: tuple[Running, int, Path]) -> None:
    _, port, cafile = tiny
    assert get(port, "/metrics", token=ALICE, cafile=cafile)[0] == 200
    status, body = get(port, "/metrics", token=ADMIN, cafile=cafile)
    assert status == 200
    host = re.escape("127.0.0.1:")
    assert re.search(r'rest_client_requests_total\{code="201",host="' + host + r'\d+",method="POST"\} [2-9]', body)
    assert re.search(r'rest_client_request_duration_seconds_count\{host="' + host + r'\d+",verb="POST"\} ', body)
    assert 'kubernetes_build_info{build_date="1970-01-01T00:00:00Z"' in body
    assert "process_cpu_seconds_total" in body
