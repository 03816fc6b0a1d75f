"""The module fixtures of the webhook tests: a CA, a certificate directory, the library's webhook server with a
defaulting and a validating ConfigMap webhook and a Widget conversion, and a loopback API server calling it
through the configurations (on namespaces labelled ``webhooks: on``) and a two-version CRD."""

from __future__ import annotations

import base64
import os
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer
from componentbase.util._certs import CertificateAuthority
from componentbase.webhook import AdmissionRequest, Denied, WebhookServer

HOSTS = ["webhook.system.svc", "127.0.0.1"]
_SCHEMA = {"openAPIV3Schema": {"type": "object", "properties": {
    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}


def write_pair(cert_dir: Path, ca: CertificateAuthority, name: str) -> None:
    """A new certificate and key, each file replaced whole (as the kubelet's atomic writer does)."""
    cert, key = ca.issue(name, hosts=HOSTS, server=True)
    for filename, data in (("tls.key", key), ("tls.crt", cert)):
        tmp = cert_dir / f".{filename}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, cert_dir / filename)


def served_name(port: int, ca: CertificateAuthority) -> str:
    """The common name of the certificate a new connection to ``port`` is served."""
    from cryptography import x509

    ctx = ssl.create_default_context(cadata=ca.cert_pem.decode())
    ctx.check_hostname = False
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, ctx.wrap_socket(raw) as tls:
        cert = x509.load_der_x509_certificate(tls.getpeercert(binary_form=True) or b"")
    return str(cert.subject.rfc4514_string())


def widgets_conversion(server: WebhookServer, group: str, kind: str) -> None:
    """v1 (the hub) has spec.size, v2 has spec.replicas."""
    def to_hub(obj: dict[str, Any]) -> None:
        obj["spec"] = {"size": obj["spec"].pop("replicas")}

    def from_hub(obj: dict[str, Any]) -> None:
        obj["spec"] = {"replicas": obj["spec"].pop("size")}

    server.conversion(group, kind, hub="v1").spoke("v2", to_hub=to_hub, from_hub=from_hub)


@pytest.fixture(scope="module")
def ca() -> CertificateAuthority:
    return CertificateAuthority.generate("webhook-ca")


@pytest.fixture(scope="module")
def cert_dir(ca: CertificateAuthority, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("serving-certs")
    write_pair(path, ca, "first")
    return path


@pytest.fixture(scope="module")
def hooks(cert_dir: Path) -> Iterator[WebhookServer]:
    server = WebhookServer(str(cert_dir), port=0, host="127.0.0.1", poll_interval=0.05)

    @server.mutate("v1", "ConfigMap")
    def default(req: AdmissionRequest) -> None:
        assert req.object is not None
        req.object.setdefault("data", {}).setdefault("color", "blue")
        req.object["metadata"].setdefault("labels", {})["example.com/defaulted"] = "true"

    @server.validate("v1", "ConfigMap")
    def check(req: AdmissionRequest) -> None:
        data = (req.object or {}).get("data") or {}
        if "warn" in data:
            req.warn("the key 'warn' is deprecated")
        if "forbidden" in data:
            raise Denied("the key 'forbidden' is not allowed")

    widgets_conversion(server, "example.com", "Widget")
    yield server.start()
    server.stop()


def _hook(name: str, path: str, ca: CertificateAuthority) -> dict[str, Any]:
    return {"name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "clientConfig": {"service": {"namespace": "system", "name": "webhook", "path": path},
                             "caBundle": base64.b64encode(ca.cert_pem).decode()},
            "namespaceSelector": {"matchLabels": {"webhooks": "on"}},
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["configmaps"]}]}


def crd(plural: str, kind: str, client_config: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": f"{plural}.example.com"}, "spec": {
        "group": "example.com", "scope": "Namespaced", "names": {"plural": plural, "kind": kind},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": _SCHEMA},
                     {"name": "v2", "served": True, "storage": False, "schema": _SCHEMA}],
        "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                                                          "clientConfig": client_config}}}}


@pytest.fixture(scope="module")
def api(hooks: WebhookServer, ca: CertificateAuthority) -> Iterator[client.ApiClient]:
    with LoopbackAPIServer(webhook_services={"system/webhook": f"127.0.0.1:{hooks.port}"}) as server:
        api_client = server.api_client()
        reg = client.AdmissionregistrationV1Api(api_client)
        reg.create_mutating_webhook_configuration({"metadata": {"name": "defaults"}, "webhooks": [
            _hook("default.example.com", "/mutate--v1-configmap", ca)]})
        reg.create_validating_webhook_configuration({"metadata": {"name": "checks"}, "webhooks": [
            _hook("check.example.com", "/validate--v1-configmap", ca)]})
        service = {"service": {"namespace": "system", "name": "webhook", "path": "/convert"},
                   "caBundle": base64.b64encode(ca.cert_pem).decode()}
        client.ApiextensionsV1Api(api_client).create_custom_resource_definition(crd("widgets", "Widget", service))
        yield api_client
        api_client.close()
