"""deploy/: the kustomize directories render with the real kubectl, apply to the loopback server (server-side
dry run, then for real), and the scheduler and the virtual kubelet run in-cluster with exactly the
permissions they grant.

The loopback server serves HTTPS with its own CA and authorizes with RBAC (conftest.py): each component runs
as its ServiceAccount, with a TokenRequest token, so it may do only what the applied manifests' roles grant
besides what kube's bootstrap roles give every authenticated user. A permission missing from rbac.yaml fails
these tests: the component cannot elect, bind, report status or record, and its log says forbidden.
"""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ACCOUNTS, Kubectl, documents
from kubernetes import client

from componentbase.client import SERVICE_ACCOUNT_DIR_ENV
from componentbase.testing import LoopbackAPIServer, eventually, free_port

#: The scheduler's start-up imports the official client's models, which takes seconds on a loaded machine.
pytestmark = [pytest.mark.process, pytest.mark.timeout(240)]


#: Client-side validation needs the server's OpenAPI, which the loopback server does not serve yet (kubectl
#: says "failed to download openapi"); the server still validates every object it is sent.
APPLY = ("apply",)


def kinds(text: str) -> list[tuple[str, str]]:
    return [(d["kind"], d["metadata"]["name"]) for d in documents(text)]


def test_the_manifests_render_with_kubectl_kustomize(rendered: dict[str, str]) -> None:
    scheduler = documents(rendered["scheduler"])
    assert sorted(kinds(rendered["scheduler"])) == sorted([
        ("ServiceAccount", "componentbase-scheduler"), ("ClusterRole", "componentbase-scheduler"),
        ("ClusterRole", "componentbase-volume-scheduler"), ("ClusterRoleBinding", "componentbase-scheduler"),
        ("ClusterRoleBinding", "componentbase-volume-scheduler"), ("Deployment", "componentbase-scheduler"),
        ("ConfigMap", next(n for k, n in kinds(rendered["scheduler"]) if k == "ConfigMap"))])
    deployment = next(d for d in scheduler if d["kind"] == "Deployment")
    assert deployment["spec"]["replicas"] == 2
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "componentbase-scheduler:0.1.0"
    assert container["resources"]["requests"].keys() == {"cpu", "memory"}
    port = container["ports"][0]
    assert (port["name"], port["containerPort"]) == ("https", 10259)  # the scheduler's default --secure-port
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"]["port"] == "https" and container[probe]["httpGet"]["scheme"] == "HTTPS"
    # The generated ConfigMap's name (with its content hash) is the one the Deployment mounts.
    configmap = next(d for d in scheduler if d["kind"] == "ConfigMap")
    volumes = deployment["spec"]["template"]["spec"]["volumes"]
    assert configmap["metadata"]["name"] in [v.get("configMap", {}).get("name") for v in volumes]
    assert "schedulerName: componentbase-scheduler" in configmap["data"]["config.yaml"]
    assert ("Deployment", "componentbase-virtual-kubelet") in kinds(rendered["virtual-kubelet"])
    lease_role = next(d for d in documents(rendered["virtual-kubelet"]) if d["kind"] == "Role")
    assert lease_role["metadata"]["namespace"] == "kube-node-lease"


def manifests(rendered: dict[str, str], tmp_path: Path) -> Path:
    path = tmp_path / "manifests.yaml"
    path.write_text("---\n".join(rendered.values()))
    return path


def test_the_manifests_apply_with_a_server_side_dry_run_then_for_real(rendered: dict[str, str], admin: Kubectl,
                                                                      tmp_path: Path) -> None:
    path = manifests(rendered, tmp_path)
    dry = admin(*APPLY, "--dry-run=server", "-f", str(path))
    assert dry.stdout.count("(server dry run)") == sum(len(documents(t)) for t in rendered.values())
    assert admin("get", "deployments", "-n", "kube-system", "-o", "name").stdout == ""
    done = admin(*APPLY, "-f", str(path))
    assert "deployment.apps/componentbase-scheduler created" in done.stdout
    names = admin("get", "deployments", "-n", "kube-system", "-o", "name").stdout.split()
    assert names == ["deployment.apps/componentbase-scheduler", "deployment.apps/componentbase-virtual-kubelet"]
    again = admin(*APPLY, "-f", str(path))
    assert "configured" not in again.stdout and again.stdout.count("unchanged") == len(names) + len(
        [line for line in done.stdout.splitlines() if "created" in line]) - len(names)


def node(name: str) -> dict[str, Any]:
    resources = {"cpu": "4", "memory": "8Gi", "pods": "20"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": resources, "allocatable": resources,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, scheduler: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": scheduler, "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}


@pytest.fixture
def in_cluster(kube_apiserver: LoopbackAPIServer, tmp_path: Path) -> Callable[[str], dict[str, str]]:
    """``in_cluster(component)``: the environment of a pod running as that component's ServiceAccount (the
    manifests applied first): a token of the TokenRequest API, as the kubelet projects it, and the server's
    CA in files, KUBERNETES_SERVICE_HOST/_PORT naming the server. (``kubectl create token`` would do, once
    the server reads the protobuf body kubectl sends.)"""

    def env(component: str) -> dict[str, str]:
        namespace, name = ACCOUNTS[component]
        account = tmp_path / f"serviceaccount-{component}"
        account.mkdir(exist_ok=True)
        with kube_apiserver.api_client() as api:
            request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
            token = client.CoreV1Api(api).create_namespaced_service_account_token(name, namespace, request)
        (account / "token").write_text(token.status.token)
        (account / "ca.crt").write_bytes(kube_apiserver.ca_data or b"")
        return {**os.environ, "KUBERNETES_SERVICE_HOST": "127.0.0.1",
                "KUBERNETES_SERVICE_PORT": str(kube_apiserver.port), SERVICE_ACCOUNT_DIR_ENV: str(account)}

    return env


def refusals(log: str) -> list[str]:
    """The log's lines about a refused request, but the one expected: reading the cluster's client CA
    (kube-system/extension-apiserver-authentication), which kube-scheduler's roles do not grant either and
    whose failed lookup is tolerated, as upstream's."""
    return [line for line in log.splitlines()
            if "forbidden" in line.lower() and "extension-apiserver-authentication" not in line]


def test_the_scheduler_runs_in_cluster_with_the_manifests_permissions_elects_and_schedules(
        rendered: dict[str, str], admin: Kubectl, kube_apiserver: LoopbackAPIServer,
        in_cluster: Callable[[str], dict[str, str]], tmp_path: Path) -> None:
    admin(*APPLY, "-f", str(manifests(rendered, tmp_path)))
    configmap = next(d for d in documents(rendered["scheduler"]) if d["kind"] == "ConfigMap")
    config = tmp_path / "config.yaml"  # the ConfigMap, as the Deployment mounts it
    config.write_text(configmap["data"]["config.yaml"])
    api = kube_apiserver.api_client()
    core = client.CoreV1Api(api)
    for name in ("node-a", "node-b"):
        core.create_node(node(name))
    replicas = []
    ports = []
    try:
        for i in range(2):  # the Deployment's two replicas
            ports.append(free_port())
            log = (tmp_path / f"scheduler-{i}.log").open("w")
            replicas.append((subprocess.Popen(
                [sys.executable, "-m", "componentbase_examples.scheduler", f"--config={config}",
                 "--bind-address=127.0.0.1", f"--secure-port={ports[-1]}", f"--cert-dir={tmp_path / f'certs-{i}'}"],
                stdout=log, stderr=subprocess.STDOUT, env=in_cluster("scheduler"), cwd=tmp_path), log))
        coordination = client.CoordinationV1Api(api)
        lease = eventually(lambda: coordination.read_namespaced_lease("componentbase-scheduler", "kube-system"),
                           timeout=90, ignoring=(client.ApiException,), what="the scheduler's lease")
        assert lease.spec.holder_identity
        for i in range(3):
            core.create_namespaced_pod("default", pod(f"mine-{i}", "componentbase-scheduler"))
        core.create_namespaced_pod("default", pod("not-mine", "default-scheduler"))

        def placed() -> bool:
            pods = {p.metadata.name: p.spec.node_name for p in core.list_namespaced_pod("default").items}
            return all(pods[f"mine-{i}"] in ("node-a", "node-b") for i in range(3))

        eventually(placed, timeout=60, what="the three pods bound to a node")
        assert core.read_namespaced_pod("not-mine", "default").spec.node_name is None  # another scheduler's
        # The probes the Deployment declares answer on the secure port, without credentials.
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # self-signed, as in the pod

        def probe(url: str) -> int:
            with urllib.request.urlopen(url, context=context, timeout=10) as answer:
                return int(answer.status)

        for port in ports:  # the standby may still be starting: importing the client's models takes seconds
            for path in ("/livez", "/readyz"):
                url = f"https://127.0.0.1:{port}{path}"
                assert eventually(lambda url=url: probe(url), timeout=60, ignoring=(OSError,), what=url) == 200
    finally:
        for process, log in replicas:
            process.terminate()
            process.wait(20)
            log.close()
        api.close()
    logs = "\n".join((tmp_path / f"scheduler-{i}.log").read_text() for i in range(len(replicas)))
    forbidden = refusals(logs)
    assert forbidden == [], "\n".join(forbidden)
    assert "Using the inClusterConfig" in logs


def test_the_virtual_kubelet_runs_in_cluster_with_the_manifests_permissions(
        rendered: dict[str, str], admin: Kubectl, kube_apiserver: LoopbackAPIServer,
        in_cluster: Callable[[str], dict[str, str]], tmp_path: Path) -> None:
    """The Deployment's own arguments, as its ServiceAccount: the node registers and renews its Lease in
    kube-node-lease, a pod bound to it runs and, deleted, goes."""
    admin(*APPLY, "-f", str(manifests(rendered, tmp_path)))
    deployment = next(d for d in documents(rendered["virtual-kubelet"]) if d["kind"] == "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    env = {**in_cluster("virtual-kubelet"), "VKUBELET_POD_IP": "127.0.0.1"}  # the pod's IP, by the downward API
    log_path = tmp_path / "virtual-kubelet.log"
    api = kube_apiserver.api_client()
    core = client.CoreV1Api(api)
    with log_path.open("w") as log:
        process = subprocess.Popen([sys.executable, "-m", "componentbase_examples.virtual_kubelet", *container["args"],
                                    f"--listen-port={free_port()}", "--metrics-addr="],
                                   stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    try:
        name = "componentbase-virtual-kubelet"

        def ready() -> bool:
            conditions = core.read_node(name).status.conditions or []
            return any(c.type == "Ready" and c.status == "True" for c in conditions)

        eventually(ready, timeout=90, ignoring=(client.ApiException,), what="the node Ready")
        # The Lease may come a moment after the Ready condition (seen under load: 404 when read at once).
        lease = eventually(lambda: client.CoordinationV1Api(api).read_namespaced_lease(name, "kube-node-lease"),
                           timeout=30, ignoring=(client.ApiException,), what="the node's Lease")
        assert lease.spec.holder_identity == name
        body = pod("runs-here", "default-scheduler")
        body["spec"]["nodeName"] = name
        body["spec"]["tolerations"] = [{"operator": "Exists"}]  # the virtual kubelet taints its node
        core.create_namespaced_pod("default", body)
        eventually(lambda: core.read_namespaced_pod("runs-here", "default").status.phase == "Running", timeout=60,
                   what="the pod Running")
        core.delete_namespaced_pod("runs-here", "default")
        eventually(lambda: "runs-here" not in [p.metadata.name for p in core.list_namespaced_pod("default").items],
                   timeout=60, what="the pod gone")
    finally:
        process.terminate()
        process.wait(30)
        api.close()
    log_text = log_path.read_text()
    assert refusals(log_text) == [], log_text[-3000:]
