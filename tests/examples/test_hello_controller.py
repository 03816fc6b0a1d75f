"""``python -m componentbase_examples.hello``: the smallest controller; two replicas hand over on SIGKILL, SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes.client.exceptions import ApiException

from componentbase.client import ObjectClient
from componentbase.testing import LoopbackAPIServer, eventually
from tests.controller.helpers import configmap

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
TIMING = ["--leader-elect-lease-duration=2s", "--leader-elect-renew-deadline=1500ms",
          "--leader-elect-retry-period=200ms", "--leader-elect-resource-namespace=default",
          "--secure-port=0"]  # two replicas on one host: serving is tested in test_controller_command.py


class Replica:
    """One ``python -m componentbase_examples.hello`` process, its log in a file."""

    def __init__(self, server: LoopbackAPIServer, log: Path) -> None:
        self.log = log
        with log.open("w") as f:
            self.proc = subprocess.Popen([sys.executable, "-m", "componentbase_examples.hello",
                                          f"--kubeconfig={server.kubeconfig_path}", *TIMING], cwd=ROOT, stderr=f)

    def logged(self, text: str) -> bool:
        return text in self.log.read_text()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def start(kube_apiserver: LoopbackAPIServer, tmp_path: Path) -> Iterator[Callable[[], Replica]]:
    made: list[Replica] = []

    def new() -> Replica:
        made.append(Replica(kube_apiserver, tmp_path / f"hello-{len(made)}.log"))
        return made[-1]

    yield new
    for r in made:
        r.stop()


def _holder(objects: ObjectClient) -> str:
    try:
        lease = objects.get("coordination.k8s.io/v1", "Lease", "hello", "default")
    except ApiException as err:
        if err.status == 404:
            return ""
        raise
    return str(lease["spec"].get("holderIdentity") or "")


def _greeting(objects: ObjectClient, name: str) -> str:
    return str((objects.get("v1", "ConfigMap", name, "default").get("data") or {}).get("greeting", ""))


def test_two_replicas_greet_and_hand_over_on_sigkill_and_sigterm(
        kube_apiserver: LoopbackAPIServer, start: Callable[[], Replica]) -> None:
    objects = ObjectClient(kube_apiserver.api_client())
    first = start()
    holder = eventually(lambda: _holder(objects), 20, what="the first replica to lead")
    second = start()
    objects.create(configmap("c1", hello="true"))
    objects.create(configmap("ignored"))
    assert eventually(lambda: _greeting(objects, "c1"), 20, what="the greeting") == "hello, c1"
    eventually(lambda: second.logged("attempting to acquire leader lease"), 20, what="the standby to campaign")

    first.proc.kill()
    first.proc.wait(10)
    objects.create(configmap("c2", hello="true"))
    assert eventually(lambda: _greeting(objects, "c2"), 20, what="the standby's greeting") == "hello, c2"
    assert _holder(objects) not in ("", holder)
    assert _greeting(objects, "ignored") == ""

    second.proc.send_signal(signal.SIGTERM)
    assert second.proc.wait(10) == 0
    assert "Traceback" not in second.log.read_text()
    assert _holder(objects) == "", "SIGTERM releases the lease"


def test_sigterm_right_after_acquiring_the_lease_releases_it_well_before_it_expires(
        kube_apiserver: LoopbackAPIServer, start: Callable[[], Replica]) -> None:
    objects = ObjectClient(kube_apiserver.api_client())
    replica = start()
    eventually(lambda: _holder(objects), 20, what="the replica to lead")
    sent = time.monotonic()
    replica.proc.send_signal(signal.SIGTERM)
    eventually(lambda: not _holder(objects), 5, what="the lease to be released")
    released = time.monotonic() - sent
    assert replica.proc.wait(10) == 0
    assert "Traceback" not in replica.log.read_text()
    # About a retry period (0.2 s) + 0.1 s: under half the 2 s lease, so a standby takes over at once, and a
    # loaded 2-core machine has 0.7 s to schedule two processes (unreleased, the lease keeps naming it).
    assert released < 1.0, f"released {released:.2f}s after SIGTERM"
