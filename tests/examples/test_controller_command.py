"""``python -m componentbase_examples.hello`` as a whole controller binary: health, readiness after the caches'
sync, metrics behind delegated authentication and authorization, namespaces, a client-side limit by flag.

One process and one API server for every assertion: process tests are what the suite pays for.
"""

from __future__ import annotations

import http.client
import json
import signal
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from componentbase.client import ObjectClient
from componentbase.testing import LoopbackAPIServer, User, eventually, free_port
from tests.controller.helpers import configmap

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
ALICE = "alice-token-0123456789"  # may get /metrics
BOB = "bob-token-0123456789"  # may not
ADMIN = "admin-token-0123456789"  # system:masters
NOT_YET = (OSError, http.client.HTTPException)


def _get(port: int, path: str, token: str = "") -> tuple[int, str]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the generated self-signed certificate
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}"} if token else {})
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


def _greeting(objects: ObjectClient, namespace: str) -> str:
    return str((objects.get("v1", "ConfigMap", "cm", namespace).get("data") or {}).get("greeting", ""))


def test_hello_serves_health_readiness_after_sync_and_metrics_caches_its_namespaces_and_obeys_its_qps(
        tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps([{"user": "alice", "verbs": ["get"], "paths": ["/metrics"]}]))
    tokens = {ADMIN: User("admin", "uid-admin", ("system:masters",)), ALICE: User("alice", "uid-alice"),
              BOB: User("bob", "uid-bob")}
    with LoopbackAPIServer(tokens=tokens, authorization_policy_file=policy) as server:
        objects = ObjectClient(server.api_client())
        for ns in ("a", "b", "c"):
            objects.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            objects.create(configmap("cm", ns, hello="true"))
        server.faults.set(verbs=("list",), resources=("configmaps",), error_rate=1.0)  # no cache can sync
        port = free_port()
        kubeconfig = server.kubeconfig_path
        log = tmp_path / "hello.log"
        with log.open("w") as f:
            proc = subprocess.Popen(
                [sys.executable, "-m", "componentbase_examples.hello", f"--kubeconfig={kubeconfig}",
                 f"--secure-port={port}", "--bind-address=127.0.0.1", f"--authentication-kubeconfig={kubeconfig}",
                 f"--authorization-kubeconfig={kubeconfig}", "--namespace=a", "--namespace=b",
                 "--kube-api-qps=10", "--kube-api-burst=1", "-v=3", "--leader-elect-resource-namespace=default"],
                cwd=ROOT, stderr=f)
        try:
            eventually(lambda: _get(port, "/healthz")[0] == 200, 30, ignoring=NOT_YET, what="/healthz")
            assert _get(port, "/healthz?verbose") == (200, "[+]ping ok\n[+]leaderElection ok\nhealthz check passed\n")
            status, body = _get(port, "/readyz?verbose")
            assert (status, "[-]informer-sync failed: reason withheld" in body) == (500, True), body
            status, body = _get(port, "/readyz/informer-sync", ADMIN)
            assert status == 500 and "informers not synced" in body, body

            server.faults.clear()
            eventually(lambda: _get(port, "/readyz")[0] == 200, 30, ignoring=NOT_YET, what="/readyz after sync")
            eventually(lambda: _greeting(objects, "a") and _greeting(objects, "b"), 20, what="a's and b's greetings")

            assert _get(port, "/metrics")[0] == 401  # no credentials
            assert _get(port, "/metrics", BOB)[0] == 403  # a SubjectAccessReview says no
            status, metrics = _get(port, "/metrics", ALICE)
            assert status == 200
            assert 'controller_runtime_reconcile_total{controller="hello",result="success"}' in metrics
            assert 'workqueue_adds_total{name="hello"}' in metrics
            assert _greeting(objects, "c") == "", "namespace c is not cached"
            assert "due to client-side throttling" in log.read_text()  # --kube-api-qps=10, burst 1
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(20)
        text = log.read_text()
        assert code == 0, text
        assert "Traceback" not in text
