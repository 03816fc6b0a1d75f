"""CustomResourceDefinitions as kube-apiserver serves them, through kubectl and the official client.

``crds/widgets.yaml`` is the CRD a controller author would write: two versions, status and scale
subresources, schema defaults and a free-form field. Error messages are kube's, word for word.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, watch
from ruamel.yaml import YAML

Kubectl = Callable[..., subprocess.CompletedProcess[str]]  # the ``kubectl`` fixture of conftest.py
CRD_FILE = Path(__file__).parent / "crds" / "widgets.yaml"
GROUP, PLURAL = "example.com", "widgets"


def _crd() -> dict[str, Any]:
    doc: dict[str, Any] = YAML(typ="safe").load(CRD_FILE.read_text())
    return doc


def _widget(name: str, version: str = "v1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Widget", "metadata": {"name": name},
            "spec": spec or {"size": "small"}}


@pytest.fixture
def widgets(kube_client: client.ApiClient) -> client.CustomObjectsApi:
    """The CRD created through the official client; the custom objects API to use it."""
    client.ApiextensionsV1Api(kube_client).create_custom_resource_definition(_crd())
    return client.CustomObjectsApi(kube_client)


def _create(api: client.CustomObjectsApi, obj: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    got: dict[str, Any] = api.create_namespaced_custom_object(GROUP, version, "default", PLURAL, obj)
    return got


@pytest.mark.process
def test_a_crd_applied_with_kubectl_is_established_and_served(kubectl: Kubectl) -> None:
    assert kubectl("apply", "-f", str(CRD_FILE)).stdout.strip() == (
        "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created")
    kubectl("wait", "--for=condition=Established", "--timeout=1s", "crd/widgets.example.com")
    status = json.loads(kubectl("get", "crd", "widgets.example.com", "-o", "json").stdout)["status"]
    assert {c["type"]: c["status"] for c in status["conditions"]} == {"NamesAccepted": "True", "Established": "True"}
    assert status["acceptedNames"]["shortNames"] == ["wd"] and status["storedVersions"] == ["v1"]
    rows = kubectl("api-resources", "--api-group=example.com", "--no-headers").stdout.split()
    assert rows == ["widgets", "wd", "example.com/v1", "true", "Widget"]


@pytest.mark.process
def test_kubectl_shows_kubes_validation_message(kubectl: Kubectl, tmp_path: Path) -> None:
    kubectl("apply", "-f", str(CRD_FILE))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_widget("w1", size="small", replicas="three")))
    done = kubectl("apply", "-f", str(bad), check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == ('The Widget "w1" is invalid: spec.replicas: Invalid value: "string": '
                                   'spec.replicas in body must be of type integer: "string"')


@pytest.mark.integration
@pytest.mark.parametrize(("spec", "reason", "message"), [
    ({"size": "small", "replicas": "three"}, "FieldValueTypeInvalid",
     'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"'),
    ({}, "FieldValueRequired", "spec.size: Required value"),
    ({"size": "medium"}, "FieldValueNotSupported",
     'spec.size: Unsupported value: "medium": supported values: "small", "large"'),
    ({"size": "small", "replicas": 11}, "FieldValueInvalid",
     "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
    ({"size": "small", "replicas": -1}, "FieldValueInvalid",
     "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"),
    ({"size": "small", "name": "ABC"}, "FieldValueInvalid",
     "spec.name: Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'"),
    ({"size": "small", "name": "a"}, "FieldValueInvalid",
     'spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long'),
    ({"size": "small", "name": "abcdef"}, "FieldValueTooLong", "spec.name: Too long: may not be more than 5 bytes"),
    ({"size": "small", "ports": []}, "FieldValueInvalid",
     "spec.ports: Invalid value: 0: spec.ports in body should have at least 1 items"),
    ({"size": "small", "ports": [1, 2, 3]}, "FieldValueTooMany", "spec.ports: Too many: 3: must have at most 2 items"),
])
def test_objects_are_validated_with_kubes_wording(widgets: client.CustomObjectsApi, spec: dict[str, Any],
                                                  reason: str, message: str) -> None:
    obj = _widget("w")
    obj["spec"] = spec
    with pytest.raises(client.ApiException) as info:
        _create(widgets, obj)
    status = json.loads(info.value.body)
    assert (info.value.status, status["reason"]) == (422, "Invalid")
    assert status["message"] == f'Widget.example.com "w" is invalid: {message}'
    field, _, why = message.partition(": ")
    assert status["details"]["causes"] == [{"reason": reason, "message": why, "field": field}]
    assert (status["details"]["group"], status["details"]["kind"]) == (GROUP, "Widget")


@pytest.mark.integration
def test_unknown_fields_are_pruned_and_defaults_applied(widgets: client.CustomObjectsApi) -> None:
    obj = _widget("w")
    obj["spec"].update(unknown=1, extra={"free": {"form": True}})
    obj["top"] = "level"
    got = _create(widgets, obj)
    assert got["spec"] == {"size": "small", "extra": {"free": {"form": True}}, "replicas": 1, "mode": "fast"}
    assert "top" not in got and got["metadata"]["generation"] == 1
    read = widgets.get_namespaced_custom_object(GROUP, "v1", "default", PLURAL, "w")
    assert read["spec"] == got["spec"]


@pytest.mark.process
def test_objects_are_listed_and_watched(widgets: client.CustomObjectsApi, kubectl: Kubectl) -> None:
    _create(widgets, _widget("a"))
    listed = widgets.list_namespaced_custom_object(GROUP, "v1", "default", PLURAL)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"] and listed["kind"] == "WidgetList"
    seen: list[tuple[str, str]] = []

    def follow() -> None:
        for event in watch.Watch().stream(widgets.list_namespaced_custom_object, GROUP, "v1", "default", PLURAL,
                                          resource_version=listed["metadata"]["resourceVersion"], timeout_seconds=5):
            seen.append((event["type"], event["object"]["metadata"]["name"]))
            if len(seen) == 2:
                return

    watcher = threading.Thread(target=follow)
    watcher.start()
    _create(widgets, _widget("b"))
    widgets.delete_namespaced_custom_object(GROUP, "v1", "default", PLURAL, "a")
    watcher.join(10)
    assert seen == [("ADDED", "b"), ("DELETED", "a")]
    assert kubectl("get", "wd", "-o", "name").stdout.split() == ["widget.example.com/b"]


@pytest.mark.process
def test_status_and_scale_subresources(widgets: client.CustomObjectsApi, kubectl: Kubectl) -> None:
    obj = _widget("w")
    obj["status"] = {"replicas": 7}
    created = _create(widgets, obj)
    assert "status" not in created  # the main resource does not write status
    widgets.patch_namespaced_custom_object_status(GROUP, "v1", "default", PLURAL, "w", {
        "status": {"replicas": 2, "selector": "app=w"}, "spec": {"size": "large"}})
    got = widgets.get_namespaced_custom_object(GROUP, "v1", "default", PLURAL, "w")
    assert got["status"] == {"replicas": 2, "selector": "app=w"} and got["spec"]["size"] == "small"
    kubectl("scale", "wd", "w", "--replicas=4")
    scale = widgets.get_namespaced_custom_object_scale(GROUP, "v1", "default", PLURAL, "w")
    assert (scale["spec"], scale["status"]) == ({"replicas": 4}, {"replicas": 2, "selector": "app=w"})
    assert widgets.get_namespaced_custom_object(GROUP, "v1", "default", PLURAL, "w")["metadata"]["generation"] == 2


@pytest.mark.integration
def test_versions_share_objects_and_rewrite_api_version(widgets: client.CustomObjectsApi) -> None:
    _create(widgets, _widget("old", "v1beta1", size="large", anything="goes"), "v1beta1")
    _create(widgets, _widget("new"))
    old = widgets.get_namespaced_custom_object(GROUP, "v1", "default", PLURAL, "old")
    assert old["apiVersion"] == "example.com/v1" and old["spec"]["size"] == "large"
    beta = widgets.list_namespaced_custom_object(GROUP, "v1beta1", "default", PLURAL)
    assert [(i["apiVersion"], i["metadata"]["name"]) for i in beta["items"]] == [
        ("example.com/v1beta1", "new"), ("example.com/v1beta1", "old")]


@pytest.mark.process
def test_deleting_the_crd_deletes_its_objects(kube_client: client.ApiClient, widgets: client.CustomObjectsApi,
                                              kubectl: Kubectl) -> None:
    _create(widgets, _widget("w"))
    kubectl("delete", "crd", "widgets.example.com")
    with pytest.raises(client.ApiException) as info:
        widgets.list_namespaced_custom_object(GROUP, "v1", "default", PLURAL)
    assert info.value.status == 404
    client.ApiextensionsV1Api(kube_client).create_custom_resource_definition(_crd())
    assert widgets.list_namespaced_custom_object(GROUP, "v1", "default", PLURAL)["items"] == []


@pytest.mark.integration
def test_a_non_structural_schema_is_refused_naming_the_field(kube_client: client.ApiClient) -> None:
    crd = _crd()
    spec_schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    del spec_schema["properties"]["size"]["type"]
    with pytest.raises(client.ApiException) as info:
        client.ApiextensionsV1Api(kube_client).create_custom_resource_definition(crd)
    status = json.loads(info.value.body)
    assert (info.value.status, status["message"]) == (422, (
        'CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: '
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].type: "
        "Required value: must not be empty for specified object fields"))


@pytest.mark.integration
def test_a_crd_whose_kind_is_taken_is_not_established(kube_client: client.ApiClient) -> None:
    ext = client.ApiextensionsV1Api(kube_client)
    ext.create_custom_resource_definition(_crd())
    other = copy.deepcopy(_crd())
    other["metadata"]["name"] = "gizmos.example.com"
    other["spec"]["names"].update(plural="gizmos", singular="gizmo", shortNames=["gz"])
    got = ext.create_custom_resource_definition(other)
    assert {c.type: (c.status, c.reason) for c in got.status.conditions} == {
        "NamesAccepted": ("False", "KindConflict"), "Established": ("False", "NotAccepted")}
    resources = client.CustomObjectsApi(kube_client).get_api_resources(GROUP, "v1").resources
    assert [r.name for r in resources if "/" not in r.name] == ["widgets"]


@pytest.mark.process
def test_the_cli_loads_crds_and_names_a_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    crd = _crd()
    del crd["spec"]["scope"]
    bad.write_text(json.dumps(crd))
    done = subprocess.run([sys.executable, "-m", "componentbase.testing.apiserver", "--crd-dir", str(bad)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"python -m componentbase.testing.apiserver: error: {bad}: CustomResourceDefinition."
                           'apiextensions.k8s.io "widgets.example.com" is invalid: spec.scope: Required value\n')


@pytest.mark.integration
def test_selectable_fields_select_and_other_labels_are_refused(kube_client: client.ApiClient) -> None:
    crd = _crd()
    crd["spec"]["versions"][0]["selectableFields"] = [{"jsonPath": ".spec.size"}]
    client.ApiextensionsV1Api(kube_client).create_custom_resource_definition(crd)
    api = client.CustomObjectsApi(kube_client)
    _create(api, _widget("s", size="small"))
    _create(api, _widget("l", size="large"))
    listed = api.list_namespaced_custom_object(GROUP, "v1", "default", PLURAL, field_selector="spec.size=large")
    assert [w["metadata"]["name"] for w in listed["items"]] == ["l"]
    with pytest.raises(client.ApiException) as info:
        api.list_namespaced_custom_object(GROUP, "v1", "default", PLURAL, field_selector="spec.color=red")
    assert info.value.status == 400
    assert json.loads(info.value.body)["message"].startswith('"spec.color" is not a known field selector')
