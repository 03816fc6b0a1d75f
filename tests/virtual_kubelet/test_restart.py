"""A virtual kubelet SIGKILLed and started again under running process pods: nothing runs twice, nothing is lost."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from componentbase.testing import FakeClock, LoopbackAPIServer, NodeLifecycle, eventually
from tests.virtual_kubelet.conftest import Kube, free_ports, ready
from tests.virtual_kubelet.test_cli import _env

pytestmark = [pytest.mark.process, pytest.mark.timeout(180)]  # two starts of a process each

ROOT = Path(__file__).resolve().parents[2]

#: Counts its runs in RUNS/<name>, then waits for GO/<name> and exits with the code written there (taking the file).
SCRIPT = """
import os, sys, time
name, runs, go = sys.argv[1:4]
with open(os.path.join(runs, name), "a") as f:
    f.write("run\\n")
flag, deadline = os.path.join(go, name), time.monotonic() + 50
while not os.path.exists(flag) and time.monotonic() < deadline:
    time.sleep(0.05)
code = int(open(flag).read()) if os.path.exists(flag) else 99
os.remove(flag) if os.path.exists(flag) else None
sys.exit(code)
"""


class VirtualKubelet:
    """``python -m componentbase_examples.virtual_kubelet --provider process`` as a process of its own."""

    def __init__(self, apiserver: LoopbackAPIServer, tmp: Path) -> None:
        self.apiserver = apiserver
        self.config = tmp / "process.yaml"
        self.config.write_text(f"root: {tmp / 'root'}\nrestartBackoff: 50ms\nmaxRestartBackoff: 200ms\n"
                               "shutdownGracePeriod: 1s\nstopContainersOnShutdown: true\n")
        self.proc: subprocess.Popen[str] | None = None
        self.log = tmp / "vk.log"  # a file, not a pipe: a pipe nobody reads would block the process once full

    def start(self) -> subprocess.Popen[str]:
        port, = free_ports(1)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "componentbase_examples.virtual_kubelet", "--provider=process",
             f"--provider-config={self.config}", f"--kubeconfig={self.apiserver.kubeconfig_path}", "--nodename=vk",
             f"--listen-port={port}", "--metrics-addr=", "--startup-timeout=30s"],
            cwd=ROOT, env=_env(VKUBELET_POD_IP="127.0.0.1"), stdout=subprocess.DEVNULL,
            stderr=self.log.open("a"), text=True)
        return self.proc

    def stop(self) -> str:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        return self.log.read_text()


@pytest.fixture
def vk(apiserver: LoopbackAPIServer, tmp_path: Path) -> Iterator[VirtualKubelet]:
    handle = VirtualKubelet(apiserver, tmp_path)
    before = {p.pid for p in psutil.process_iter()}
    try:
        yield handle
    finally:
        if handle.proc is not None and handle.proc.poll() is None:
            handle.stop()
        for p in psutil.process_iter(["cmdline"]):  # whatever a failed test left of the pods' processes
            if p.pid not in before and str(tmp_path) in " ".join(p.info["cmdline"] or ()):
                p.kill()


def _release(flag: Path, code: int) -> None:
    """Tell SCRIPT to exit with ``code``: the file appears whole (renamed into place), never empty."""
    flag.with_suffix(".tmp").write_text(str(code))
    flag.with_suffix(".tmp").rename(flag)


def _status(kube: Kube, name: str) -> dict[str, Any]:
    return (kube.pod(name) or {}).get("status") or {}


def _container(kube: Kube, name: str) -> dict[str, Any]:
    return (_status(kube, name).get("containerStatuses") or [{}])[0]


def _pid(kube: Kube, name: str) -> int:
    return int(str(_container(kube, name).get("containerID", "process://0")).removeprefix("process://"))


def test_sigkilled_and_restarted_under_20_never_pods_runs_each_once_and_reports_what_ended_meanwhile(
        vk: VirtualKubelet, kube: Kube, apiserver: LoopbackAPIServer, tmp_path: Path) -> None:
    """While it is gone, the node lifecycle controller (``NodeLifecycle``, kube-controller-manager's part on a
    cluster; its grace period passes on a fake clock) turns the node Unknown and the pods not Ready, which
    stay Running; once it is back the node is Ready again without the unreachable taints and the pods still
    running are Ready again. (That was a test of its own, with two virtual kubelet processes more.)"""
    runs, go = tmp_path / "runs", tmp_path / "go"
    runs.mkdir()
    go.mkdir()
    names = [f"job-{i}" for i in range(20)]
    clock = FakeClock()
    # Its passes only matter after the clock steps: a few a second keep the waits below short.
    with NodeLifecycle(apiserver, grace_period=40, monitor_period=0.2, clock=clock) as lifecycle:
        first = vk.start()
        eventually(lambda: ready(kube.node()) or first.poll() is not None, 60, what="the node to be Ready")
        for name in names:
            kube.create_pod(name, [{"name": "c", "image": "none", "command": [sys.executable, "-c", SCRIPT],
                                    "args": [name, str(runs), str(go)]}], restartPolicy="Never")
        eventually(lambda: all(_container(kube, n).get("state", {}).get("running") for n in names), 90,
                   what="all 20 pods to run")
        eventually(lambda: all(_ready(kube.pod(n)) == "True" for n in names), 30, what="the pods to be Ready")
        pids = {name: _pid(kube, name) for name in names}

        first.send_signal(signal.SIGKILL)
        first.wait(10)
        assert all(psutil.pid_exists(pid) for pid in pids.values()), "a container died with the virtual kubelet"
        lifecycle.sync()  # its last heartbeat, seen now
        clock.step(41)
        node = eventually(lambda: (n := kube.node()) and _ready(n) == "Unknown" and n, 10,
                          what="the node to turn Unknown")
        assert next(c for c in node["status"]["conditions"] if c["type"] == "Ready")["reason"] == "NodeStatusUnknown"
        eventually(lambda: all(_ready(kube.pod(n)) == "False" for n in names), 30,
                   what="the pods to stop being Ready")
        # Their processes still run: only Ready is withdrawn.
        assert all(_status(kube, n)["phase"] == "Running" for n in names)

        ended = {name: i for i, name in enumerate(names[:10])}  # exit codes 0..9, written while no one watches
        for name, code in ended.items():
            _release(go / name, code)
        eventually(lambda: not any(psutil.pid_exists(pids[n]) for n in ended), 20, what="ten containers to exit")

        second = vk.start()
        eventually(lambda: all(_status(kube, n).get("phase") in ("Succeeded", "Failed") for n in ended), 60,
                   what="the pods that ended meanwhile to be reported")
        for name, code in ended.items():
            state = _container(kube, name)["state"]["terminated"]
            assert (state["exitCode"], state["reason"]) == (code, "Completed" if code == 0 else "Error"), name
            assert _status(kube, name)["phase"] == ("Succeeded" if code == 0 else "Failed")
        for name in names[10:]:  # still running: the same process, taken up again
            assert _status(kube, name)["phase"] == "Running"
            assert _container(kube, name)["state"].get("running") and _pid(kube, name) == pids[name]
        eventually(lambda: _ready(kube.node()) == "True" and not (kube.node() or {})["spec"].get("taints", [])[1:],
                   60, what="the node to be Ready again, without the unreachable taints")
        eventually(lambda: all(_ready(kube.pod(n)) == "True" for n in names[10:]), 60,
                   what="the pods still running to be Ready again")
        assert second.poll() is None

    for i, name in enumerate(names[10:]):
        _release(go / name, 20 + i)
    eventually(lambda: all(_status(kube, n).get("phase") == "Failed" for n in names[10:]), 60,
               what="the adopted pods to end")
    for i, name in enumerate(names[10:]):
        assert _container(kube, name)["state"]["terminated"]["exitCode"] == 20 + i
    assert {name: (runs / name).read_text() for name in names} == {name: "run\n" for name in names}
    assert all(_container(kube, n)["restartCount"] == 0 for n in names)
    err = vk.stop()
    assert "Traceback" not in err, err


def test_restart_count_goes_on_across_restarts_and_a_reused_pid_is_not_adopted(
        vk: VirtualKubelet, kube: Kube, tmp_path: Path) -> None:
    runs, go = tmp_path / "runs", tmp_path / "go"
    runs.mkdir()
    go.mkdir()
    first = vk.start()
    eventually(lambda: ready(kube.node()) or first.poll() is not None, 60, what="the node to be Ready")
    for name in ("always", "gone"):
        kube.create_pod(name, [{"name": "c", "image": "none", "command": [sys.executable, "-c", SCRIPT],
                                "args": [name, str(runs), str(go)]}], restartPolicy="Always")
    _release(go / "always", 3)
    eventually(lambda: _container(kube, "always").get("restartCount") == 1
               and _container(kube, "always")["state"].get("running"), 30, what="a restart")
    eventually(lambda: (runs / "always").read_text() == "run\nrun\n", what="the second run")
    eventually(lambda: _container(kube, "gone").get("state", {}).get("running"), 30, what="the pod to run")
    pid = _pid(kube, "always")
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    _release(go / "always", 3)  # it ends while no one watches; Always: it runs again, counted on
    psutil.Process(pid).wait(10)

    # One container's shim is killed and its pid handed to an unrelated program's record: not adopted.
    shim_dir = next((tmp_path / "root" / "pods").glob("default_gone_*")) / "c"
    record = shim_dir / "0.run.json"
    run = json.loads(record.read_text())
    psutil.Process(run["shimPid"]).kill()
    psutil.Process(run["pid"]).wait(10)  # it dies with its shim
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        record.write_text(json.dumps({**run, "shimPid": stranger.pid, "pid": stranger.pid}))

        second = vk.start()
        eventually(lambda: _container(kube, "always").get("restartCount") == 2 and
                   _container(kube, "always")["state"].get("running"), 60, what="the next restart")
        assert _container(kube, "always")["lastState"]["terminated"]["exitCode"] == 3
        eventually(lambda: (runs / "always").read_text() == "run\n" * 3, what="the third run")
        gone = eventually(lambda: _container(kube, "gone").get("restartCount", 0) >= 1 and _container(kube, "gone"),
                          60, what="the lost container to be restarted")
        assert gone["lastState"]["terminated"]["reason"] == "ContainerStatusUnknown"
        assert stranger.poll() is None, "a process that only got a recorded pid was signalled"
    finally:
        stranger.kill()
        stranger.wait()
    assert second.poll() is None
    vk.stop()


def _ready(obj: dict[str, Any] | None) -> str | None:
    conds = ((obj or {}).get("status") or {}).get("conditions") or ()
    return next((c["status"] for c in conds if c["type"] == "Ready"), None)
