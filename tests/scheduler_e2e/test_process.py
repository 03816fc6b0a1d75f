"""``python -m componentbase_examples.scheduler`` as users run it, against the loopback server, then SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from componentbase.testing import LoopbackAPIServer, eventually
from tests.scheduler.builders import node, pod

from .conftest import Cluster, bound, holder

#: Waits cover a fresh interpreter importing the client on a busy machine.
pytestmark = [pytest.mark.process, pytest.mark.timeout(150)]

ROOT = Path(__file__).resolve().parents[2]
LD, RD, RP = 2.0, 1.5, 0.2
#: Both replicas bind one pod at a time, each only to the nodes labelled with its own name, so every pod's
#: node says which replica bound it.
FENCED = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: {kubeconfig}
leaderElection:
  leaderElect: true
  leaseDuration: {ld}s
  renewDeadline: {rd}s
  retryPeriod: {rp}s
parallelism: 1
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 1
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {{key: replica, operator: In, values: [{replica}]}}
"""


class Proc:
    """``python -m componentbase_examples.scheduler`` with these flags; its stderr goes to a file (``log()``)."""

    def __init__(self, *args: str) -> None:
        self.err = tempfile.TemporaryFile("w+")
        self.p = subprocess.Popen([sys.executable, "-m", "componentbase_examples.scheduler", "--secure-port=0", *args],
                                  cwd=ROOT, stdout=subprocess.DEVNULL, stderr=self.err, text=True)

    def log(self) -> str:
        self.err.seek(0)
        return self.err.read()

    def terminate(self, timeout: float = 30.0) -> tuple[int, str]:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise AssertionError(f"the scheduler did not stop on SIGTERM:\n{self.log()[-3000:]}") from None
        return self.p.returncode, self.log()


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    yield started
    for p in started:
        if p.p.poll() is None:
            p.p.kill()
            p.p.wait()
        p.err.close()


def test_the_process_schedules_and_stops_cleanly(kube_apiserver: LoopbackAPIServer, cluster: Cluster,
                                                 procs: list[Proc]) -> None:
    for i in range(3):
        cluster.create(node(f"n{i}", cpu="2", memory="4Gi"))
    for i in range(12):
        cluster.create(pod(f"p{i}", cpu="400m"))
    procs.append(Proc(f"--kubeconfig={kube_apiserver.kubeconfig_path}", "--leader-elect=false"))
    cluster.wait("pods", lambda pods: len(bound(pods)) == 12, 45, what="the process binding all pods")
    cluster.create(pod("late", cpu="400m"))
    cluster.wait("pods", lambda pods: bound(pods).get("late"), 30, what="a pod created while running bound")
    cluster.assert_no_overcommit()
    code, err = procs[0].terminate()
    assert code == 0, err[-3000:]
    assert "Caches synced" in err
    assert cluster.lease_holder() == ""  # no leader election: no lease


def test_with_leader_election_only_the_leader_schedules_and_a_standby_takes_over(
        kube_apiserver: LoopbackAPIServer, cluster: Cluster, procs: list[Proc]) -> None:
    cluster.create(node("n0", cpu="8", memory="16Gi"))
    flags = (f"--kubeconfig={kube_apiserver.kubeconfig_path}", "--leader-elect=true",
             "--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s",
             "--leader-elect-retry-period=200ms")
    procs.append(Proc(*flags))
    first = cluster.wait("leases", holder, 45, what="a leader")
    procs.append(Proc(*flags))
    cluster.create(pod("before", cpu="100m"))
    cluster.wait("pods", lambda pods: bound(pods).get("before") == "n0", 45, what="the leader binding a pod")
    code, err = procs[0].terminate()  # releases the lease: the standby takes over at once
    assert code == 0, err[-3000:]
    cluster.wait("leases", lambda leases: holder(leases) not in ("", first), 30, what="the standby leading")
    cluster.create(pod("after", cpu="100m"))
    cluster.wait("pods", lambda pods: bound(pods).get("after") == "n0", 30, what="the new leader binding a pod")
    code, err = procs[1].terminate()
    assert code == 0, err[-3000:]
    acquired = err.index("successfully acquired lease kube-system/kube-scheduler")
    assert acquired < err.index("Caches synced"), "the standby started scheduling before it led"


def _fenced_config(server: LoopbackAPIServer, tmp_path: Path, replica: str) -> str:
    path = tmp_path / f"{replica}.yaml"
    path.write_text(FENCED.format(kubeconfig=server.kubeconfig_path, ld=LD, rd=RD, rp=RP, replica=replica))
    return f"--config={path}"


def _bound_by(nodes: dict[str, str], pods: dict[str, dict[str, Any]]) -> dict[str, list[int]]:
    """The resourceVersions of the bindings each replica made (a bound pod is written only by its binding), from
    the replica label of each node (``nodes``) and the ``pods`` by name."""
    by: dict[str, list[int]] = {"a": [], "b": []}
    for p in pods.values():
        if p["spec"].get("nodeName"):
            by[nodes[p["spec"]["nodeName"]]].append(int(p["metadata"]["resourceVersion"]))
    return by


def test_a_deposed_leader_sends_none_of_its_queued_bindings(kube_apiserver: LoopbackAPIServer, cluster: Cluster,
                                                           procs: list[Proc], tmp_path: Path) -> None:
    """SIGSTOP the leader with bindings queued; the standby takes over and binds; SIGCONT the old leader: none
    of its bindings is accepted after its successor's first, and it exits 1 (kube-scheduler's lost lease).

    Half the pods fit only the old leader's nodes: its successor never binds them, so a stale binding of one
    would be accepted, not refused as a conflict."""
    for replica in "ab":
        for i in range(2):
            cluster.create(node(f"{replica}{i}", cpu="32", memory="64Gi", labels={"replica": replica}))
    nodes = {name: n["metadata"]["labels"]["replica"] for name, n in cluster.nodes().items()}
    procs.append(Proc(_fenced_config(kube_apiserver, tmp_path, "a")))
    first = cluster.wait("leases", holder, 20, what="replica a leading")
    procs.append(Proc(_fenced_config(kube_apiserver, tmp_path, "b")))
    eventually(lambda: "attempting to acquire leader lease" in procs[1].log(), timeout=60,
               what="replica b synced and campaigning")
    # Each binding takes 0.4 s at the server: the leader queues the rest of its placements.
    kube_apiserver.faults.set(latency=0.4, verbs=["create"], path="/api/v1/namespaces/default/pods/")
    for i in range(12):
        cluster.create(pod(f"only-a-{i}", cpu="100m", nodeSelector={"replica": "a"}))
        cluster.create(pod(f"any-{i}", cpu="100m"))
    cluster.wait("pods", lambda pods: _bound_by(nodes, pods)["a"], 20, what="the leader's first binding")
    procs[0].p.send_signal(signal.SIGSTOP)
    cluster.wait("leases", lambda leases: holder(leases) not in ("", first), 10, what="the standby leading")
    cluster.wait("pods", lambda pods: _bound_by(nodes, pods)["b"], 10, what="the new leader's first binding")
    assert len(_bound_by(nodes, cluster.pods())["a"]) <= 4, \
        "the old leader had too few bindings queued to prove anything"
    procs[0].p.send_signal(signal.SIGCONT)
    try:
        procs[0].p.wait(timeout=15)
    finally:
        kube_apiserver.faults.clear()
    code, err = procs[0].terminate()
    assert code == 1, err[-3000:]
    assert "leaderelection lost" in err and "Traceback" not in err, err[-3000:]
    cluster.wait("pods", lambda pods: all(f"any-{i}" in bound(pods) for i in range(12)), 20,
                 what="the new leader binding the pods it can")
    by = _bound_by(nodes, cluster.pods())
    late = sum(rv > min(by["b"]) for rv in by["a"])
    assert late == 0, f"the deposed leader bound {late} pods after its successor's first binding"
    cluster.assert_no_overcommit()
    code, err = procs[1].terminate()
    assert code == 0 and "Traceback" not in err, err[-3000:]


@pytest.mark.parametrize("after", [0.05, 0.5, 0.9])
def test_sigterm_in_the_first_second_of_leading_releases_the_lease_at_once(
        kube_apiserver: LoopbackAPIServer, cluster: Cluster, procs: list[Proc], tmp_path: Path,
        after: float) -> None:
    """SIGTERM while the leader's work is starting (first bindings and Events out):
    the lease is released well before it would expire, the exit code is 0, and no process prints a traceback."""
    cluster.create(node("a0", cpu="32", memory="64Gi", labels={"replica": "a"}))
    for i in range(20):
        cluster.create(pod(f"p{i}", cpu="100m"))
    procs.append(Proc(_fenced_config(kube_apiserver, tmp_path, "a"), "-v=2"))
    cluster.wait("leases", holder, 20, what="the replica leading")
    time.sleep(after)  # the moment to stop it at: no condition to wait for
    stopped = time.monotonic()
    procs[0].p.send_signal(signal.SIGTERM)
    cluster.wait("leases", lambda leases: holder(leases) == "", 5, what="the lease released")
    released = time.monotonic() - stopped
    code = procs[0].p.wait(timeout=15)  # not terminate(): a second SIGTERM means "exit now", with 1
    err = procs[0].log()
    assert code == 0 and "Traceback" not in err, err[-3000:]
    # About retryPeriod + 0.1 s: under half the lease (unreleased, it would name the replica 2 s+), so a
    # standby takes over at once, and a loaded 2-core machine has 0.7 s to schedule the processes.
    assert released < LD / 2, f"lease released {released:.3f}s after SIGTERM"
