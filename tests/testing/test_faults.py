"""Fault injection, switched from the test through ``server.faults`` and over HTTP."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from kubernetes import client, watch

from componentbase.testing import (
    FAULTS_PATH,
    LoopbackAPIServer,
    eventually,
)

pytestmark = pytest.mark.integration


def _raw(server: LoopbackAPIServer, path: str, method: str = "GET", body: Any = None) -> tuple[int, Any, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(server.url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, err.headers, json.loads(err.read() or b"null")


def test_error_rate_500_and_clear(kube_apiserver: LoopbackAPIServer, kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    kube_apiserver.faults.set(error_rate=1.0)
    with pytest.raises(client.ApiException) as info:
        v1.list_namespace()
    assert info.value.status == 500
    assert json.loads(info.value.body)["reason"] == "InternalError"
    kube_apiserver.faults.clear()
    assert v1.list_namespace().items


def test_429_carries_retry_after(kube_apiserver: LoopbackAPIServer) -> None:
    kube_apiserver.faults.set(error_rate=1.0, error_code=429, retry_after=3)
    code, headers, body = _raw(kube_apiserver, "/api/v1/namespaces")
    assert code == 429 and headers["Retry-After"] == "3"
    assert body["reason"] == "TooManyRequests" and body["details"]["retryAfterSeconds"] == 3


def test_fraction_is_roughly_honoured() -> None:
    with LoopbackAPIServer(seed=7) as server:
        server.faults.set(error_rate=0.3)
        codes = [_raw(server, "/api/v1/namespaces")[0] for _ in range(200)]
    failures = codes.count(500)
    assert 30 <= failures <= 90 and codes.count(200) == 200 - failures


def test_filters_by_verb_and_resource(
    kube_apiserver: LoopbackAPIServer, kube_client: client.ApiClient
) -> None:
    v1 = client.CoreV1Api(kube_client)
    kube_apiserver.faults.set(error_rate=1.0, verbs=["create"], resources=["pods"])
    v1.create_namespaced_config_map("default", {"metadata": {"name": "ok"}})
    v1.list_namespaced_pod("default")
    with pytest.raises(client.ApiException):
        v1.create_namespaced_pod("default", {"metadata": {"name": "p"}, "spec": {"containers": []}})
    assert kube_apiserver.faults.counts["error"] == 1


def test_latency(kube_apiserver: LoopbackAPIServer) -> None:
    kube_apiserver.faults.set(latency=1.0, path="/version")
    start = time.monotonic()
    _raw(kube_apiserver, "/version")
    assert time.monotonic() - start >= 1.0
    start = time.monotonic()
    _raw(kube_apiserver, "/api")
    assert time.monotonic() - start < 1.0  # another path is not delayed: a loopback GET takes milliseconds


def test_drop_closes_connection(kube_apiserver: LoopbackAPIServer) -> None:
    kube_apiserver.faults.set(drop_rate=1.0, path="/version")
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        urllib.request.urlopen(kube_apiserver.url + "/version", timeout=5)


def test_stall_until_cleared(kube_apiserver: LoopbackAPIServer) -> None:
    kube_apiserver.faults.set(stall=30, path="/version")
    done = threading.Event()
    result: list[int] = []

    def call() -> None:
        result.append(_raw(kube_apiserver, "/version")[0])
        done.set()

    threading.Thread(target=call, daemon=True).start()
    assert not done.wait(0.3)
    kube_apiserver.faults.clear()
    assert done.wait(5) and result == [200]


def test_stall_bounded() -> None:
    with LoopbackAPIServer() as server:
        server.faults.set(stall=0.2)
        start = time.monotonic()
        assert _raw(server, "/version")[0] == 200
        assert 0.2 <= time.monotonic() - start < 5


def test_close_watches(kube_apiserver: LoopbackAPIServer, kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    ended = threading.Event()

    def run() -> None:
        for _ in watch.Watch().stream(v1.list_namespace, timeout_seconds=30):
            pass
        ended.set()

    threading.Thread(target=run, daemon=True).start()

    def closed() -> bool:  # the watch may not be open yet at the first close: close until it ends
        kube_apiserver.faults.close_watches()
        return ended.wait(0.05)

    eventually(closed, 5, what="the watch to end")


def test_watch_close_after(kube_apiserver: LoopbackAPIServer, kube_client: client.ApiClient) -> None:
    kube_apiserver.faults.set(watch_close_after=0.2)
    v1 = client.CoreV1Api(kube_client)
    start = time.monotonic()
    events = list(watch.Watch().stream(v1.list_namespace, timeout_seconds=30))
    assert len(events) == 4 and time.monotonic() - start < 5


def test_http_endpoint(kube_apiserver: LoopbackAPIServer) -> None:
    code, _, doc = _raw(kube_apiserver, FAULTS_PATH, "PUT", {"error_rate": 1.0, "resource": "namespaces"})
    assert code == 200 and doc["rules"][0]["resources"] == ["namespaces"]
    assert _raw(kube_apiserver, "/api/v1/namespaces")[0] == 500
    assert _raw(kube_apiserver, "/api/v1/pods")[0] == 200
    code, _, doc = _raw(kube_apiserver, FAULTS_PATH, "POST", [{"latency": 0.01}])
    assert len(doc["rules"]) == 2
    assert _raw(kube_apiserver, FAULTS_PATH)[2]["counts"]["error"] == 1
    assert _raw(kube_apiserver, FAULTS_PATH, "PUT", {"error_rate": 2})[0] == 400
    assert _raw(kube_apiserver, FAULTS_PATH, "PUT", {"bogus": 1})[0] == 400
    assert _raw(kube_apiserver, FAULTS_PATH, "DELETE")[2]["rules"] == []
    assert _raw(kube_apiserver, "/api/v1/namespaces")[0] == 200
    assert _raw(kube_apiserver, FAULTS_PATH + "/close-watches", "POST")[0] == 200
