"""deploy/hello-sharded: the hello controller as three shards, rendered by the real kubectl, applied to the
loopback server with RBAC, and run as its ServiceAccount with the Deployment's arguments (two replicas): each
hello=true ConfigMap is labelled with a shard and greeted, and nothing either replica does is forbidden."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Kubectl, documents, kustomize
from kubernetes import client

from componentbase.client import SERVICE_ACCOUNT_DIR_ENV, ObjectClient
from componentbase.testing import LoopbackAPIServer, eventually, free_port

pytestmark = [pytest.mark.process, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "hello-system"


def test_the_sharded_hello_applies_and_its_shards_run_with_their_permissions(
        admin: Kubectl, kube_apiserver: LoopbackAPIServer, tmp_path: Path) -> None:
    text = kustomize("hello-sharded")
    rendered = documents(text)
    (deployment,) = [d for d in rendered if d["kind"] == "Deployment"]
    assert deployment["spec"]["replicas"] == 3
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "componentbase-hello:0.1.0" and "--sharded=true" in container["args"]
    manifests = tmp_path / "manifests.yaml"
    manifests.write_text(text)
    admin("apply", "-f", str(manifests))
    account = tmp_path / "serviceaccount"  # the pod's projected token and CA
    account.mkdir()
    with kube_apiserver.api_client() as api:
        request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
        token = client.CoreV1Api(api).create_namespaced_service_account_token("componentbase-hello", NAMESPACE,
                                                                               request)
    assert token.status is not None
    (account / "token").write_text(str(token.status.token))
    (account / "ca.crt").write_bytes(kube_apiserver.ca_data or b"")
    env = {**os.environ, "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(kube_apiserver.port),
           SERVICE_ACCOUNT_DIR_ENV: str(account)}
    logs = [tmp_path / f"hello-{i}.log" for i in range(2)]
    processes = []
    for i, log_path in enumerate(logs):
        with log_path.open("w") as log:
            processes.append(subprocess.Popen(
                [sys.executable, "-c", "from componentbase_examples.console import hello; hello()",
                 *container["args"], "--leader-elect-lease-duration=2s", "--leader-elect-renew-deadline=1500ms",
                 "--leader-elect-retry-period=200ms", f"--cert-dir={tmp_path / f'certs-{i}'}",
                 "--bind-address=127.0.0.1", f"--secure-port={free_port()}"],
                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT))
    try:
        for name in ("one", "two", "three"):
            admin("create", "configmap", name, "-n", "default", "--from-literal=k=v")
            admin("label", "configmap", name, "-n", "default", "hello=true")

        def greeted(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
            done = all((d.get("data") or {}).get("greeting") == f"hello, {d['metadata']['name']}" and
                       d["metadata"]["labels"].get("shard.sharding.componentbase.io/hello") for d in items)
            return items if done and len(items) == 3 else []

        # Waited for through the client (a kubectl run is ~60 ms of CPU, a look through the client a few), then
        # looked for with kubectl, which mostly sees it at once: while the second shard joins the ring, an object
        # may move and be greeted again after the client saw it greeted (seen once in a full run).
        objects = ObjectClient(kube_apiserver.api_client())
        eventually(lambda: len(objects.list("coordination.k8s.io/v1", "Lease", NAMESPACE,
                                            label_selector="sharding.componentbase.io/ring=hello")) == 2,
                   timeout=30, what="two shard leases")
        eventually(lambda: greeted(objects.list("v1", "ConfigMap", "default", label_selector="hello=true")),
                   timeout=60, what=f"three ConfigMaps labelled and greeted\n{logs[0].read_text()[-2000:]}")
        eventually(lambda: greeted(json.loads(admin("get", "configmaps", "-n", "default", "-l", "hello=true", "-o",
                                                    "json").stdout)["items"]),
                   timeout=30, what="kubectl to show the three ConfigMaps labelled and greeted")
        assert len(admin("get", "leases", "-n", NAMESPACE, "-l", "sharding.componentbase.io/ring=hello",
                         "-o", "name").stdout.split()) == 2
    finally:
        for p in processes:
            p.terminate()
        for p in processes:
            p.wait(20)
    for log_path in logs:
        text = log_path.read_text()
        forbidden = [line for line in text.splitlines()
                     if "forbidden" in line.lower() and "extension-apiserver-authentication" not in line]
        assert forbidden == [], text[-3000:]
