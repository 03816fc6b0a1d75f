"""``kubectl apply --server-side`` (kubectl 1.37) against the loopback server: two managers, conflicts, force."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]
from kubernetes import client

from tests.testing.conftest import Kubectl

pytestmark = pytest.mark.process


def _deployment(*containers: tuple[str, str], replicas: int | None = 2) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": n, "image": i} for n, i in containers]}},
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": spec}


def _file(tmp_path: Path, name: str, doc: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _images(apps: client.AppsV1Api) -> dict[str, str]:
    dep = apps.read_namespaced_deployment("web", "default")
    return {c.name: c.image for c in dep.spec.template.spec.containers}


def test_two_managers_conflict_and_force_takes_ownership(kubectl: Kubectl, kube_client: client.ApiClient,
                                                         tmp_path: Path) -> None:
    apps = client.AppsV1Api(kube_client)
    mine = _file(tmp_path, "mine.yaml", _deployment(("web", "nginx:1.25"), ("sidecar", "busybox:1.36")))
    assert kubectl("apply", "--server-side", "--validate=false", "-f", mine).stdout.strip() == \
        "deployment.apps/web serverside-applied"
    theirs = _file(tmp_path, "theirs.yaml", _deployment(("web", "nginx:1.27"), replicas=3))
    done = kubectl("apply", "--server-side", "--validate=false", "--field-manager=ops", "-f", theirs, check=False)
    assert done.returncode == 1
    assert done.stderr.startswith('error: Apply failed with 2 conflicts: conflicts with "kubectl":\n'
                                  "- .spec.replicas\n"
                                  '- .spec.template.spec.containers[name="web"].image\n'
                                  "Please review the fields above--they currently have other managers.")
    assert _images(apps) == {"web": "nginx:1.25", "sidecar": "busybox:1.36"}  # nothing changed
    kubectl("apply", "--server-side", "--validate=false", "--field-manager=ops", "--force-conflicts", "-f", theirs)
    dep = apps.read_namespaced_deployment("web", "default")
    assert dep.spec.replicas == 3
    assert _images(apps) == {"web": "nginx:1.27", "sidecar": "busybox:1.36"}  # the other container stays
    owners = {m.manager: m.fields_v1 for m in dep.metadata.managed_fields}
    assert owners["ops"]["f:spec"]["f:replicas"] == {}
    assert "f:replicas" not in owners["kubectl"]["f:spec"]
    web = owners["kubectl"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}']
    assert web == {".": {}, "f:name": {}}  # kubectl no longer owns web's image


def test_changing_one_image_keeps_the_other_containers(kubectl: Kubectl, kube_client: client.ApiClient,
                                                       tmp_path: Path) -> None:
    apps = client.AppsV1Api(kube_client)
    path = tmp_path / "dep.yaml"
    path.write_text(yaml.safe_dump(_deployment(("web", "nginx:1.25"), ("sidecar", "busybox:1.36"))))
    kubectl("apply", "--server-side", "--validate=false", "-f", str(path))
    path.write_text(yaml.safe_dump(_deployment(("web", "nginx:1.27"), ("sidecar", "busybox:1.36"))))
    kubectl("apply", "--server-side", "--validate=false", "-f", str(path))
    assert _images(apps) == {"web": "nginx:1.27", "sidecar": "busybox:1.36"}
    path.write_text(yaml.safe_dump(_deployment(("web", "nginx:1.27"))))  # the sidecar leaves the file
    kubectl("apply", "--server-side", "--validate=false", "-f", str(path))
    assert _images(apps) == {"web": "nginx:1.27"}  # only its applier owned it, so it goes
