"""``--trace-exporter``: spans of a virtual kubelet process reach an OTLP collector; without it, no OpenTelemetry.

The collector is a stub: the standard library's HTTP server taking ``POST /v1/traces`` and decoding the
exporter's protobuf with opentelemetry-proto (which comes with the exporter).
"""

from __future__ import annotations

import gzip
import http.server
import io
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from componentbase.testing import LoopbackAPIServer, eventually
from tests.serving.hostile import raw, status_of
from tests.virtual_kubelet.conftest import ADMIN, Kube, free_ports, ready

ROOT = Path(__file__).resolve().parents[2]
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
#: A caller's W3C trace context, sampled (flags 01).
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
#: Runs the command as ``python -m`` does, then says which OpenTelemetry modules the process imported.
PROBE = """import atexit, runpy, sys
atexit.register(lambda: print("otel:", ",".join(sorted(m for m in sys.modules if m.startswith("opentelemetry"))),
                              file=sys.stderr, flush=True))
sys.argv[0] = "virtual-kubelet"
runpy.run_module("componentbase_examples.virtual_kubelet", run_name="__main__")
"""


@attrs.frozen
class Span:
    name: str
    trace_id: str
    attributes: dict[str, Any]
    resource: dict[str, Any]


def _values(pairs: Any) -> dict[str, Any]:
    return {kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in pairs}


class Collector(http.server.ThreadingHTTPServer):
    """An OTLP/HTTP trace receiver on 127.0.0.1 keeping every span it is sent."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Receive)
        self.spans: list[Span] = []
        self.lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1/traces"

    def named(self, name: str) -> list[Span]:
        with self.lock:
            return [s for s in self.spans if s.name == name]


class _Receive(http.server.BaseHTTPRequestHandler):
    server: Collector

    def do_POST(self) -> None:  # http.server's name
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request = ExportTraceServiceRequest.FromString(body)
        with self.server.lock:
            for resource_spans in request.resource_spans:
                resource = _values(resource_spans.resource.attributes)
                for scope in resource_spans.scope_spans:
                    self.server.spans += [Span(s.name, s.trace_id.hex(), _values(s.attributes), resource)
                                          for s in scope.spans]
        reply = ExportTraceServiceResponse().SerializeToString() if self.path == "/v1/traces" else b""
        self.send_response(200 if self.path == "/v1/traces" else 404)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads the spans, not the access log."""


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


class VirtualKubelet:
    """The command as a process (through ``PROBE``), with the mock provider, until ``stop()``."""

    def __init__(self, apiserver: LoopbackAPIServer, args: list[str], env: dict[str, str]) -> None:
        self.port, = free_ports(1)
        command = [sys.executable, "-c", PROBE, "--provider=mock", f"--kubeconfig={apiserver.kubeconfig_path}",
                   "--nodename=vk", f"--listen-port={self.port}", "--metrics-addr=", *args]
        environ = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k != "KUBECONFIG"}
        self.proc = subprocess.Popen(command, cwd=ROOT, env={**environ, "VKUBELET_POD_IP": "127.0.0.1", **env},
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def get(self, path: str, headers: str = "") -> int:
        """A kubelet API call as the API server's client makes it (the admin's token), with extra headers."""
        return status_of(raw(self.port, True, f"GET {path} HTTP/1.1\r\nHost: vk\r\nAuthorization: Bearer {ADMIN}\r\n"
                                              f"{headers}Connection: close\r\n\r\n".encode()))

    def stop(self) -> tuple[int, str, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            out, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        return self.proc.returncode, out, err


def _run_a_pod(vk: VirtualKubelet, kube: Kube) -> None:
    eventually(lambda: ready(kube.node()) or vk.proc.poll() is not None, 30, what="the node to be Ready")
    assert vk.proc.poll() is None, vk.stop()
    kube.create_pod("web", [{"name": "c", "image": "nginx"}])
    eventually(lambda: kube.phase("web") == "Running", 15, what="the pod to run")
    assert vk.get("/pods", f"traceparent: {TRACEPARENT}\r\n") == 200


def _otel_modules(err: str) -> list[str]:
    line = next(line for line in err.splitlines() if line.startswith("otel:"))
    return [m for m in line.removeprefix("otel:").strip().split(",") if m]


@pytest.mark.process
def test_otlp_exporter_sends_pod_sync_status_and_kubelet_api_spans(apiserver: LoopbackAPIServer, kube: Kube,
                                                                   collector: Collector) -> None:
    vk = VirtualKubelet(apiserver, ["--trace-exporter=otlp"],
                        {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "200"})
    try:
        _run_a_pod(vk, kube)
        eventually(lambda: collector.named("GET /pods"), 15, what="the kubelet API span")
    finally:
        code, _, err = vk.stop()
    assert code == 0, err
    assert "opentelemetry.exporter.otlp.proto.http" in _otel_modules(err)
    sync = [s for s in collector.named("syncPodFromKubernetesHandler") if s.attributes.get("key") == "default/web"]
    assert sync, [s.name for s in collector.spans]
    assert sync[0].resource["service.name"] == "virtual-kubelet"
    assert {sync[0].resource[k] for k in ("nodeName", "provider", "operatingSystem")} == {"vk", "mock", "linux"}
    created, = collector.named("createOrUpdatePod")
    assert created.trace_id == sync[0].trace_id  # a child of the sync
    assert {k: created.attributes[k] for k in ("namespace", "name")} == {"namespace": "default", "name": "web"}
    assert any(s.attributes.get("name") == "web" and s.attributes.get("phase") == "Running"
               for s in collector.named("updatePodStatus"))
    assert collector.named("node.updateStatus")
    api, = collector.named("GET /pods")
    assert api.trace_id == TRACE_ID  # joined the caller's trace
    assert api.attributes["http.response.status_code"] == 200


@pytest.mark.process
def test_sample_rate_zero_keeps_only_traces_a_caller_sampled(apiserver: LoopbackAPIServer, kube: Kube,
                                                              collector: Collector) -> None:
    vk = VirtualKubelet(apiserver, ["--trace-exporter=otlp", "--trace-sample-rate=0"],
                        {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "200"})
    try:
        _run_a_pod(vk, kube)
        assert vk.get("/runningpods/") == 200  # no caller's trace: a new one, not sampled at 0
    finally:
        code, _, err = vk.stop()  # the exporter sends what is batched before the process exits
    assert code == 0, err
    assert {(s.name, s.trace_id) for s in collector.spans} == {("GET /pods", TRACE_ID)}


@pytest.mark.process
def test_without_an_exporter_no_opentelemetry_module_is_imported(apiserver: LoopbackAPIServer, kube: Kube) -> None:
    vk = VirtualKubelet(apiserver, [], {})
    try:
        _run_a_pod(vk, kube)
    finally:
        code, _, err = vk.stop()
    assert code == 0, err
    assert _otel_modules(err) == []


@pytest.mark.unit
def test_otlp_without_the_package_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from componentbase.serving import configz
    from componentbase_examples.virtual_kubelet.__main__ import new_command

    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    cmd = new_command()
    cmd.configz_registry = configz.Registry()
    err = io.StringIO()
    code = cmd.execute(["--provider=mock", "--nodename=vk", "--trace-exporter=otlp"], stdout=io.StringIO(), stderr=err)
    assert code == 1
    assert err.getvalue().splitlines() == [
        """Error: trace-exporter: Invalid value: "otlp": needs the OpenTelemetry packages: pip install """
        "'componentbase[tracing]'"]
