"""A component run with only its ServiceAccount's permissions, as on a cluster: the example scheduler, bound to
kube's default scheduler roles by manifests applied with kubectl, schedules a pod with RBAC on."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer, eventually

pytestmark = pytest.mark.process

KubectlAt = Callable[..., subprocess.CompletedProcess[str]]
MANIFESTS = Path(__file__).parent / "manifests" / "scheduler-rbac.yaml"


def test_example_scheduler_runs_as_its_service_account(kubectl_at: KubectlAt, tmp_path: Path) -> None:
    with LoopbackAPIServer(rbac=True) as server, server.api_client() as api:
        kubectl_at(server.kubeconfig_path, "apply", "--validate=false", "-f", str(MANIFESTS))
        v1 = client.CoreV1Api(api)
        capacity = {"cpu": "4", "memory": "8Gi", "pods": "110"}
        v1.create_node({"metadata": {"name": "n1"}, "status": {"capacity": capacity, "allocatable": capacity,
                                                               "conditions": [{"type": "Ready", "status": "True"}]}})
        v1.create_namespaced_pod("default", {"metadata": {"name": "p"},
                                             "spec": {"containers": [{"name": "c", "image": "i"}]}})
        kubeconfig = server.service_account_kubeconfig("kube-system", "my-scheduler")
        log = tmp_path / "scheduler.log"
        with log.open("w") as out:
            proc = subprocess.Popen([sys.executable, "-m", "componentbase_examples.scheduler",
                                     f"--kubeconfig={kubeconfig}", "--secure-port=0"], stdout=out, stderr=out)
        try:
            node = eventually(lambda: v1.read_namespaced_pod("p", "default").spec.node_name, timeout=40,
                              what="the scheduler to bind the pod")
            assert node == "n1"
            lease = client.CoordinationV1Api(api).read_namespaced_lease("kube-scheduler", "kube-system")
            assert lease.spec.holder_identity
        finally:
            proc.terminate()
            proc.wait(timeout=20)
        assert "forbidden" not in log.read_text().lower()
    # without the bindings the same account may do nothing the scheduler needs
    with LoopbackAPIServer(rbac=True) as server, server.api_client() as api:
        client.CoreV1Api(api).create_namespaced_service_account("kube-system", {"metadata": {"name": "my-scheduler"}})
        bare = server.service_account_kubeconfig("kube-system", "my-scheduler")
        refused = kubectl_at(bare, "get", "nodes", check=False)
        assert refused.returncode == 1 and 'cannot list resource "nodes"' in refused.stderr
