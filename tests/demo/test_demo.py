"""The main job, end to end: the demo runs pods on a loopback cluster and survives a scheduler's crash.

The whole scenario with its failover runs once, as the installed ``componentbase-demo --keep``
(tests/ship/test_wheel.py); here the demo runs against a cluster it is given."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

#: The demo runs a whole cluster of processes, each bounded by its own --timeout.
pytestmark = [pytest.mark.process, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]


def test_demo_refuses_bad_flags() -> None:
    result = subprocess.run([sys.executable, "-m", "componentbase_examples.demo",
                             "--pods=0", "--kubeconfig=/nonexistent"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.splitlines() == ["Error: pods: Invalid value: 0: must be at least 1",
                                          'Error: kubeconfig: Invalid value: "/nonexistent": no such file']


def test_demo_against_a_given_cluster_leaves_nothing_behind() -> None:
    """The smallest cluster the demo makes (one node, one scheduler, two pods): what only this test checks is
    the given kubeconfig used, its token taken to the kubelet API, and every pod and node deleted after; the
    failover with two of each runs in tests/ship/test_wheel.py."""
    from kubernetes import client

    from componentbase.testing import (
        LoopbackAPIServer,
        User,
    )

    admin = User("someone", "someone", ("system:masters",))
    with LoopbackAPIServer(tokens={"a-real-clusters-token": admin}) as server:
        result = subprocess.run(
            [sys.executable, "-m", "componentbase_examples.demo", "--pods=2", "--nodes=1", "--schedulers=1",
             f"--kubeconfig={server.kubeconfig_path}", "--timeout=2m"],
            cwd=ROOT, capture_output=True, text=True, timeout=240)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "loopback API server" not in result.stdout  # it used ours, started none of its own
        assert "2/2 pods succeeded, 0 failed" in result.stdout
        assert "hello from demo-000" in result.stdout  # the kubelet API took the kubeconfig's token
        v1 = client.CoreV1Api(server.api_client())
        assert v1.list_namespaced_pod("default", label_selector="app=componentbase-demo").items == []
        assert v1.list_node(label_selector="type=virtual-kubelet").items == []
