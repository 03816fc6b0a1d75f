"""Pod-specific semantics: binding, graceful deletion, status subresource separation, finalizers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

pytestmark = pytest.mark.integration


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


def _binding(pod: str, node: str) -> client.V1Binding:
    return client.V1Binding(metadata=client.V1ObjectMeta(name=pod),
                            target=client.V1ObjectReference(kind="Node", name=node))


def test_pod_defaults(kube_client: client.ApiClient) -> None:
    pod = client.CoreV1Api(kube_client).create_namespaced_pod("default", _pod("p"))
    assert pod.spec.scheduler_name == "default-scheduler"
    assert pod.status.phase == "Pending"


def test_binding_once(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespaced_pod("default", _pod("p"))
    resp = v1.create_namespaced_pod_binding("p", "default", _binding("p", "node1"), _preload_content=False)
    assert resp.status == 201
    assert json.loads(resp.data)["status"] == "Success"
    pod = v1.read_namespaced_pod("p", "default")
    assert pod.spec.node_name == "node1"
    assert [(c.type, c.status) for c in pod.status.conditions] == [("PodScheduled", "True")]
    with pytest.raises(client.ApiException) as info:
        v1.create_namespaced_pod_binding("p", "default", _binding("p", "node2"), _preload_content=False)
    assert info.value.status == 409
    assert "already assigned" in json.loads(info.value.body)["message"]
    assert v1.read_namespaced_pod("p", "default").spec.node_name == "node1"


def test_binding_through_bindings_resource(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespaced_pod("default", _pod("p"))
    resp = v1.create_namespaced_binding("default", _binding("p", "n"), _preload_content=False)
    assert resp.status == 201
    assert v1.read_namespaced_pod("p", "default").spec.node_name == "n"


def test_binding_missing_pod(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    with pytest.raises(client.ApiException) as info:
        v1.create_namespaced_pod_binding("nope", "default", _binding("nope", "n"), _preload_content=False)
    assert info.value.status == 404


def test_graceful_delete_of_bound_pod(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespaced_pod("default", _pod("p", nodeName="node1"))
    returned = v1.delete_namespaced_pod("p", "default", grace_period_seconds=20)
    assert returned.metadata.deletion_timestamp is not None
    kept = v1.read_namespaced_pod("p", "default")
    assert kept.metadata.deletion_grace_period_seconds == 20
    with pytest.raises(client.ApiException) as info:
        v1.create_namespaced_pod_binding("p", "default", _binding("p", "n2"), _preload_content=False)
    assert info.value.status == 409
    v1.delete_namespaced_pod("p", "default", body=client.V1DeleteOptions(grace_period_seconds=0))
    with pytest.raises(client.ApiException) as info:
        v1.read_namespaced_pod("p", "default")
    assert info.value.status == 404


def test_default_grace_keeps_bound_pod(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespaced_pod("default", _pod("p", nodeName="node1", terminationGracePeriodSeconds=5))
    v1.delete_namespaced_pod("p", "default")
    assert v1.read_namespaced_pod("p", "default").metadata.deletion_grace_period_seconds == 5


def test_unbound_pod_goes_at_once(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespaced_pod("default", _pod("p"))
    returned = v1.delete_namespaced_pod("p", "default", grace_period_seconds=30)
    assert returned.metadata.name == "p"
    assert v1.list_namespaced_pod("default").items == []


def test_delete_precondition(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    with pytest.raises(client.ApiException) as info:
        v1.delete_namespaced_config_map("c", "default", body=client.V1DeleteOptions(
            preconditions=client.V1Preconditions(uid="wrong")))
    assert info.value.status == 409


def test_status_subresource_ignores_spec_and_main_ignores_status(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    pod = v1.create_namespaced_pod("default", _pod("p"))
    pod.status.phase = "Running"
    pod.spec.active_deadline_seconds = 99
    after_main = v1.replace_namespaced_pod("p", "default", pod)
    assert after_main.status.phase == "Pending" and after_main.spec.active_deadline_seconds == 99
    after_main.status.phase = "Running"
    after_main.spec.active_deadline_seconds = 5
    after_status = v1.replace_namespaced_pod_status("p", "default", after_main)
    assert after_status.status.phase == "Running" and after_status.spec.active_deadline_seconds == 99
    assert after_status.metadata.generation == after_main.metadata.generation


def test_node_status(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_node({"metadata": {"name": "n"}, "spec": {"unschedulable": False}})
    node = v1.patch_node_status("n", {"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert node.status.conditions[0].type == "Ready"
    node = v1.patch_node("n", {"status": {"conditions": []}, "spec": {"unschedulable": True}})
    assert node.spec.unschedulable is True and len(node.status.conditions) == 1


def test_generation_bumps_only_on_spec_change(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    pod = v1.create_namespaced_pod("default", _pod("p"))
    assert pod.metadata.generation == 1
    pod = v1.patch_namespaced_pod("p", "default", {"metadata": {"labels": {"a": "b"}}})
    assert pod.metadata.generation == 1
    pod = v1.patch_namespaced_pod("p", "default", {"spec": {"activeDeadlineSeconds": 3}})
    assert pod.metadata.generation == 2


def test_noop_update_keeps_resource_version(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    cm = v1.create_namespaced_config_map("default", {"metadata": {"name": "c"}, "data": {"a": "1"}})
    again = v1.replace_namespaced_config_map("c", "default", cm)
    assert again.metadata.resource_version == cm.metadata.resource_version


def test_finalizers_hold_deletion(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespaced_config_map("default", {"metadata": {"name": "c", "finalizers": ["x/y"]}})
    v1.delete_namespaced_config_map("c", "default")
    held = v1.read_namespaced_config_map("c", "default")
    assert held.metadata.deletion_timestamp is not None
    v1.patch_namespaced_config_map("c", "default", {"metadata": {"finalizers": None}})
    assert v1.list_namespaced_config_map("default").items == []


def test_namespace_delete_removes_contents(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespace({"metadata": {"name": "scratch"}})
    v1.create_namespaced_config_map("scratch", {"metadata": {"name": "c"}})
    v1.delete_namespace("scratch")
    assert v1.list_config_map_for_all_namespaces(field_selector="metadata.namespace=scratch").items == []
    with pytest.raises(client.ApiException) as info:
        v1.delete_namespace("default")
    assert info.value.status == 403


def test_secret_string_data(kube_client: client.ApiClient) -> None:
    secret = client.CoreV1Api(kube_client).create_namespaced_secret(
        "default", {"metadata": {"name": "s"}, "stringData": {"k": "v"}})
    assert secret.data == {"k": "dg=="} and secret.string_data is None
