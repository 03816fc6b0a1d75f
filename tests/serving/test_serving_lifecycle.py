"""Serving in a component's life: up before leader election, answering while a candidate, a graceful stop."""

from __future__ import annotations

import datetime as dt
import http.client
import re
import socket
import threading
import time
from pathlib import Path

import pytest

import componentbase
from componentbase.serving import start_serving
from componentbase.testing import LoopbackAPIServer, eventually, free_port

from .component import Running
from .conftest import ADMIN, NOT_YET, Background, Client, get, port_is_free, tls_context
from .test_serving_health import serving_config

pytestmark = pytest.mark.integration


def hold_lease(apiserver: LoopbackAPIServer, name: str, holder: str) -> None:
    from kubernetes import client

    api = apiserver.api_client()
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 3600, "acquireTime": now, "renewTime": now}}
    client.CoordinationV1Api(api).create_namespaced_lease("default", body, _preload_content=False)
    api.close()


def release_lease(apiserver: LoopbackAPIServer, name: str) -> None:
    from kubernetes import client

    api = apiserver.api_client()
    client.CoordinationV1Api(api).delete_namespaced_lease(name, "default", _preload_content=False)
    api.close()


def master_status(port: int) -> str | None:
    _, body = get(port, "/metrics", token=ADMIN)
    found = re.search(r'^leader_election_master_status\{name="tiny"\} (\S+)$', body, re.M)
    return found.group(1) if found else None


def test_serving_answers_while_a_candidate_and_reports_leadership(
        apiserver: LoopbackAPIServer, tmp_path: Path) -> None:
    hold_lease(apiserver, "tiny", "someone-else")
    port = free_port()
    kubeconfig = apiserver.kubeconfig_path
    running = Running([f"--kubeconfig={kubeconfig}", f"--secure-port={port}", "--bind-address=127.0.0.1",
                       f"--cert-dir={tmp_path}", f"--authentication-kubeconfig={kubeconfig}",
                       f"--authorization-kubeconfig={kubeconfig}", "--leader-elect=true"])
    try:
        eventually(lambda: get(port, "/healthz")[0] == 200, ignoring=NOT_YET)
        assert get(port, "/healthz?verbose") == (200, "[+]ping ok\n[+]leaderElection ok\nhealthz check passed\n")
        assert not running.working.is_set()  # serving, but not leading: the work has not started
        assert master_status(port) in (None, "0.0")
        release_lease(apiserver, "tiny")
        assert running.working.wait(10)
        eventually(lambda: master_status(port) == "1.0", timeout=5, ignoring=NOT_YET)
    finally:
        assert running.stop() == 0
    assert port_is_free(port)


def test_stop_releases_the_port_and_finishes_requests_in_flight(apiserver: LoopbackAPIServer) -> None:
    entered = threading.Event()

    def slow() -> None:
        entered.set()
        time.sleep(0.5)

    config = serving_config(apiserver.kubeconfig_path)
    srv = start_serving(config, threading.Event(), [componentbase.serving.NamedCheck("slow", slow)])
    port = srv.port
    idle = Client(port, tls_context(None))
    assert idle.get("/livez?exclude=slow")[0] == 200  # a keep-alive connection left open, idle
    in_flight = Background(lambda: get(port, "/healthz"))
    assert entered.wait(5)
    started = time.monotonic()
    srv.stop()
    assert time.monotonic() - started < 3  # the idle connection did not hold the stop up
    assert in_flight.join() == (200, "ok")
    assert port_is_free(port)
    with pytest.raises((OSError, http.client.HTTPException)):
        idle.get("/livez?exclude=slow")
    with pytest.raises(OSError):
        get(port, "/healthz")


def test_stop_is_bounded_when_a_request_never_finishes(apiserver: LoopbackAPIServer) -> None:
    entered = threading.Event()
    release = threading.Event()

    def hung() -> None:
        entered.set()
        release.wait(30)

    config = serving_config(apiserver.kubeconfig_path)
    srv = start_serving(config, threading.Event(), [componentbase.serving.NamedCheck("hung", hung)])
    srv.shutdown_timeout = 0.3
    port = srv.port
    in_flight = Background(lambda: get(port, "/healthz"))
    assert entered.wait(5)
    started = time.monotonic()
    srv.stop()
    assert time.monotonic() - started < 2
    assert port_is_free(port)
    release.set()
    with pytest.raises((OSError, http.client.HTTPException)):
        in_flight.join(5)  # the hung request got no answer: its connection was cut


def test_a_taken_port_fails_the_component_with_one_line(apiserver: LoopbackAPIServer, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        running = Running([f"--kubeconfig={apiserver.kubeconfig_path}", f"--secure-port={port}",
                           "--bind-address=127.0.0.1", f"--cert-dir={tmp_path}"])
        assert running.bg.join() == 1
    assert not running.working.is_set()
    assert f"failed to listen on 127.0.0.1:{port}: Address already in use" in running.err.getvalue()
