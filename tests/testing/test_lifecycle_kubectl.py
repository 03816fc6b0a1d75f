"""Deletion as users drive it with the real kubectl: --cascade=orphan|foreground|background and a
namespace that a finalizer holds in Terminating."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubernetes import client

from tests.testing.dryrun_support import Kubectl
from tests.testing.lifecycle_support import NS, make_chain, names

pytestmark = pytest.mark.process


def test_kubectl_delete_cascade_orphan(kubectl: Kubectl, kube_client: client.ApiClient) -> None:
    apps, v1 = client.AppsV1Api(kube_client), client.CoreV1Api(kube_client)
    _, rs = make_chain(kube_client)
    kubectl("delete", "deployment", "web", "--cascade=orphan")
    assert names(apps.list_namespaced_deployment, NS) == []
    assert apps.read_namespaced_replica_set("web-1", NS).metadata.owner_references is None
    assert {p.metadata.owner_references[0].uid for p in v1.list_namespaced_pod(NS).items} == {rs.metadata.uid}


def test_kubectl_delete_cascade_foreground(kubectl: Kubectl, kube_client: client.ApiClient) -> None:
    apps, v1 = client.AppsV1Api(kube_client), client.CoreV1Api(kube_client)
    make_chain(kube_client)
    kubectl("delete", "deployment", "web", "--cascade=foreground", "--wait=false")
    held = kubectl("get", "deployment", "web", "-o", "jsonpath={.metadata.finalizers}").stdout
    assert held == '["foregroundDeletion"]'  # the bound pod web-b still runs
    assert names(v1.list_namespaced_pod, NS) == ["web-b"]
    kubectl("delete", "pod", "web-b", "--grace-period=0", "--force")
    assert names(apps.list_namespaced_deployment, NS) == [] and names(apps.list_namespaced_replica_set, NS) == []


def test_kubectl_delete_cascade_background(kubectl: Kubectl, kube_client: client.ApiClient) -> None:
    apps, v1 = client.AppsV1Api(kube_client), client.CoreV1Api(kube_client)
    make_chain(kube_client)
    kubectl("delete", "deployment", "web")
    assert names(apps.list_namespaced_replica_set, NS) == [] and names(v1.list_namespaced_pod, NS) == ["web-b"]


def test_kubectl_namespace_held_by_a_finalizer(kubectl: Kubectl, v1: client.CoreV1Api, tmp_path: Path) -> None:
    v1.create_namespace({"metadata": {"name": "team"}})
    v1.create_namespaced_config_map("team", {"metadata": {"name": "held", "finalizers": ["example.com/keep"]}})
    kubectl("delete", "namespace", "team", "--wait=false")
    assert kubectl("get", "namespace", "team", "-o", "jsonpath={.status.phase}").stdout == "Terminating"
    late = tmp_path / "late.json"
    late.write_text(json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late",
                                                                                     "namespace": "team"}}))
    refused = kubectl("apply", "--validate=false", "-f", str(late), check=False)
    assert refused.returncode == 1
    assert ('configmaps "late" is forbidden: unable to create new content in namespace team because it is being '
            "terminated") in refused.stderr
    kubectl("patch", "configmap", "held", "-n", "team", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    gone = kubectl("get", "namespace", "team", check=False)
    assert gone.returncode == 1 and 'namespaces "team" not found' in gone.stderr
