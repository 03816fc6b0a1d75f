"""deploy/widgets: the widgets example with its webhooks, as kubectl kustomize renders it.

The wiring is read from the rendered YAML: the Service in front of the webhook port, the certificate
cert-manager issues for that Service and the Secret the Deployment mounts, the inject-ca-from annotation on
every object with a caBundle, and paths the component serves. Then the manifests are applied to the loopback
server (with RBAC) and the console script runs as the ServiceAccount with the Deployment's arguments: a widget
is defaulted by its webhook and reported Ready by its controller, and nothing it does is forbidden.
cert-manager is not here: install_webhooks puts a test CA where its injector would, and the test's
certificate stands for the Secret it would write.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import DEPLOY, Kubectl, documents, kustomize
from kubernetes import client

from componentbase.client import SERVICE_ACCOUNT_DIR_ENV
from componentbase.testing import LoopbackAPIServer, eventually, free_port, install_webhooks
from componentbase.util import CertificateAuthority
from componentbase.webhook import mutate_path, validate_path

pytestmark = [pytest.mark.process, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "componentbase_examples" / "widgets"
WEBHOOK_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "CustomResourceDefinition")
CERT_MANAGER = ("Issuer", "Certificate")  # cert-manager's kinds: its CRDs are not installed here


@pytest.fixture(scope="module")
def rendered() -> list[dict[str, Any]]:
    return documents(kustomize("widgets"))


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == kind]
    return found


def client_configs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    if doc["kind"] == "CustomResourceDefinition":
        return [doc["spec"]["conversion"]["webhook"]["clientConfig"]]
    return [w["clientConfig"] for w in doc["webhooks"]]


def test_the_crd_and_webhook_configurations_are_the_examples() -> None:
    for name in ("crd.yaml", "webhooks.yaml"):
        assert (DEPLOY / "widgets" / name).read_text() == (EXAMPLE / name).read_text(), f"deploy/widgets/{name}"


def test_the_webhooks_are_wired_to_the_service_the_certificate_and_the_deployment(
        rendered: list[dict[str, Any]]) -> None:
    deployment, service, certificate = (one(rendered, k) for k in ("Deployment", "Service", "Certificate"))
    namespace = deployment["metadata"]["namespace"]
    assert deployment["spec"]["replicas"] == 2
    pod = deployment["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    assert container["image"] == "componentbase-widgets:0.1.0"
    args = dict(a.split("=", 1) for a in container["args"])
    assert args["--leader-elect"] == "true"
    assert args["--leader-elect-resource-namespace"] == one(rendered, "Role")["metadata"]["namespace"] == namespace
    # The Service sends 443 to the container's webhook port, on the pods of the Deployment.
    (port,) = service["spec"]["ports"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert (port["port"], ports[port["targetPort"]]) == (443, 9443)
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    # The Secret cert-manager writes is mounted where --webhook-cert-dir reads it.
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == args["--webhook-cert-dir"])
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mount["name"])
    assert volume["secret"]["secretName"] == certificate["spec"]["secretName"]
    # The certificate is for the Service's name, signed by an Issuer that is deployed.
    svc = f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc"
    assert svc in certificate["spec"]["dnsNames"]
    issuer = certificate["spec"]["issuerRef"]
    assert (issuer["kind"], issuer["name"]) == ("Issuer", one(rendered, "Issuer")["metadata"]["name"])
    # Every caBundle is injected from that certificate; every webhook names the Service and a path the
    # component serves (the test below has each of them answer).
    inject = f"{certificate['metadata']['namespace']}/{certificate['metadata']['name']}"
    called = []
    for doc in (one(rendered, kind) for kind in WEBHOOK_KINDS):
        assert doc["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == inject, doc["kind"]
        for config in client_configs(doc):
            target = config["service"]
            assert (target["namespace"], target["name"], target.get("port", 443)) == (
                namespace, service["metadata"]["name"], 443)
            called.append(target["path"])
    assert sorted(called) == sorted(["/convert", mutate_path("example.com/v1", "Widget"),
                                     validate_path("example.com/v1", "Widget")])


def test_the_manifests_apply_and_the_widgets_run_with_their_permissions(
        rendered: list[dict[str, Any]], admin: Kubectl, kube_apiserver: LoopbackAPIServer, tmp_path: Path) -> None:
    ca = CertificateAuthority.generate("widgets-ca")  # what cert-manager's Issuer would sign with
    cert, key = ca.issue("widgets-webhook", hosts=["widgets-webhook.widgets-system.svc"], server=True)
    (tmp_path / "tls.crt").write_bytes(cert)
    (tmp_path / "tls.key").write_bytes(key)
    address = f"127.0.0.1:{free_port()}"
    install_webhooks(kube_apiserver, [d for d in rendered if d["kind"] in WEBHOOK_KINDS], address=address,
                     ca_bundle=ca.cert_pem)
    rest = tmp_path / "rest.yaml"
    rest.write_text("\n".join(json.dumps(d) for d in rendered if d["kind"] not in (*WEBHOOK_KINDS, *CERT_MANAGER)))
    admin("apply", "-f", str(rest))

    account = tmp_path / "serviceaccount"  # the pod's projected token and CA
    account.mkdir()
    with kube_apiserver.api_client() as api:
        request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
        token = client.CoreV1Api(api).create_namespaced_service_account_token(
            "componentbase-widgets", "widgets-system", request)
    (account / "token").write_text(token.status.token)
    (account / "ca.crt").write_bytes(kube_apiserver.ca_data or b"")
    env = {**os.environ, "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(kube_apiserver.port),
           SERVICE_ACCOUNT_DIR_ENV: str(account)}
    (container,) = one(rendered, "Deployment")["spec"]["template"]["spec"]["containers"]
    log_path = tmp_path / "widgets.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-c", "from componentbase_examples.console import widgets; widgets()", *container["args"],
             f"--webhook-cert-dir={tmp_path}", f"--webhook-port={address.split(':')[1]}",
             "--webhook-bind-address=127.0.0.1", f"--cert-dir={tmp_path / 'certs'}", "--bind-address=127.0.0.1",
             f"--secure-port={free_port()}"], stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    try:
        widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"},
                  "spec": {"replicas": 2}}
        (tmp_path / "widget.json").write_text(json.dumps(widget))
        # Its webhook server listening first (a connect costs nothing; a kubectl apply ~60 ms of CPU).
        eventually(lambda: socket.create_connection(("127.0.0.1", int(address.split(":")[1])), timeout=5).close()
                   or True, timeout=60, ignoring=(OSError,), what=f"the webhook port\n{log_path.read_text()}")
        eventually(lambda: admin("apply", "-f", str(tmp_path / "widget.json"), check=False).returncode == 0,
                   timeout=60, what=f"a widget admitted by the webhooks\n{log_path.read_text()}")
        owner = admin("get", "widgets.v1.example.com", "w", "-o", "jsonpath={.spec.owner}").stdout
        assert owner, "defaulted by the mutating webhook"
        denied = admin("patch", "widget", "w", "--type=merge", "-p", '{"spec":{"owner":"x"}}', check=False)
        assert 'admission webhook "check.widgets.example.com" denied the request' in denied.stderr
        assert admin("get", "widgets.v2.example.com", "w", "-o", "jsonpath={.spec.size}").stdout == "2"
        admin("wait", "widget/w", "--for=condition=Ready", "--timeout=30s")
        lease = admin("get", "lease", "widgets", "-n", "widgets-system", "-o", "jsonpath={.spec.holderIdentity}")
        assert lease.stdout
    finally:
        process.terminate()
        process.wait(20)
    text = log_path.read_text()
    forbidden = [line for line in text.splitlines()
                 if "forbidden" in line.lower() and "extension-apiserver-authentication" not in line]
    assert forbidden == [], text[-3000:]
