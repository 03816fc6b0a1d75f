"""PATCH flavours: JSON merge, strategic merge (keyed lists), JSON patch, and their edge cases."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer

pytestmark = pytest.mark.integration

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


@pytest.fixture
def v1(kube_client: client.ApiClient) -> client.CoreV1Api:
    api = client.CoreV1Api(kube_client)
    api.create_namespaced_pod("default", {
        "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}, "annotations": {"x": "y"}},
        "spec": {"containers": [{"name": "c1", "image": "i"}, {"name": "c2", "image": "i"}]},
    })
    api.patch_namespaced_pod_status("p", "default", {"status": {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "False"}, {"type": "Initialized", "status": "True"}],
        "containerStatuses": [{"name": "c1", "ready": False, "restartCount": 0, "image": "i", "imageID": ""},
                              {"name": "c2", "ready": False, "restartCount": 0, "image": "i", "imageID": ""}],
    }})
    return api


def test_strategic_merges_conditions_by_type(v1: client.CoreV1Api) -> None:
    pod = v1.patch_namespaced_pod_status("p", "default", {"status": {
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "ContainersReady", "status": "True"}]}})
    assert [(c.type, c.status) for c in pod.status.conditions] == [
        ("Ready", "True"), ("Initialized", "True"), ("ContainersReady", "True")]


def test_strategic_merges_container_statuses_by_name(v1: client.CoreV1Api) -> None:
    pod = v1.patch_namespaced_pod_status("p", "default", {"status": {
        "containerStatuses": [{"name": "c2", "ready": True}]}}, _content_type=STRATEGIC)
    assert [(s.name, s.ready) for s in pod.status.container_statuses] == [("c1", False), ("c2", True)]


def test_strategic_delete_directive_and_null(v1: client.CoreV1Api) -> None:
    pod = v1.patch_namespaced_pod_status("p", "default", {"status": {
        "conditions": [{"type": "Ready", "$patch": "delete"}]}})
    assert [c.type for c in pod.status.conditions] == ["Initialized"]
    pod = v1.patch_namespaced_pod("p", "default", {"metadata": {"labels": {"a": None, "c": "3"}}})
    assert pod.metadata.labels == {"b": "2", "c": "3"}


def test_merge_patch_replaces_lists(v1: client.CoreV1Api) -> None:
    pod = v1.patch_namespaced_pod_status("p", "default", {"status": {
        "conditions": [{"type": "Ready", "status": "True"}]}}, _content_type=MERGE)
    assert [c.type for c in pod.status.conditions] == ["Ready"]
    pod = v1.patch_namespaced_pod("p", "default", {"metadata": {"annotations": {"x": None, "z": "1"}}},
                                  _content_type=MERGE)
    assert pod.metadata.annotations == {"z": "1"}


def test_json_patch(v1: client.CoreV1Api) -> None:
    pod = v1.patch_namespaced_pod("p", "default", [
        {"op": "add", "path": "/metadata/labels/new", "value": "v"},
        {"op": "remove", "path": "/metadata/labels/a"},
        {"op": "replace", "path": "/metadata/annotations/x", "value": "z"},
        {"op": "test", "path": "/metadata/labels/b", "value": "2"},
    ])
    assert pod.metadata.labels == {"b": "2", "new": "v"} and pod.metadata.annotations == {"x": "z"}
    with pytest.raises(client.ApiException) as info:
        v1.patch_namespaced_pod("p", "default", [{"op": "test", "path": "/metadata/labels/b", "value": "9"}])
    assert info.value.status == 422


@pytest.mark.parametrize("op", [
    {"op": "test", "path": "/metadata/labels/b", "value": "9"},
    {"op": "remove", "path": "/metadata/labels/nope"},
    {"op": "add", "path": "/metadata/nope/x", "value": "v"},
    {"op": "replace", "path": "/spec/containers/5", "value": {}},
])
def test_a_json_patch_that_does_not_apply_is_kubes_generic_422(v1: client.CoreV1Api, op: dict[str, Any]) -> None:
    # kube answers with NewGenericServerResponse: this message and empty details, whatever the operation.
    with pytest.raises(client.ApiException) as info:
        v1.patch_namespaced_pod("p", "default", [op])
    assert json.loads(info.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Invalid",
        "message": "the server rejected our request due to an error in our request", "details": {}, "code": 422}


def test_a_json_patch_replace_of_a_missing_key_adds_it_as_kubes_json_patch_v4_does(v1: client.CoreV1Api) -> None:
    pod = v1.patch_namespaced_pod("p", "default", [{"op": "replace", "path": "/metadata/labels/new", "value": "v"}])
    assert pod.metadata.labels == {"a": "1", "b": "2", "new": "v"}


def test_main_resource_patch_ignores_status(v1: client.CoreV1Api) -> None:
    pod = v1.patch_namespaced_pod("p", "default", {"status": {"phase": "Failed"}})
    assert pod.status.phase == "Running"


def test_status_patch_ignores_labels(v1: client.CoreV1Api) -> None:
    pod = v1.patch_namespaced_pod_status("p", "default", {"metadata": {"labels": {"q": "1"}},
                                                          "status": {"phase": "Succeeded"}})
    assert pod.status.phase == "Succeeded" and "q" not in pod.metadata.labels


def test_patch_with_stale_resource_version_conflicts(v1: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as info:
        v1.patch_namespaced_pod("p", "default", {"metadata": {"resourceVersion": "1", "labels": {"z": "1"}}})
    assert info.value.status == 409


def test_patch_missing_is_404(v1: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as info:
        v1.patch_namespaced_pod("nope", "default", {"metadata": {"labels": {"z": "1"}}})
    assert info.value.status == 404


def test_lease_merge_patch(kube_client: client.ApiClient) -> None:
    leases = client.CoordinationV1Api(kube_client)
    leases.create_namespaced_lease("default", {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}})
    lease = leases.patch_namespaced_lease("l", "default", {"spec": {"renewTime": "2024-01-01T00:00:00.123456Z"}},
                                          _content_type=MERGE)
    assert lease.spec.holder_identity == "a" and lease.spec.renew_time.microsecond == 123456


def _raw(server: LoopbackAPIServer, method: str, path: str, body: bytes, ctype: str) -> tuple[int, Any]:
    req = urllib.request.Request(server.url + path, data=body, method=method, headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_bad_bodies(kube_apiserver: LoopbackAPIServer) -> None:
    path = "/api/v1/namespaces/default/configmaps"
    code, status = _raw(kube_apiserver, "POST", path, b"{not json", "application/json")
    assert code == 400 and status["reason"] == "BadRequest" and status["kind"] == "Status"
    _raw(kube_apiserver, "POST", path, b'{"metadata":{"name":"c"}}', "application/json")
    code, status = _raw(kube_apiserver, "PATCH", path + "/c", b"{}", "application/apply-patch+yaml")
    assert code == 422 and status["details"]["causes"][0]["field"] == "fieldManager"  # apply needs a manager
    code, status = _raw(kube_apiserver, "PATCH", path + "/c", b"{", MERGE)
    assert code == 400
