"""Dry runs as users make them: the real kubectl's diff, apply --dry-run=server and delete --dry-run=server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubernetes import client

from tests.testing.dryrun_support import Kubectl, marker, pod_body, watch_configmaps

pytestmark = pytest.mark.process


# --- the real kubectl --------------------------------------------------------------------------

_FILE = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "demo", "namespace": "default"},
         "data": {"a": "1"}}


def _manifest(tmp_path: Path, **data: str) -> str:
    path = tmp_path / "demo.json"
    path.write_text(json.dumps(dict(_FILE, data=data)))
    return str(path)


def test_kubectl_diff_changes_nothing(kubectl: Kubectl, v1: client.CoreV1Api, tmp_path: Path) -> None:
    kubectl("apply", "-f", _manifest(tmp_path, a="1"))
    before = v1.read_namespaced_config_map("demo", "default")
    w = watch_configmaps(v1)
    done = kubectl("diff", "-f", _manifest(tmp_path, a="2"), check=False)
    assert done.returncode == 1, done.stderr  # 1: differences found
    changed = [line for line in done.stdout.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ['-  a: "1"', '+  a: "2"']  # the dry-run patch kept the stored resourceVersion
    after = v1.read_namespaced_config_map("demo", "default")
    assert (after.data, after.metadata.resource_version) == ({"a": "1"}, before.metadata.resource_version)
    v1.delete_namespaced_config_map("demo", "default")
    done = kubectl("diff", "-f", _manifest(tmp_path, a="3"), check=False)
    assert done.returncode == 1 and '+  a: "3"' in done.stdout  # a new object: a dry-run create
    w.expect_only("DELETED", "demo")


def test_kubectl_apply_server_dry_run_changes_nothing(kubectl: Kubectl, v1: client.CoreV1Api,
                                                      tmp_path: Path) -> None:
    done = kubectl("apply", "--dry-run=server", "-f", _manifest(tmp_path, a="1"))
    assert done.stdout.strip() == "configmap/demo created (server dry run)"
    assert v1.list_namespaced_config_map("default").items == []
    kubectl("apply", "-f", _manifest(tmp_path, a="1"))
    before = v1.read_namespaced_config_map("demo", "default")
    w = watch_configmaps(v1)
    done = kubectl("apply", "--dry-run=server", "-o", "json", "-f", _manifest(tmp_path, a="2"))
    shown = json.loads(done.stdout)
    assert shown["data"] == {"a": "2"} and shown["metadata"]["resourceVersion"] == before.metadata.resource_version
    after = v1.read_namespaced_config_map("demo", "default")
    assert (after.data, after.metadata.annotations) == (before.data, before.metadata.annotations)
    marker(v1, w)


def test_kubectl_delete_server_dry_run_changes_nothing(kubectl: Kubectl, v1: client.CoreV1Api,
                                                       tmp_path: Path) -> None:
    kubectl("apply", "-f", _manifest(tmp_path, a="1"))
    v1.create_namespace({"metadata": {"name": "team"}})
    v1.create_namespaced_pod("team", pod_body("p", nodeName="node1"))
    w = watch_configmaps(v1)
    done = kubectl("delete", "--dry-run=server", "-f", _manifest(tmp_path, a="1"))
    assert done.stdout.strip() == 'configmap "demo" deleted from default namespace (server dry run)'
    kubectl("delete", "--dry-run=server", "-n", "team", "pod", "p")
    kubectl("delete", "--dry-run=server", "namespace", "team")
    kubectl("delete", "--dry-run=server", "--all", "-n", "default", "configmaps")
    assert v1.read_namespaced_config_map("demo", "default").data == {"a": "1"}
    assert v1.read_namespaced_pod("p", "team").metadata.deletion_timestamp is None
    assert v1.read_namespace("team").status.phase == "Active"
    marker(v1, w)
