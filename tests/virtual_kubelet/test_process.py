"""The process provider through the whole command: real processes, logs and exec over the kubelet API (TLS)."""

from __future__ import annotations

import base64
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from componentbase.testing import LoopbackAPIServer, eventually
from tests.virtual_kubelet.conftest import (
    ADMIN,
    NOBODY,
    PATHS,
    VIEWER,
    Command,
    Kube,
    authorizing_server,
    clear_pods,
    free_ports,
    ready,
    serve_kubelet_api_on_localhost,
)

#: One node for the module (``node``): its tests run on the worker that started it.
pytestmark = [pytest.mark.process, pytest.mark.xdist_group("vk-process")]


class VK:
    def __init__(self, command: Command, port: int, metrics_port: int, ca: str) -> None:
        self.command = command
        self.port = port
        self.metrics_port = metrics_port
        self.context = ssl.create_default_context(cafile=ca)
        self.ca_file = ca

    def get(self, path: str, token: str | None = ADMIN) -> tuple[int, bytes]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        req = urllib.request.Request(f"https://127.0.0.1:{self.port}{path}", headers=headers)
        try:
            with urllib.request.urlopen(req, context=self.context, timeout=10) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def exec(self, pod: str, command: list[str], stdin: bytes | None = None, token: str = ADMIN,
             protocol: str = "v5.channel.k8s.io") -> tuple[bytes, bytes, dict[str, Any]]:
        import websocket

        query = "&".join(f"command={urllib.request.quote(c)}" for c in command)
        query += "&stdout=true&stderr=true" + ("&stdin=true" if stdin is not None else "")
        ws = websocket.create_connection(
            f"wss://127.0.0.1:{self.port}/exec/default/{pod}/c?{query}", header=[f"Authorization: Bearer {token}"],
            subprotocols=[protocol], sslopt={"ca_certs": self.ca_file}, timeout=10)
        if stdin is not None:
            ws.send_binary(b"\x00" + stdin)
            ws.send_binary(b"\xff\x00")
        out, err, status = b"", b"", {}
        while True:
            opcode, data = ws.recv_data()
            if opcode == 8:  # close
                break
            if data[:1] == b"\x01":
                out += data[1:]
            elif data[:1] == b"\x02":
                err += data[1:]
            elif data[:1] == b"\x03":
                status = json.loads(data[1:])
        ws.close()
        return out, err, status


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackAPIServer]:
    """One server per module (tests/virtual_kubelet/conftest.py's ``authorizing_server``), for ``node``."""
    with authorizing_server(tmp_path_factory.mktemp("apiserver")) as server:
        yield server


@pytest.fixture(scope="module")
def node(apiserver: LoopbackAPIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VK]:
    """One process-provider node per module: its tests each run their own pods on it (``vk`` clears them
    after each). A node per test cost a node's start-up and its event sender's process every time."""
    tmp_path = tmp_path_factory.mktemp("node")
    with pytest.MonkeyPatch.context() as monkeypatch:
        serve_kubelet_api_on_localhost(tmp_path, monkeypatch)
        (tmp_path / "process.yaml").write_text(f"root: {tmp_path / 'root'}\nrestartBackoff: 50ms\n"
                                               "maxRestartBackoff: 200ms\nshutdownGracePeriod: 1s\n"
                                               "stopContainersOnShutdown: true\n")
        port, metrics_port = free_ports(2)
        command = Command(["--provider=process", f"--provider-config={tmp_path / 'process.yaml'}",
                           f"--kubeconfig={apiserver.kubeconfig_path}", "--nodename=vk", f"--listen-port={port}",
                           f"--metrics-addr=127.0.0.1:{metrics_port}", "--startup-timeout=20s"])
        handle = VK(command, port, metrics_port, str(tmp_path / "vk.crt"))
        api = apiserver.api_client()
        try:
            eventually(lambda: ready(Kube(api).node()) or command.code, 20, what="the node to be Ready")
            assert not command.code, command.err.getvalue()
            yield handle
        finally:
            api.close()
            assert command.stop() == 0, command.err.getvalue()


@pytest.fixture
def vk(node: VK, apiserver: LoopbackAPIServer, kube: Kube) -> Iterator[VK]:
    """The module's node, left as the test found it: no faults, the test's pods deleted (their processes
    ended), the node still Ready."""
    yield node
    apiserver.faults.clear()
    clear_pods(kube)
    assert ready(kube.node()), "the node is no longer Ready"


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def container(command: list[str], **extra: Any) -> list[dict[str, Any]]:
    return [{"name": "c", "image": "ignored", "command": command, **extra}]


def pid_of(kube: Kube, pod: str) -> int:
    cid = eventually(lambda: ((kube.pod(pod) or {}).get("status", {}).get("containerStatuses") or [{}])[0]
                   .get("containerID"), what="a container id")
    return int(cid.removeprefix("process://"))


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_pod_runs_to_success_with_env_from_configmaps_and_secrets_and_its_logs_are_served(
        vk: VK, kube: Kube, apiserver: LoopbackAPIServer) -> None:
    # The ConfigMap and Secret are created just before the pod: the node's watches of them are held back
    # here, so they are not in its caches when the pod comes, and a restartPolicy Never pod must not fail for it.
    apiserver.faults.set(stall=30, resources=["configmaps", "secrets"], verbs=["watch"])
    apiserver.faults.close_watches()
    kube.core.create_namespaced_config_map("default", {"metadata": {"name": "settings"}, "data": {"greeting": "hi"}},
                                           _preload_content=False)
    kube.core.create_namespaced_secret("default", {"metadata": {"name": "creds"},
                                                   "data": {"TOKEN": base64.b64encode(b"s3cret").decode()}},
                                       _preload_content=False)
    env = [{"name": "GREETING", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "greeting"}}},
           {"name": "WHO", "value": "$(GREETING) world"},
           {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    code = "import os,sys; print(os.environ['WHO'], flush=True); print(os.environ['TOKEN'], os.environ['POD'], " \
           "flush=True); print('to stderr', file=sys.stderr)"
    kube.create_pod("job", container(py(code), env=env, envFrom=[{"secretRef": {"name": "creds"}}]),
                    restartPolicy="Never")
    eventually(lambda: kube.phase("job") == "Succeeded", what="the pod to succeed")
    apiserver.faults.clear()
    (cs,) = kube.pod("job")["status"]["containerStatuses"]
    assert cs["state"]["terminated"]["exitCode"] == 0 and cs["state"]["terminated"]["reason"] == "Completed"
    code_, body = vk.get("/containerLogs/default/job/c")
    assert code_ == 200 and body == b"hi world\ns3cret job\nto stderr\n"
    assert vk.get("/containerLogs/default/job/c?tailLines=1") == (200, b"to stderr\n")
    assert vk.get("/containerLogs/default/job/c?limitBytes=4") == (200, b"hi w")
    _, stamped = vk.get("/containerLogs/default/job/c?timestamps=true")
    first = stamped.splitlines()[0].decode()
    assert first.endswith(" hi world") and first[:4].isdigit() and "T" in first.split(" ")[0]


def test_a_pod_whose_configmap_is_missing_fails_and_one_that_cannot_be_read_waits(
        vk: VK, kube: Kube, apiserver: LoopbackAPIServer) -> None:
    ref = {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "missing", "key": "x"}}}
    kube.create_pod("nocm", container(py("pass"), env=[ref]), restartPolicy="Never")
    eventually(lambda: kube.phase("nocm") == "Failed", what="the pod to fail")
    status = kube.pod("nocm")["status"]
    assert status["reason"] == "ProviderFailed" and status["message"] == 'configmap "default/missing" not found'

    # A ConfigMap the API server cannot be asked about is not "missing": the pod waits and is retried.
    late = {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "late", "key": "x"}}}
    apiserver.faults.set(error_rate=1.0, error_code=500, resources=["configmaps"], verbs=["get"])
    kube.create_pod("waits", container(py("pass"), env=[late]), restartPolicy="Never")
    [event] = eventually(lambda: [e for e in kube.events() if e["involvedObject"]["name"] == "waits"
                                and e["reason"] == "ProviderCreateFailed"], what="a ProviderCreateFailed event")
    assert event["message"].startswith('reading configmap "default/late": 500') and "\n" not in event["message"]
    assert kube.phase("waits") == "Pending"
    kube.core.create_namespaced_config_map("default", {"metadata": {"name": "late"}, "data": {"x": "1"}},
                                           _preload_content=False)
    apiserver.faults.clear()
    eventually(lambda: kube.phase("waits") == "Succeeded", what="the pod to succeed once its ConfigMap is read")


def test_the_kubelet_api_needs_a_caller_the_api_server_authorizes(vk: VK, kube: Kube,
                                                                   apiserver: LoopbackAPIServer) -> None:
    kube.create_pod("job", container(py("print('x')")), restartPolicy="Never")
    eventually(lambda: kube.phase("job") == "Succeeded", what="the pod to succeed")
    apiserver.faults.set(error_rate=1.0, resources=["subjectaccessreviews"])
    assert vk.get("/containerLogs/default/job/c", token=VIEWER) == \
        (500, b"Authorization error (user=viewer, verb=get, resource=nodes, subresource=proxy)\n")
    apiserver.faults.clear()  # a failure to ask is not remembered: the next request asks again
    assert vk.get("/containerLogs/default/job/c", token=None)[0] == 401
    assert vk.get("/containerLogs/default/job/c", token="not-a-token")[0] == 401
    code, body = vk.get("/containerLogs/default/job/c", token=NOBODY)
    assert (code, body) == (403, b"Forbidden (user=nobody, verb=get, resource=nodes, subresource=proxy)\n")
    # Asked as the kubelet asks: nodes/proxy of this node, not the path.
    assert vk.get("/containerLogs/default/job/c", token=PATHS)[0] == 403
    assert vk.get("/containerLogs/default/job/c", token=VIEWER) == (200, b"x\n")
    assert vk.get("/runningpods/", token=VIEWER)[0] == 200
    assert vk.get("/healthz", token=None) == (200, b"ok\n")
    code, body = vk.get("/pods", token=VIEWER)
    assert code == 200 and [p["metadata"]["name"] for p in json.loads(body)["items"]] == ["job"]
    assert vk.get("/containerLogs/default/job/c?tailLines=x")[0] == 400
    assert vk.get("/containerLogs/default/nope/c")[0] == 404
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{vk.metrics_port}/metrics", timeout=10).read()
    assert b"rest_client_requests_total" in metrics


def test_follow_streams_the_log_as_it_is_written(vk: VK, kube: Kube) -> None:
    kube.create_pod("ticker", container(py("import time; print('one', flush=True); time.sleep(1.0); print('two')")),
                    restartPolicy="Never")
    eventually(lambda: kube.phase("ticker") == "Running", what="the pod to run")
    req = urllib.request.Request(f"https://127.0.0.1:{vk.port}/containerLogs/default/ticker/c?follow=true",
                                 headers={"Authorization": f"Bearer {ADMIN}"})
    with urllib.request.urlopen(req, context=vk.context, timeout=10) as resp:
        first = resp.readline()
        assert first == b"one\n" and kube.phase("ticker") == "Running"  # streamed before the process ended
        assert resp.readline() == b"two\n"
        assert resp.read() == b""  # the stream ends with the container


def test_deleting_a_pod_kills_its_process_within_the_grace_period(vk: VK, kube: Kube) -> None:
    stubborn = "import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); " \
               "time.sleep(60)"
    kube.create_pod("stubborn", container(py(stubborn)), terminationGracePeriodSeconds=1)
    eventually(lambda: kube.phase("stubborn") == "Running", what="the pod to run")
    pid = pid_of(kube, "stubborn")
    eventually(lambda: vk.get("/containerLogs/default/stubborn/c")[1] == b"up\n", what="SIGTERM to be ignored")
    assert not gone(pid)
    started = time.monotonic()
    kube.delete_pod("stubborn")
    eventually(lambda: kube.pod("stubborn") is None, 10, what="the pod to be removed")
    assert gone(pid), "the process outlived its pod"
    assert 0.9 < time.monotonic() - started < 6  # SIGTERM ignored: SIGKILL after the 1s grace


def test_exec_over_websocket_returns_output_and_exit_status(vk: VK, kube: Kube) -> None:
    kube.create_pod("shell", container(["sleep", "30"], env=[{"name": "FOO", "value": "bar"}]))
    eventually(lambda: kube.phase("shell") == "Running", what="the pod to run")
    out, err, status = vk.exec("shell", ["sh", "-c", "echo $FOO; cat; echo bad >&2; exit 3"], stdin=b"typed\n")
    assert (out, err) == (b"bar\ntyped\n", b"bad\n")
    assert status["status"] == "Failure" and status["reason"] == "NonZeroExitCode"
    assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "3"}]
    out, _, status = vk.exec("shell", ["echo", "fine"], protocol="v4.channel.k8s.io")
    assert out == b"fine\n" and status == {"metadata": {}, "status": "Success"}
    _, _, status = vk.exec("shell", ["no-such-command-here"])
    assert status["status"] == "Failure" and "executable file not found" in status["message"]


def test_restart_policies_and_previous_logs(vk: VK, kube: Kube) -> None:
    kube.create_pod("flaky", container(py("print('attempt'); raise SystemExit(1)")), restartPolicy="OnFailure")
    kube.create_pod("once", container(py("raise SystemExit(3)")), restartPolicy="Never")
    kube.create_pod("imageonly", [{"name": "c", "image": "nginx"}])
    status = eventually(lambda: ((kube.pod("flaky") or {}).get("status", {}).get("containerStatuses") or [{}])[0]
                      .get("restartCount", 0) >= 2 and kube.pod("flaky")["status"], what="restarts")
    assert status["phase"] == "Running"
    assert status["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 1
    assert vk.get("/containerLogs/default/flaky/c?previous=true") == (200, b"attempt\n")
    eventually(lambda: kube.phase("once") == "Failed", what="the Never pod to fail")
    assert kube.pod("once")["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3
    eventually(lambda: kube.phase("imageonly") == "Failed", what="the pod without a command to fail")
    assert kube.pod("imageonly")["status"]["reason"] == "NoCommand"
    assert "has no command" in kube.pod("imageonly")["status"]["message"]
