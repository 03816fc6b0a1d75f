"""API error classification on the exceptions the official client really raises, and retry on conflict."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client, watch

from componentbase import client as cbclient
from componentbase.testing import FakeClock, LoopbackAPIServer, User
from componentbase.util import Backoff

CLASSIFIERS: dict[str, Callable[[Any], bool]] = {
    name: getattr(cbclient, name) for name in cbclient.__all__ if name.startswith("is_") and name != "is_transient"
}


def _raised(call: Callable[[], object]) -> BaseException:
    try:
        call()
    except Exception as err:
        return err
    raise AssertionError("the call succeeded")


def _only(err: Any, *expected: str) -> None:
    """``err`` answers yes to exactly the ``expected`` questions."""
    assert sorted(name for name, is_ in CLASSIFIERS.items() if is_(err)) == sorted(expected)


@pytest.fixture
def v1(kube_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(kube_client)


def _cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}


@pytest.mark.integration
def test_not_found(v1: client.CoreV1Api) -> None:
    err = _raised(lambda: v1.read_namespaced_config_map("missing", "default"))
    _only(err, "is_not_found")
    assert not cbclient.is_transient(err) and cbclient.reason_of(err) == "NotFound"
    assert cbclient.describe(err).summary == '404 NotFound: configmaps "missing" not found'


@pytest.mark.integration
def test_already_exists_is_not_a_conflict(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_config_map("default", _cm("a"))
    err = _raised(lambda: v1.create_namespaced_config_map("default", _cm("a")))
    assert cbclient.status_of(err) == 409
    _only(err, "is_already_exists")


@pytest.mark.integration
def test_conflict_on_a_stale_resource_version(v1: client.CoreV1Api) -> None:
    cm = v1.create_namespaced_config_map("default", _cm("b"))
    v1.patch_namespaced_config_map("b", "default", {"data": {"k": "theirs"}})
    err = _raised(lambda: v1.replace_namespaced_config_map("b", "default", cm))  # a stale resourceVersion
    _only(err, "is_conflict")


@pytest.mark.integration
def test_invalid(v1: client.CoreV1Api) -> None:
    err = _raised(lambda: v1.create_namespaced_config_map("default", {"metadata": {}}, _preload_content=False))
    _only(err, "is_invalid")


@pytest.mark.integration
def test_gone_when_a_watch_resumes_from_forgotten_history() -> None:
    with LoopbackAPIServer(watch_history=3) as server, server.api_client() as api:
        v1 = client.CoreV1Api(api)
        for i in range(6):
            v1.create_namespaced_config_map("default", _cm(f"c{i}"))
        err = _raised(lambda: list(watch.Watch().stream(v1.list_namespaced_config_map, "default",
                                                        resource_version="1", timeout_seconds=5)))
        _only(err, "is_gone")  # the client's watch keeps only the code
        raw = v1.list_namespaced_config_map("default", watch=True, resource_version="1", timeout_seconds=5,
                                            _preload_content=False)
        status = json.loads(raw.readline())["object"]  # the ERROR event's Status, as a reflector reads it
        raw.release_conn()
        _only(status, "is_resource_expired")


@pytest.mark.integration
@pytest.mark.parametrize("code", [500, 503])
def test_server_errors_are_transient(kube_apiserver: LoopbackAPIServer, v1: client.CoreV1Api, code: int) -> None:
    kube_apiserver.faults.set(error_rate=1.0, error_code=code)
    err = _raised(lambda: v1.list_namespaced_config_map("default"))
    assert cbclient.status_of(err) == code
    _only(err, "is_internal_error")  # the server's reason decides, whatever the code
    assert cbclient.is_transient(err)


@pytest.mark.integration
def test_too_many_requests_suggests_the_retry_after(kube_apiserver: LoopbackAPIServer) -> None:
    kube_apiserver.faults.set(error_rate=1.0, error_code=429, retry_after=3)
    configuration = client.Configuration()
    configuration.host = kube_apiserver.url
    configuration.retries = 0  # else urllib3 itself waits out the Retry-After, three times
    with client.ApiClient(configuration) as api:
        err = _raised(lambda: client.CoreV1Api(api).list_namespaced_config_map("default"))
    _only(err, "is_too_many_requests")
    assert cbclient.is_transient(err)
    assert cbclient.suggests_client_delay(err) == 3.0
    assert cbclient.describe(err).retry_after == 3.0


@pytest.mark.integration
def test_forbidden() -> None:
    with LoopbackAPIServer(tokens={"bob-token": User("bob")}, enforce_authorization=True) as server, \
            server.api_client() as api:
        err = _raised(lambda: client.CoreV1Api(api).list_namespaced_pod("default"))
    _only(err, "is_forbidden")
    assert not cbclient.is_transient(err)


@pytest.fixture
def closed_port() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]  # bound, never listening: connections are refused


@pytest.mark.integration
def test_connection_refused_is_no_answer(closed_port: int) -> None:
    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{closed_port}"
    configuration.retries = 0
    with client.ApiClient(configuration) as api:
        err = _raised(lambda: client.CoreV1Api(api).list_namespaced_pod("default", _request_timeout=2))
    _only(err, "is_connection_error")
    assert cbclient.status_of(err) is None and cbclient.is_transient(err)
    assert cbclient.suggests_client_delay(err) is None


def _status_exception(code: int, reason: str, details: dict[str, Any] | None = None,
                      headers: dict[str, str] | None = None) -> client.ApiException:
    """What the client raises for an answer the loopback server cannot be made to give (504, ServerTimeout)."""
    err = client.ApiException(status=code, reason=reason)
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
                            "reason": reason, "message": "the server could not finish in time"}
    if details is not None:
        body["details"] = details
    err.body = json.dumps(body)
    err.headers = headers or {}
    return err


@pytest.mark.unit
def test_timeouts_and_their_suggested_delay() -> None:
    gateway = _status_exception(504, "Timeout")
    _only(gateway, "is_timeout")
    assert cbclient.is_transient(gateway) and cbclient.suggests_client_delay(gateway) is None
    server = _status_exception(500, "ServerTimeout", {"retryAfterSeconds": 2})
    _only(server, "is_server_timeout")  # a known reason: the 500 alone does not make it an internal error
    assert cbclient.suggests_client_delay(server) == 2.0
    immediate = _status_exception(500, "ServerTimeout", {})
    assert cbclient.suggests_client_delay(immediate) == 0.0  # ServerTimeout always suggests: here at once
    header_only = client.ApiException(status=503, reason="Service Unavailable")
    header_only.headers = {"Retry-After": "4"}
    assert cbclient.suggests_client_delay(header_only) == 4.0
    assert cbclient.suggests_client_delay(_status_exception(404, "NotFound", headers={"Retry-After": "4"})) is None


@pytest.mark.unit
def test_an_unknown_or_missing_reason_falls_back_to_the_code() -> None:
    _only(_status_exception(409, "SomethingNew"), "is_conflict")
    _only(_status_exception(409, "AlreadyExists"), "is_already_exists")
    proxy = client.ApiException(status=503, reason="Service Unavailable")
    proxy.body = "upstream connect error"  # not a Status: a proxy in the way answered
    _only(proxy, "is_service_unavailable")
    assert cbclient.describe(proxy).summary == "503 Service Unavailable"


@pytest.mark.integration
def test_retry_on_conflict_reads_again_until_the_write_wins(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_config_map("default", _cm("c"))
    clock = FakeClock()
    attempts: list[int] = []

    def bump() -> None:
        cm = v1.read_namespaced_config_map("c", "default")
        if len(attempts) < 2:  # someone else writes between our read and our write, twice
            v1.patch_namespaced_config_map("c", "default", {"data": {"other": str(len(attempts))}})
        attempts.append(1)
        cm.data["k"] = "mine"
        v1.replace_namespaced_config_map("c", "default", cm)

    cbclient.retry_on_conflict(bump, Backoff(duration=0.01, factor=1.0, jitter=0.1, steps=5, cap=0, clock=clock))
    assert len(attempts) == 3
    assert v1.read_namespaced_config_map("c", "default").data["k"] == "mine"
    assert len(clock.waits) == 2 and all(0.01 <= w <= 0.011 for w in clock.waits)


@pytest.mark.integration
def test_retry_on_conflict_gives_up_with_the_last_conflict(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_config_map("default", _cm("d"))
    stale = v1.read_namespaced_config_map("d", "default")
    v1.patch_namespaced_config_map("d", "default", {"data": {"other": "x"}})
    tries: list[int] = []

    def write_stale() -> None:
        tries.append(1)
        v1.replace_namespaced_config_map("d", "default", stale)

    with pytest.raises(client.ApiException) as info:
        cbclient.retry_on_conflict(write_stale, Backoff(duration=0.01, steps=3, clock=FakeClock()))
    assert cbclient.is_conflict(info.value) and len(tries) == 3
    stop = threading.Event()
    stop.set()
    tries.clear()
    with pytest.raises(client.ApiException):
        cbclient.retry_on_conflict(write_stale, stop=stop)  # stopped: the first conflict is the answer
    assert len(tries) == 1
