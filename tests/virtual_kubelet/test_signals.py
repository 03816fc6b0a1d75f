"""SIGTERM at any moment of start-up stops the virtual kubelet cleanly: exit 0, no traceback from any process."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from componentbase.testing import LoopbackAPIServer, eventually
from tests.virtual_kubelet.conftest import Kube, free_ports, ready
from tests.virtual_kubelet.test_cli import _children, _env, _state

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]


def _start(apiserver: LoopbackAPIServer, *extra: str) -> subprocess.Popen[str]:
    port, = free_ports(1)
    return subprocess.Popen(
        [sys.executable, "-m", "componentbase_examples.virtual_kubelet", "--provider", "mock", "--kubeconfig",
         apiserver.kubeconfig_path, "--nodename", "vk", "--listen-port", str(port), "--metrics-addr=", *extra],
        cwd=ROOT, env=_env(VKUBELET_POD_IP="127.0.0.1"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _terminate(proc: subprocess.Popen[str], senders: list[int]) -> str:
    """SIGTERM, then the exit code must be 0 within a few seconds, with no traceback and no child left."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert time.monotonic() - sent < 10, err
    assert "Traceback" not in err and "Error" not in err, err
    eventually(lambda: all(_state(pid) in ("gone", "Z") for pid in senders), 5, what="the event sender to exit")
    return err


@pytest.mark.parametrize("phase", ["informers starting", "informers syncing"])
def test_sigterm_during_start_up_exits_0_without_a_traceback(apiserver: LoopbackAPIServer, kube: Kube,
                                                             phase: str) -> None:
    if phase == "informers syncing":
        apiserver.faults.set(stall=30, resources=["pods"], verbs=["list"])
    proc = _start(apiserver)
    try:
        # The node's first request: its event sender (a thread until Events come in bursts) is already up.
        eventually(lambda: apiserver.request_counts()[("list", "pods")] or proc.poll() is not None, 30,
                   what="the node's first list of pods")
        assert proc.poll() is None
        # "informers syncing": that list is the stalled one, in flight (the faults hold it for 30 s)
        _terminate(proc, _children(proc.pid))
    finally:
        apiserver.faults.clear()
    if phase == "informers syncing":
        assert kube.node() is None  # it stopped before registering anything


def test_a_process_runs_a_pod_and_sigterm_once_ready_marks_the_node_not_ready(apiserver: LoopbackAPIServer,
                                                                             kube: Kube) -> None:
    """The command as a process of its own, serving metrics too: it runs a pod and records its Event from its
    event sender; SIGTERM then stops it cleanly (``_terminate``) and the node is left NotReady. (Also what
    test_cli's end-to-end subprocess test checked, on a process of its own.)"""
    metrics, = free_ports(1)
    proc = _start(apiserver, f"--metrics-addr=127.0.0.1:{metrics}", "--startup-timeout=30s")
    senders: list[int] = []
    try:
        eventually(lambda: ready(kube.node()) or proc.poll() is not None, 30, what="the node to be Ready")
        assert proc.poll() is None
        kube.create_pod("web", [{"name": "c", "image": "nginx"}])
        eventually(lambda: kube.phase("web") == "Running", 10, what="the pod to run")
        eventually(lambda: any(e["reason"] == "ProviderCreateSuccess" and e["involvedObject"]["name"] == "web"
                             for e in kube.events()), 30, what="the ProviderCreateSuccess event")
        # The app records its Events from a child process, off the GIL of the status writes.
        senders = _children(proc.pid)
        assert senders, "no event sender process"
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=10) as resp:
            assert resp.status == 200  # the last --metrics-addr counts
    finally:
        _terminate(proc, senders)
    ready_cond = next(c for c in kube.node()["status"]["conditions"] if c["type"] == "Ready")
    assert ready_cond["status"] == "False"


def test_with_leader_election_only_the_leader_runs_the_node_and_a_stop_hands_it_over(
        apiserver: LoopbackAPIServer, kube: Kube) -> None:
    from tests.virtual_kubelet.conftest import Command

    def replica() -> Command:
        port, = free_ports(1)
        return Command(["--provider=mock", f"--kubeconfig={apiserver.kubeconfig_path}", "--nodename=vk",
                        f"--listen-port={port}", "--metrics-addr=", "--leader-elect",
                        "--leader-elect-lease-duration=2s", "--leader-elect-renew-deadline=1s",
                        "--leader-elect-retry-period=200ms"])

    first = replica()
    eventually(lambda: ready(kube.node()), 30, what="the leader's node to be Ready")
    holder = eventually(lambda: (kube.coordination.read_namespaced_lease("virtual-kubelet", "kube-node-lease")
                               .spec.holder_identity), 10, what="the leader's lease")
    second = replica()
    try:
        kube.create_pod("web", [{"name": "c", "image": "nginx"}])
        eventually(lambda: kube.phase("web") == "Running", 10, what="the leader to run the pod")
        assert first.stop() == 0  # releases the lease once the node is marked NotReady
        eventually(lambda: (kube.coordination.read_namespaced_lease("virtual-kubelet", "kube-node-lease")
                          .spec.holder_identity) not in (None, "", holder), 15, what="the standby to take over")
        eventually(lambda: ready(kube.node()), 15, what="the new leader to mark the node Ready")
        assert kube.phase("web") == "Running"
    finally:
        assert second.stop() == 0
    assert "Traceback" not in first.err.getvalue() + second.err.getvalue()
