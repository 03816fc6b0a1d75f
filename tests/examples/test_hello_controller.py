"""``python -m examples.hello``: the smallest controller, two replicas handing over on SIGKILL and SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes.client.exceptions import ApiException

from componentbase.client import ObjectClient
from componentbase.testing import LoopbackAPIServer
from tests.controller.helpers import configmap, wait_for

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
TIMING = ["--leader-elect-lease-duration=2s", "--leader-elect-renew-deadline=1500ms",
          "--leader-elect-retry-period=200ms", "--leader-elect-resource-namespace=default"]


@pytest.fixture
def replicas(kube_apiserver: LoopbackAPIServer) -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.communicate(timeout=10)


def _start(server: LoopbackAPIServer, procs: list[subprocess.Popen[str]]) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "examples.hello", f"--kubeconfig={server.kubeconfig_path}",
                             *TIMING], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    procs.append(proc)
    return proc


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
        kube_apiserver: LoopbackAPIServer, replicas: list[subprocess.Popen[str]]) -> None:
    objects = ObjectClient(kube_apiserver.api_client())
    first = _start(kube_apiserver, replicas)
    holder = wait_for(lambda: _holder(objects), 20, "the first replica to lead")
    second = _start(kube_apiserver, replicas)
    objects.create(configmap("c1", hello="true"))
    objects.create(configmap("ignored"))
    assert wait_for(lambda: _greeting(objects, "c1"), 20, "the greeting") == "hello, c1"

    first.kill()
    first.communicate(timeout=10)
    objects.create(configmap("c2", hello="true"))
    assert wait_for(lambda: _greeting(objects, "c2"), 20, "the standby's greeting") == "hello, c2"
    assert _holder(objects) not in ("", holder)
    assert _greeting(objects, "ignored") == ""

    second.send_signal(signal.SIGTERM)
    _, err = second.communicate(timeout=10)
    assert second.returncode == 0, err
    assert "Traceback" not in err
    assert _holder(objects) == "", "SIGTERM releases the lease"


def test_sigterm_right_after_acquiring_the_lease_releases_it_within_a_retry_period(
        kube_apiserver: LoopbackAPIServer, replicas: list[subprocess.Popen[str]]) -> None:
    objects = ObjectClient(kube_apiserver.api_client())
    proc = _start(kube_apiserver, replicas)
    wait_for(lambda: _holder(objects), 20, "the replica to lead")
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    wait_for(lambda: not _holder(objects), 5, "the lease to be released")
    released = time.monotonic() - sent
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    # retryPeriod (0.2 s) + 0.1 s, and 0.2 s for a loaded 2-core machine to schedule two processes
    assert released <= 0.2 + 0.1 + 0.2, f"released {released:.2f}s after SIGTERM"
