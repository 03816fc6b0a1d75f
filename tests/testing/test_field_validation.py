"""``fieldValidation`` as kube-apiserver applies it, through the official client: Strict refuses unknown
fields (400 on create and update, 422 on a patch), Warn (the default) answers with a 299 Warning header
and drops them, Ignore drops them silently; for built-in kinds and for custom resources alike."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from componentbase.client import request
from tests.testing.test_crd import GROUP, PLURAL, _widget, widgets  # noqa: F401  # the fixture
from tests.testing.test_validation import pod, refused

pytestmark = pytest.mark.integration


def _config_map(**extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": "c"}, "data": {"a": "1"}, **extra}


def send(v1: client.CoreV1Api, method: str, path: str, body: Any, directive: str = "", **kw: Any) -> Any:
    """A raw call through the official client (whose models refuse unknown fields before sending)."""
    query = [("fieldValidation", directive)] if directive else []
    return request(v1.api_client, method, path, query=query, body=body, **kw)


CMS = "/api/v1/namespaces/default/configmaps"


def test_strict_refuses_unknown_fields_naming_each(v1: client.CoreV1Api) -> None:
    body = pod()
    body["spec"]["foo"] = 1
    body["spec"]["containers"][0]["bar"] = 2
    code, status = refused(lambda: send(v1, "POST", "/api/v1/namespaces/default/pods", body, "Strict"))
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
                                 'unknown field "spec.containers[0].bar", unknown field "spec.foo"')  # body order
    assert v1.list_namespaced_pod("default").items == []
    made = v1.create_namespaced_config_map("default", _config_map())
    code, status = refused(lambda: send(v1, "PUT", CMS + "/c", _config_map(
        metadata={"name": "c", "resourceVersion": made.metadata.resource_version}, datum={"b": "2"}), "Strict"))
    assert (code, status["message"]) == (400, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
                                              'strict decoding error: unknown field "datum"')


def test_a_strict_patch_with_an_unknown_field_is_invalid(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_config_map("default", _config_map())
    code, status = refused(lambda: send(v1, "PATCH", CMS + "/c", {"datum": {"b": "2"}}, "Strict",
                                        content_type="application/merge-patch+json"))
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["details"]["causes"][0]["field"] == "patch"
    assert status["message"].endswith(': strict decoding error: unknown field "datum"')
    assert v1.read_namespaced_config_map("c", "default").data == {"a": "1"}


def test_warn_is_the_default_and_drops_the_field(v1: client.CoreV1Api) -> None:
    resp = send(v1, "POST", CMS, _config_map(datum={"b": "2"}))
    assert resp.status == 201
    assert resp.headers["Warning"] == '299 - "unknown field \\"datum\\""'
    assert "datum" not in json.loads(resp.read())
    resp = send(v1, "PATCH", CMS + "/c", {"datum": 1}, "Warn")
    assert resp.headers["Warning"] == '299 - "unknown field \\"datum\\""'
    assert "datum" not in json.loads(resp.read())
    resp = send(v1, "PATCH", CMS + "/c", {"data": {"b": "2"}})
    resp.read()
    assert "Warning" not in resp.headers  # nothing unknown, nothing to warn of


def test_ignore_drops_unknown_fields_silently(v1: client.CoreV1Api) -> None:
    resp = send(v1, "POST", CMS, _config_map(datum={"b": "2"}), "Ignore")
    assert resp.status == 201 and "Warning" not in resp.headers
    assert "datum" not in json.loads(resp.read())
    assert "datum" not in json.loads(send(v1, "GET", CMS + "/c", None).read())


def test_an_unsupported_directive_is_invalid(v1: client.CoreV1Api) -> None:
    code, status = refused(lambda: v1.create_namespaced_config_map("default", _config_map(),
                                                                   field_validation="Loud"))
    assert (code, status["message"]) == (422, 'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: '
                                              'Unsupported value: "Loud": supported values: "", "Ignore", '
                                              '"Strict", "Warn"')


def test_custom_resources_know_their_fields_from_the_schema(
        widgets: client.CustomObjectsApi) -> None:  # noqa: F811  # the fixture
    obj = _widget("w")
    obj["spec"].update(unknown=1, extra={"free": {"form": True}})  # extra preserves unknown fields
    obj["metadata"]["labelz"] = {}
    code, status = refused(lambda: widgets.create_namespaced_custom_object(
        GROUP, "v1", "default", PLURAL, obj, field_validation="Strict"))
    assert (code, status["message"]) == (400, 'Widget in version "v1" cannot be handled as a Widget: strict '
                                              'decoding error: unknown field "metadata.labelz", unknown field '
                                              '"spec.unknown"')
    resp = widgets.create_namespaced_custom_object(GROUP, "v1", "default", PLURAL, obj, _preload_content=False)
    assert resp.headers["Warning"] == ('299 - "unknown field \\"metadata.labelz\\"", '
                                       '299 - "unknown field \\"spec.unknown\\""')
    assert json.loads(resp.data)["spec"]["extra"] == {"free": {"form": True}}


def test_a_value_of_the_wrong_type_is_go_decoders_bad_request(v1: client.CoreV1Api) -> None:
    deployment = {"metadata": {"name": "d"}, "spec": {"replicas": "3", "selector": {"matchLabels": {"a": "b"}},
                                                      "template": {"metadata": {"labels": {"a": "b"}},
                                                                   "spec": pod()["spec"]}}}
    code, status = refused(lambda: send(v1, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment,
                                        "Ignore"))  # decoding comes before fieldValidation
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == ('Deployment in version "v1" cannot be handled as a Deployment: json: cannot '
                                 "unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32")
    labelled = pod()
    labelled["metadata"]["labels"] = {"version": 1}
    code, status = refused(lambda: send(v1, "POST", "/api/v1/namespaces/default/pods", labelled))
    assert (code, status["message"]) == (400, 'Pod in version "v1" cannot be handled as a Pod: json: cannot '
                                              "unmarshal number into Go struct field ObjectMeta.metadata.labels of "
                                              "type string")
    limited = pod()
    limited["spec"]["containers"][0]["resources"] = {"limits": {"cpu": 1}}  # a number is a quantity too
    assert send(v1, "POST", "/api/v1/namespaces/default/pods", limited).status == 201


def test_custom_resources_metadata_is_validated_as_kubes(
        widgets: client.CustomObjectsApi) -> None:  # noqa: F811  # the fixture
    obj = _widget("Bad_Name")
    obj["metadata"]["labels"] = {"ok": "fine"}
    code, status = refused(lambda: widgets.create_namespaced_custom_object(GROUP, "v1", "default", PLURAL, obj))
    assert (code, status["details"]["causes"][0]["field"]) == (422, "metadata.name")
    assert status["message"].startswith('Widget.example.com "Bad_Name" is invalid: metadata.name: Invalid value: '
                                        '"Bad_Name": a lowercase RFC 1123 subdomain')
