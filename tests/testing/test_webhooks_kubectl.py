"""Admission and conversion webhooks as a kubectl 1.37 user sees them against the loopback server: a
mutating default in ``get -o yaml``, a denial's and a failed call's messages, warnings, dry runs, and a v1
object read back as v2."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from componentbase.testing import LoopbackAPIServer
from componentbase.util._certs import CertificateAuthority
from tests.testing.conftest import KubectlAt
from tests.testing.test_conversion_webhooks import convert
from tests.testing.webhook_support import WebhookServer, json_patch

pytestmark = pytest.mark.process

_SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def _deny_forbidden_key(review: dict[str, Any]) -> dict[str, Any]:
    data = review["request"]["object"].get("data") or {}
    if "forbidden" in data:
        return {"allowed": False, "status": {"code": 403, "reason": "Forbidden", "message": "key 'forbidden' "
                                                                                          "is not allowed"}}
    return {"allowed": True, "warnings": ["configmaps are checked by check.example.com"]}


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookServer]:
    server = WebhookServer(CertificateAuthority.generate("webhook-ca"), ["webhook.system.svc"])
    server.handlers["/default"] = lambda r: json_patch({"op": "add", "path": "/data/defaulted", "value": "yes"})
    server.handlers["/check"] = _deny_forbidden_key
    server.handlers["/convert"] = convert
    yield server.start()
    server.stop()


@pytest.fixture(scope="module")
def server(hooks: WebhookServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackAPIServer]:
    def hook(name: str, path: str, **extra: Any) -> dict[str, Any]:
        return dict({"name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"],
                     "clientConfig": {"service": {"namespace": "system", "name": "webhook", "path": path},
                                      "caBundle": hooks.ca_bundle},
                     "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                "resources": ["configmaps"]}]}, **extra)

    manifests = [
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
         "metadata": {"name": "defaults"}, "webhooks": [hook("default.example.com", "/default")]},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
         "metadata": {"name": "checks"}, "webhooks": [hook("check.example.com", "/check")]},
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
         "metadata": {"name": "widgets.example.com"}, "spec": {
             "group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": _SCHEMA},
                          {"name": "v2", "served": True, "storage": False, "schema": _SCHEMA}],
             "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {
                 "service": {"namespace": "system", "name": "webhook", "path": "/convert"},
                 "caBundle": hooks.ca_bundle}}}}},
    ]
    path = tmp_path_factory.mktemp("webhooks") / "install.yaml"
    path.write_text(yaml.safe_dump_all(manifests))
    with LoopbackAPIServer(webhook_services={"system/webhook": f"127.0.0.1:{hooks.port}"}) as api:
        api.install_path = str(path)  # type: ignore[attr-defined]
        yield api


def _file(tmp_path: Path, obj: dict[str, Any]) -> str:
    path = tmp_path / f"{obj['metadata']['name']}.yaml"
    path.write_text(yaml.safe_dump(obj))
    return str(path)


def test_kubectl_sees_defaults_denials_warnings_and_dry_runs(server: LoopbackAPIServer, kubectl_at: KubectlAt,
                                                             tmp_path: Path) -> None:
    def kubectl(*args: str, check: bool = True) -> Any:
        return kubectl_at(server.kubeconfig_path, *args, check=check)

    kubectl("apply", "-f", server.install_path)  # type: ignore[attr-defined]
    done = kubectl("create", "configmap", "plain", "--from-literal=a=1")
    assert "Warning: configmaps are checked by check.example.com" in done.stderr
    got = yaml.safe_load(kubectl("get", "configmap", "plain", "-o", "yaml").stdout)
    assert got["data"] == {"a": "1", "defaulted": "yes"}  # the mutating webhook's default
    bad = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad"}, "data": {"forbidden": "x"}}
    done = kubectl("create", "-f", _file(tmp_path, bad), check=False)
    assert done.returncode == 1
    assert 'Error from server (Forbidden): error when creating "' in done.stderr
    assert "admission webhook \"check.example.com\" denied the request: key 'forbidden' is not allowed" in done.stderr
    assert kubectl("get", "configmap", "bad", check=False).returncode == 1  # not stored
    bad["metadata"]["name"] = "dry"
    done = kubectl("create", "-f", _file(tmp_path, bad), "--dry-run=server", check=False)
    assert done.returncode == 1  # a dry run is denied as the real request would be
    assert "admission webhook \"check.example.com\" denied the request: key 'forbidden' is not allowed" in done.stderr


def test_kubectl_with_a_webhook_down_fail_and_ignore(server: LoopbackAPIServer, kubectl_at: KubectlAt,
                                                     hooks: WebhookServer, tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    down = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "down"}, "webhooks": [{
                "name": "down.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": f"https://127.0.0.1:{port}/gone", "caBundle": hooks.ca_bundle},
                "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                           "resources": ["secrets"]}]}]}
    kubectl_at(server.kubeconfig_path, "apply", "-f", _file(tmp_path, down))
    done = kubectl_at(server.kubeconfig_path, "create", "secret", "generic", "s1", check=False)
    assert done.returncode == 1
    assert ('Internal error occurred: failed calling webhook "down.example.com": '
            f'failed to call webhook: Post "https://127.0.0.1:{port}/gone?timeout=10s": dial tcp 127.0.0.1:{port}: '
            "connect: connection refused") in done.stderr
    kubectl_at(server.kubeconfig_path, "patch", "validatingwebhookconfiguration", "down", "--type=json", "-p",
               '[{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}]')
    kubectl_at(server.kubeconfig_path, "create", "secret", "generic", "s2")
    kubectl_at(server.kubeconfig_path, "delete", "validatingwebhookconfiguration", "down")


def test_kubectl_reads_a_v1_object_as_v2(server: LoopbackAPIServer, kubectl_at: KubectlAt, tmp_path: Path) -> None:
    kubectl_at(server.kubeconfig_path, "apply", "-f", server.install_path)  # type: ignore[attr-defined]
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"},
              "spec": {"size": 2}}
    kubectl_at(server.kubeconfig_path, "create", "-f", _file(tmp_path, widget))
    got = yaml.safe_load(kubectl_at(server.kubeconfig_path, "get", "widgets.v2.example.com", "w", "-o",
                                    "yaml").stdout)
    assert (got["apiVersion"], got["spec"]) == ("example.com/v2", {"replicas": 2})
