"""``python -m examples.scheduler`` as a user runs it: a process against the loopback server, then SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from componentbase.testing import LoopbackAPIServer, eventually
from tests.scheduler.builders import node, pod

from .conftest import Cluster

#: Waits cover a fresh interpreter importing the client on a busy machine.
pytestmark = [pytest.mark.process, pytest.mark.timeout(150)]

ROOT = Path(__file__).resolve().parents[2]


class Proc:
    def __init__(self, *args: str) -> None:
        self.p = subprocess.Popen([sys.executable, "-m", "examples.scheduler", "--secure-port=0", *args],
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def terminate(self, timeout: float = 30.0) -> tuple[int, str]:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            _, err = self.p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            _, err = self.p.communicate()
            raise AssertionError(f"the scheduler did not stop on SIGTERM:\n{err[-3000:]}") from None
        return self.p.returncode, err


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    yield started
    for p in started:
        if p.p.poll() is None:
            p.p.kill()
            p.p.communicate()


def test_the_process_schedules_and_stops_cleanly(kube_apiserver: LoopbackAPIServer, cluster: Cluster,
                                                 procs: list[Proc]) -> None:
    for i in range(3):
        cluster.create(node(f"n{i}", cpu="2", memory="4Gi"))
    for i in range(12):
        cluster.create(pod(f"p{i}", cpu="400m"))
    procs.append(Proc(f"--kubeconfig={kube_apiserver.kubeconfig_path}", "--leader-elect=false"))
    eventually(lambda: len(cluster.bound()) == 12, timeout=45, what="the process binding all pods")
    cluster.create(pod("late", cpu="400m"))
    eventually(lambda: cluster.node_of("late"), timeout=30, what="a pod created while running bound")
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
    eventually(lambda: cluster.lease_holder(), timeout=45, what="a leader")
    first = cluster.lease_holder()
    procs.append(Proc(*flags))
    cluster.create(pod("before", cpu="100m"))
    eventually(lambda: cluster.node_of("before") == "n0", timeout=45, what="the leader binding a pod")
    code, err = procs[0].terminate()  # releases the lease: the standby takes over at once
    assert code == 0, err[-3000:]
    eventually(lambda: cluster.lease_holder() not in ("", first), timeout=30, what="the standby leading")
    cluster.create(pod("after", cpu="100m"))
    eventually(lambda: cluster.node_of("after") == "n0", timeout=30, what="the new leader binding a pod")
    code, err = procs[1].terminate()
    assert code == 0, err[-3000:]
    acquired = err.index("successfully acquired lease kube-system/kube-scheduler")
    assert acquired < err.index("Caches synced"), "the standby started scheduling before it led"
