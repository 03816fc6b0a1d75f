"""Server-side apply and managedFields through the official client: ownership, conflicts, force, list-maps."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

pytestmark = pytest.mark.integration

_APPLY = "application/apply-patch+yaml"


def _cm(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": data}


def _apply(v1: client.CoreV1Api, body: dict[str, Any], manager: str, force: bool = False) -> Any:
    return v1.patch_namespaced_config_map("cfg", "default", body, field_manager=manager, force=force or None,
                                          _content_type=_APPLY)


def _managers(obj: Any) -> dict[tuple[str, str], dict[str, Any]]:
    return {(m.manager, m.operation): m.fields_v1 for m in obj.metadata.managed_fields or []}


def _refused(call: Any, *args: Any, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(client.ApiException) as info:
        call(*args, **kwargs)
    return info.value.status, json.loads(info.value.body)


def test_apply_creates_and_records_the_manager(v1: client.CoreV1Api) -> None:
    created = _apply(v1, _cm(a="1", b="2"), "alice")
    assert created.data == {"a": "1", "b": "2"}
    assert _managers(created) == {("alice", "Apply"): {"f:data": {"f:a": {}, "f:b": {}}}}
    again = _apply(v1, _cm(a="1", b="2"), "alice")
    assert again.metadata.resource_version == created.metadata.resource_version  # a no-op writes nothing


def test_fields_dropped_from_the_configuration_are_removed_unless_shared(v1: client.CoreV1Api) -> None:
    _apply(v1, _cm(a="1", b="2", c="3"), "alice")
    _apply(v1, _cm(c="3"), "bob")  # same value: bob co-owns c
    after = _apply(v1, _cm(a="1"), "alice")
    assert after.data == {"a": "1", "c": "3"}
    assert _managers(after) == {("alice", "Apply"): {"f:data": {"f:a": {}}},
                                ("bob", "Apply"): {"f:data": {"f:c": {}}}}


def test_conflict_names_the_manager_and_field_and_force_takes_them(v1: client.CoreV1Api) -> None:
    _apply(v1, _cm(a="1", b="2"), "alice")
    code, status = _refused(_apply, v1, _cm(a="9"), "bob")
    assert (code, status["reason"]) == (409, "Conflict")
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "alice": .data.a'
    assert status["details"]["causes"] == [{"reason": "FieldManagerConflict", "message": 'conflict with "alice"',
                                            "field": ".data.a"}]
    forced = _apply(v1, _cm(a="9"), "bob", force=True)
    assert forced.data == {"a": "9", "b": "2"}
    assert _managers(forced) == {("alice", "Apply"): {"f:data": {"f:b": {}}},
                                 ("bob", "Apply"): {"f:data": {"f:a": {}}}}


def test_updates_own_what_they_change_and_apply_conflicts_with_them(v1: client.CoreV1Api) -> None:
    created = v1.create_namespaced_config_map("default", _cm(a="1"), field_manager="editor")
    assert _managers(created) == {("editor", "Update"): {"f:data": {"f:a": {}}}}
    updated = v1.replace_namespaced_config_map("cfg", "default", _cm(a="2"), field_manager="other")
    assert _managers(updated) == {("other", "Update"): {"f:data": {"f:a": {}}}}  # the change changed hands
    code, status = _refused(_apply, v1, _cm(a="3"), "alice")
    assert code == 409
    # The manager identifier kube builds (BuildManagerIdentifier) never carries the entry's time, so
    # printManager's 'at <time>' branch is never taken: an Update manager is "name" using its apiVersion.
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "other" using v1: .data.a'
    plain = v1.patch_namespaced_config_map("cfg", "default", {"data": {"b": "x"}})  # manager: the User-Agent's name
    assert ("OpenAPI-Generator", "Update") in _managers(plain)


def test_apply_options_are_validated(v1: client.CoreV1Api) -> None:
    code, status = _refused(v1.patch_namespaced_config_map, "cfg", "default", _cm(a="1"), _content_type=_APPLY)
    assert (code, status["message"]) == (422, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required '
                                              "value: is required for apply patch")
    v1.create_namespaced_config_map("default", _cm(a="1"))
    code, status = _refused(v1.patch_namespaced_config_map, "cfg", "default", {"data": {"a": "2"}}, force=True,
                            _content_type="application/merge-patch+json")
    assert (code, status["message"]) == (422, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not '
                                              "be specified for non-apply patch")


def test_custom_resource_list_map_keys_merge_items(kube_client: client.ApiClient) -> None:
    ext = client.ApiextensionsV1Api(kube_client)
    item = {"type": "object", "properties": {"name": {"type": "string"}, "size": {"type": "integer"}}}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"disks": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": item}}}}}
    ext.create_custom_resource_definition({
        "metadata": {"name": "machines.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "machines", "singular": "machine", "kind": "Machine"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": schema}}]}})
    custom = client.CustomObjectsApi(kube_client)

    def apply(manager: str, *disks: dict[str, Any]) -> Any:
        body = {"apiVersion": "example.com/v1", "kind": "Machine", "metadata": {"name": "m"},
                "spec": {"disks": list(disks)}}
        return custom.patch_namespaced_custom_object("example.com", "v1", "default", "machines", "m", body,
                                                     field_manager=manager, _content_type=_APPLY)

    apply("alice", {"name": "root", "size": 10})
    both = apply("bob", {"name": "data", "size": 100})
    assert both["spec"]["disks"] == [{"name": "root", "size": 10}, {"name": "data", "size": 100}]
    bob = next(m for m in both["metadata"]["managedFields"] if m["manager"] == "bob")
    assert bob["fieldsV1"] == {"f:spec": {"f:disks": {'k:{"name":"data"}': {".": {}, "f:name": {}, "f:size": {}}}}}
    with pytest.raises(client.ApiException) as info:
        apply("bob", {"name": "root", "size": 20})
    assert json.loads(info.value.body)["message"] == ('Apply failed with 1 conflict: conflict with "alice": '
                                                      '.spec.disks[name="root"].size')


def test_status_apply_owns_status_only(kube_client: client.ApiClient) -> None:
    apps = client.AppsV1Api(kube_client)
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}
    apps.patch_namespaced_deployment("web", "default", dep, field_manager="deployer", _content_type=_APPLY)
    status = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"replicas": 5}, "status": {"readyReplicas": 1}}
    got = apps.patch_namespaced_deployment_status("web", "default", status, field_manager="controller",
                                                  _content_type=_APPLY)
    assert (got.spec.replicas, got.status.ready_replicas) == (1, 1)  # /status ignores the spec
    entry = next(m for m in got.metadata.managed_fields if m.manager == "controller")
    assert (entry.operation, entry.subresource, entry.fields_v1) == (
        "Apply", "status", {"f:status": {"f:readyReplicas": {}}})
    deployer = next(m for m in got.metadata.managed_fields if m.manager == "deployer")
    assert deployer.fields_v1["f:spec"]["f:selector"] == {}  # a label selector is owned as one value
