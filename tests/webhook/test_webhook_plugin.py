"""The pytest plugin's ``kube_webhooks``: a component's webhook configurations and conversion CRD, as it
deploys them (a Service, no caBundle: cert-manager injects it), installed on the test's loopback server and
pointed at the library's webhook server running in the test."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from componentbase.util._certs import CertificateAuthority
from componentbase.webhook import AdmissionRequest, Denied, WebhookServer
from tests.webhook.conftest import crd, widgets_conversion, write_pair

pytestmark = pytest.mark.integration

SERVICE = {"namespace": "system", "name": "webhook"}


def _manifests() -> list[dict[str, Any]]:
    def hook(name: str, config: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"], "clientConfig": config,
                "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                           "resources": ["configmaps"]}]}

    conversion_crd = crd("widgets", "Widget", {"service": dict(SERVICE, path="/convert")})
    return [
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
         "metadata": {"name": "defaults"},
         "webhooks": [hook("default.example.com", {"service": dict(SERVICE, path="/mutate--v1-configmap")})]},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
         "metadata": {"name": "checks"},  # by URL, as a webhook outside the cluster is named
         "webhooks": [hook("check.example.com", {"url": "https://checks.example.org/validate--v1-configmap"})]},
        dict(conversion_crd, apiVersion="apiextensions.k8s.io/v1", kind="CustomResourceDefinition"),
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "webhook", "namespace": "system"}},
    ]


@pytest.fixture
def hooks(tmp_path: Path) -> Iterator[tuple[WebhookServer, CertificateAuthority]]:
    ca = CertificateAuthority.generate("webhook-ca")
    write_pair(tmp_path, ca, "webhook")
    server = WebhookServer(str(tmp_path), port=0, host="127.0.0.1")

    @server.mutate("v1", "ConfigMap")
    def default(req: AdmissionRequest) -> None:
        assert req.object is not None
        req.object.setdefault("data", {}).setdefault("color", "blue")

    @server.validate("v1", "ConfigMap")
    def check(req: AdmissionRequest) -> None:
        if "forbidden" in ((req.object or {}).get("data") or {}):
            raise Denied("the key 'forbidden' is not allowed")

    widgets_conversion(server, "example.com", "Widget")
    yield server.start(), ca
    server.stop()


def test_the_plugin_installs_a_components_webhooks_pointed_at_the_test(
        kube_webhooks: Callable[..., list[dict[str, Any]]], kube_client: client.ApiClient,
        hooks: tuple[WebhookServer, CertificateAuthority]) -> None:
    server, ca = hooks
    created = kube_webhooks(_manifests(), address=f"127.0.0.1:{server.port}", ca_bundle=ca.cert_pem)
    assert [o["kind"] for o in created] == ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
                                            "CustomResourceDefinition"]  # the Service is not installed
    assert created[1]["webhooks"][0]["clientConfig"]["url"] == f"https://127.0.0.1:{server.port}/validate--v1-configmap"
    core = client.CoreV1Api(kube_client)
    core.create_namespaced_config_map("default", {"metadata": {"name": "plain"}, "data": {"a": "1"}})
    assert core.read_namespaced_config_map("plain", "default").data == {"a": "1", "color": "blue"}
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_config_map("default", {"metadata": {"name": "bad"}, "data": {"forbidden": "1"}})
    assert json.loads(caught.value.body)["message"] == (
        'admission webhook "check.example.com" denied the request: the key \'forbidden\' is not allowed')
    crs = client.CustomObjectsApi(kube_client)
    crs.create_namespaced_custom_object("example.com", "v1", "default", "widgets", {
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}})
    got = crs.get_namespaced_custom_object("example.com", "v2", "default", "widgets", "w")
    assert got["spec"] == {"replicas": 3}
