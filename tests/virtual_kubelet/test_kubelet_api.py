"""The kubelet API and metrics ports under hostile clients, and the kubelet API's answers to bad requests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import attrs
import pytest

import componentbase
from componentbase.metrics import Metrics
from componentbase.testing import LoopbackAPIServer
from componentbase_examples.virtual_kubelet.app import kubelet_server
from componentbase_examples.virtual_kubelet.kubeletapi import LogOptionsError, parse_log_options
from componentbase_examples.virtual_kubelet.options import VirtualKubeletOptions
from componentbase_examples.virtual_kubelet.provider_types import LogOptions
from tests.serving.hostile import (
    assert_cut_off_at_deadline,
    get_timed,
    no_tracebacks,
    probe_while,
    raw,
    slowloris,
    status_of,
)
from tests.virtual_kubelet.conftest import ADMIN, authorizing_server, free_ports, new_provider

#: One virtual kubelet API (``ports``) for the module: its tests run on the worker that started it.
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("vk-kubelet-api")]

DEADLINE = 1.0
MARGIN = 1.5


class Logs:
    """A provider serving a container's log: one line, or lines forever when followed."""

    @componentbase.hookimpl
    def get_container_logs(self, namespace: str, pod: str, container: str, opts: LogOptions) -> Iterator[bytes]:
        yield b"line\n"
        while opts.follow:
            time.sleep(0.01)
            yield b"more\n" * 1000

    @componentbase.hookimpl
    def get_pods(self) -> list[dict[str, Any]]:
        return []


@attrs.frozen
class Ports:
    api: int
    metrics: int


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackAPIServer]:
    """One server per module (tests/virtual_kubelet/conftest.py's ``authorizing_server``), for ``ports``."""
    with authorizing_server(tmp_path_factory.mktemp("apiserver")) as server:
        yield server


@pytest.fixture(scope="module")
def ports(apiserver: LoopbackAPIServer) -> Iterator[Ports]:
    """The virtual kubelet's two ports, started by its own serving glue with a 1 s header deadline; one pair for
    the module: its tests only make requests of their own (a server and certificates per test cost more than
    most of them)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("VKUBELET_POD_IP", "127.0.0.1")
        api, metrics = free_ports(2)
        opts = VirtualKubeletOptions(kubeconfig=apiserver.kubeconfig_path, listen_port=api,
                                     metrics_addr=f"127.0.0.1:{metrics}")
        config: Any = opts.config()
        config.metrics = Metrics()
        config.kubelet_serving = attrs.evolve(
            config.kubelet_serving, limits=componentbase.serving.ServerLimits(header_timeout=DEADLINE))
        node = SimpleNamespace(provider=new_provider(lambda ctx: Logs()), pod_informer=None, name="vk",
                               ready=threading.Event())
        node.ready.set()
        stop = kubelet_server(config)(node, threading.Event())  # type: ignore[arg-type]
        try:
            yield Ports(api, metrics)
        finally:
            stop()
            config.client.close()


def request(port: int, method: str, path: str, token: str | None = ADMIN, tls: bool = True) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return raw(port, tls, f"{method} {path} HTTP/1.1\r\nHost: vk\r\n{auth}Connection: close\r\n\r\n".encode())


@pytest.mark.parametrize(("port_name", "tls", "path"), [("api", True, "/healthz"), ("metrics", False, "/metrics")])
def test_slowloris_clients_are_cut_off_and_the_port_keeps_answering(ports: Ports, port_name: str, tls: bool,
                                                                     path: str) -> None:
    port = getattr(ports, port_name)
    ended, probes = probe_while(lambda: slowloris(port, tls, 30, give_up=DEADLINE + MARGIN + 3),
                                lambda: get_timed(port, tls, path))
    assert isinstance(ended, list)
    assert_cut_off_at_deadline(ended, DEADLINE, MARGIN)
    assert len(probes) >= 5 and all(status == 200 for status, _ in probes), probes
    slowest = max(seconds for _, seconds in probes)
    assert slowest < 1.0, f"{path} took {slowest:.2f}s next to 30 slow clients"


@pytest.mark.parametrize(("query", "says"), [
    ("sinceSeconds=100000000000", b'"sinceSeconds" is 100000000000: more than the'),
    ("sinceSeconds=99999999999999999999", b"value out of range"),
    ("sinceSeconds=-5", b'"sinceSeconds" is -5: must be at least 1'),
    ("sinceSeconds=0", b'"sinceSeconds" is 0: must be at least 1'),
    ("sinceSeconds=%EF%BC%95", b"invalid syntax"),  # a full-width digit: not one for Go
    ("tailLines=-1", b'"tailLines" is -1: must be at least 0'),
    ("tailLines=x", b'could not parse "tailLines"'),
    ("limitBytes=0", b'"limitBytes" is 0: must be at least 1'),
    ("limitBytes=1_000", b"invalid syntax"),
    ("timestamps=maybe", b'could not parse "timestamps"'),
    ("follow=tRuE", b'could not parse "follow"'),
    ("sinceTime=yesterday", b'could not parse "sinceTime"'),
    ("sinceTime=2024-01-01T00:00:00Z&sinceSeconds=5", b"both"),
])
def test_bad_log_queries_are_400_naming_the_parameter(ports: Ports, query: str, says: bytes) -> None:
    reply = request(ports.api, "GET", f"/containerLogs/default/web/c?{query}")
    assert status_of(reply) == 400, reply
    assert says in reply


def test_good_log_queries_are_served(ports: Ports) -> None:
    for query in ("", "sinceSeconds=60", "tailLines=0", "limitBytes=9223372036854775807", "timestamps=True"):
        reply = request(ports.api, "GET", f"/containerLogs/default/web/c?{query}")
        assert status_of(reply) == 200 and b"line" in reply, (query, reply)


def test_parse_log_options_keeps_go_integers() -> None:
    assert parse_log_options({"tailLines": ["+3"]}).tail == 3
    with pytest.raises(LogOptionsError, match="value out of range"):
        parse_log_options({"limitBytes": [str(1 << 63)]})


@pytest.mark.parametrize(("method", "path", "allow"), [
    ("POST", "/pods", b"GET, HEAD"),
    ("DELETE", "/containerLogs/default/web/c", b"GET, HEAD"),
    ("PUT", "/exec/default/web/c", b"GET"),
    ("POST", "/healthz", b"GET, HEAD"),
])
def test_wrong_methods_are_405_with_allow(ports: Ports, method: str, path: str, allow: bytes) -> None:
    reply = request(ports.api, method, path)
    assert status_of(reply) == 405, reply
    assert b"Allow: " + allow + b"\r\n" in reply


def test_wrong_methods_are_asked_about_first(ports: Ports) -> None:
    assert status_of(request(ports.api, "POST", "/pods", token=None)) == 401
    assert status_of(request(ports.api, "POST", "/nowhere")) == 404


@pytest.mark.parametrize("line", [b"GET /pods", b"GET", b"\x16\x03garbage /pods HTTP/1.1", b"GET /pods HTTP/9.9 x"])
def test_malformed_request_lines_are_400_never_http_0_9(ports: Ports, line: bytes) -> None:
    for port, tls in ((ports.api, True), (ports.metrics, False)):
        reply = raw(port, tls, line + b"\r\n\r\n")
        assert status_of(reply) == 400, reply  # an HTTP/1.1 status line, not a bare body
        assert b"400 Bad Request: malformed HTTP" in reply


def test_clients_going_away_mid_stream_leave_no_traceback(ports: Ports, caplog: pytest.LogCaptureFixture,
                                                          capfd: pytest.CaptureFixture[str]) -> None:
    from tests.serving.hostile import connect
    from tests.serving.test_serving_hostile import reset

    with no_tracebacks(caplog, capfd):
        follow = connect(ports.api, True)
        follow.sendall(f"GET /containerLogs/default/web/c?follow=true HTTP/1.1\r\nHost: vk\r\n"
                       f"Authorization: Bearer {ADMIN}\r\n\r\n".encode())
        assert follow.recv(65536)
        reset(follow)
        for _ in range(3):
            scrape = connect(ports.metrics, False)
            scrape.sendall(b"GET /metrics HTTP/1.1\r\nHost: vk\r\n\r\n")
            reset(scrape)
        time.sleep(0.5)
        assert get_timed(ports.metrics, False, "/metrics")[0] == 200
        assert status_of(request(ports.metrics, "POST", "/metrics", tls=False)) == 405


@pytest.mark.parametrize(("path", "says"), [
    ("/attach/default/web/c?stdout=1", b"not implemented"),
    ("/portForward/default/web", b"not implemented"),
    ("/exec/default/web/c?command=ls&stdout=1", b"not implemented"),
    ("/stats/summary", b"does not report stats"),
    ("/metrics/resource", b"does not report stats"),
])
def test_what_a_provider_does_not_implement_is_501_saying_so(ports: Ports, path: str, says: bytes) -> None:
    reply = request(ports.api, "GET", path)
    assert status_of(reply) == 501 and says in reply, reply
