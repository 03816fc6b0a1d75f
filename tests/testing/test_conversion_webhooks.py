"""CRD conversion webhooks: objects stored in the storage version, served in the version asked for through
a ConversionReview, for reads, lists, watches and writes; a bad conversion is kube's error."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer
from componentbase.util._certs import CertificateAuthority
from tests.testing.webhook_support import WebhookServer

pytestmark = pytest.mark.integration

_SCHEMA = {"openAPIV3Schema": {"type": "object", "properties": {
    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}


def convert(review: dict[str, Any]) -> dict[str, Any]:
    """v1's spec.size is v2's spec.replicas."""
    want = review["request"]["desiredAPIVersion"]
    out = []
    for obj in review["request"]["objects"]:
        spec = dict(obj.get("spec") or {})
        if want.endswith("/v2") and "size" in spec:
            spec["replicas"] = spec.pop("size")
        elif want.endswith("/v1") and "replicas" in spec:
            spec["size"] = spec.pop("replicas")
        out.append(dict(obj, apiVersion=want, spec=spec))
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": {
        "uid": review["request"]["uid"], "convertedObjects": out, "result": {"status": "Success"}}}


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookServer]:
    server = WebhookServer(CertificateAuthority.generate("webhook-ca"), ["webhook.system.svc"])
    server.handlers["/convert"] = convert
    yield server.start()
    server.stop()


@pytest.fixture(scope="module")
def api(hooks: WebhookServer) -> Iterator[client.ApiClient]:
    with LoopbackAPIServer(webhook_services={"system/webhook": f"127.0.0.1:{hooks.port}"}) as server:
        api_client = server.api_client()
        crd = {"metadata": {"name": "widgets.example.com"}, "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": _SCHEMA},
                         {"name": "v2", "served": True, "storage": False, "schema": _SCHEMA}],
            "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {
                "service": {"namespace": "system", "name": "webhook", "path": "/convert"},
                "caBundle": hooks.ca_bundle}}}}}
        client.ApiextensionsV1Api(api_client).create_custom_resource_definition(crd)
        yield api_client
        api_client.close()


def _widget(name: str, version: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"example.com/{version}", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


def test_a_v1_object_reads_back_as_v2_and_a_v2_write_is_stored_as_v1(api: client.ApiClient,
                                                                      hooks: WebhookServer) -> None:
    crs = client.CustomObjectsApi(api)
    crs.create_namespaced_custom_object("example.com", "v1", "default", "widgets", _widget("one", "v1", size=3))
    got = crs.get_namespaced_custom_object("example.com", "v2", "default", "widgets", "one")
    assert (got["apiVersion"], got["spec"]) == ("example.com/v2", {"replicas": 3})
    assert hooks.reviews["/convert"][-1]["request"]["desiredAPIVersion"] == "example.com/v2"
    assert got["metadata"]["uid"] and got["metadata"]["resourceVersion"]  # the original's metadata
    crs.create_namespaced_custom_object("example.com", "v2", "default", "widgets", _widget("two", "v2", replicas=5))
    stored = crs.get_namespaced_custom_object("example.com", "v1", "default", "widgets", "two")
    assert stored["spec"] == {"size": 5}
    listed = crs.list_namespaced_custom_object("example.com", "v2", "default", "widgets")
    assert [(i["apiVersion"], i["spec"]) for i in listed["items"]] == [
        ("example.com/v2", {"replicas": 3}), ("example.com/v2", {"replicas": 5})]
    patched = crs.patch_namespaced_custom_object("example.com", "v2", "default", "widgets", "one",
                                                 {"spec": {"replicas": 4}})
    assert patched["spec"] == {"replicas": 4}
    resp = crs.list_namespaced_custom_object("example.com", "v2", "default", "widgets", watch=True,
                                             timeout_seconds=1, _preload_content=False)
    events = [json.loads(line) for line in resp.read().splitlines() if line]
    assert {e["object"]["metadata"]["name"]: e["object"]["spec"] for e in events} == {
        "one": {"replicas": 4}, "two": {"replicas": 5}}


def test_a_conversion_that_changes_the_name_or_the_count_is_refused(api: client.ApiClient,
                                                                    hooks: WebhookServer) -> None:
    crs = client.CustomObjectsApi(api)
    crs.create_namespaced_custom_object("example.com", "v1", "default", "widgets", _widget("renamed", "v1"))

    def rename(review: dict[str, Any]) -> dict[str, Any]:
        answer = convert(review)
        answer["response"]["convertedObjects"][0]["metadata"]["name"] = "other"
        return answer

    hooks.handlers["/convert"] = rename
    try:
        with pytest.raises(client.ApiException) as err:
            crs.get_namespaced_custom_object("example.com", "v2", "default", "widgets", "renamed")
        body = json.loads(err.value.body)
        assert (body["code"], body["message"]) == (500, "conversion webhook for example.com/v1, Kind=Widget "
                                                        "returned invalid object: must have the same name: renamed "
                                                        "!= other")
        hooks.handlers["/convert"] = lambda r: dict(convert(r), response=dict(convert(r)["response"],
                                                                              convertedObjects=[]))
        with pytest.raises(client.ApiException) as err:
            crs.create_namespaced_custom_object("example.com", "v2", "default", "widgets", _widget("new", "v2"))
        assert json.loads(err.value.body)["message"] == ("conversion webhook for example.com/v2, Kind=Widget "
                                                         "returned 0 objects, expected 1")
    finally:
        hooks.handlers["/convert"] = convert
    with pytest.raises(client.ApiException) as err:
        crs.get_namespaced_custom_object("example.com", "v1", "default", "widgets", "new")
    assert err.value.status == 404  # nothing stored


def test_match_policy_equivalent_calls_a_v1_rule_for_a_v2_request(api: client.ApiClient,
                                                                   hooks: WebhookServer) -> None:
    hooks.handlers["/check"] = lambda r: {"allowed": True}
    reg = client.AdmissionregistrationV1Api(api)
    rule = {"operations": ["CREATE"], "apiGroups": ["example.com"], "apiVersions": ["v1"], "resources": ["widgets"]}
    for policy in ("Exact", "Equivalent"):
        reg.create_validating_webhook_configuration({"metadata": {"name": policy.lower()}, "webhooks": [{
            "name": f"{policy.lower()}.example.com", "matchPolicy": policy, "rules": [rule], "sideEffects": "None",
            "admissionReviewVersions": ["v1"], "clientConfig": {
                "service": {"namespace": "system", "name": "webhook", "path": "/check"},
                "caBundle": hooks.ca_bundle}}]})
    try:
        client.CustomObjectsApi(api).create_namespaced_custom_object("example.com", "v2", "default", "widgets",
                                                                     _widget("equivalent", "v2", replicas=7))
    finally:
        for policy in ("exact", "equivalent"):
            reg.delete_validating_webhook_configuration(policy)
    assert len(hooks.reviews["/check"]) == 1  # Exact did not match a v2 request
    request = hooks.reviews["/check"][0]["request"]
    assert (request["kind"]["version"], request["requestKind"]["version"]) == ("v1", "v2")
    assert (request["object"]["apiVersion"], request["object"]["spec"]) == ("example.com/v1", {"size": 7})


def test_a_webhook_conversion_is_validated_as_kube_does(api: client.ApiClient) -> None:
    crd = {"metadata": {"name": "gizmos.example.com"}, "spec": {
        "group": "example.com", "scope": "Namespaced", "names": {"plural": "gizmos", "kind": "Gizmo"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": _SCHEMA}],
        "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v9"],
                                                          "clientConfig": {"url": "http://127.0.0.1/convert"}}}}}
    with pytest.raises(client.ApiException) as err:
        client.ApiextensionsV1Api(api).create_custom_resource_definition(crd)
    assert err.value.status == 422
    assert [(c["field"], c["message"]) for c in json.loads(err.value.body)["details"]["causes"]] == [
        ("spec.conversion.webhookClientConfig.url",
         "Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"),
        ("spec.conversion.conversionReviewVersions", 'Invalid value: ["v9"]: must include at least one of v1, '
                                                     "v1beta1")]
    del crd["spec"]["conversion"]["webhook"]
    with pytest.raises(client.ApiException) as err:
        client.ApiextensionsV1Api(api).create_custom_resource_definition(crd)
    assert json.loads(err.value.body)["message"] == (
        'CustomResourceDefinition.apiextensions.k8s.io "gizmos.example.com" is invalid: ['
        "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook, "
        "spec.conversion.conversionReviewVersions: Required value]")


def test_a_failed_conversion_ends_a_watch_cleanly(api: client.ApiClient, hooks: WebhookServer) -> None:
    crs = client.CustomObjectsApi(api)
    resp = crs.list_namespaced_custom_object("example.com", "v2", "kube-public", "widgets", watch=True,
                                             timeout_seconds=10, _preload_content=False)
    hooks.handlers["/convert"] = lambda r: {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                                            "response": {"uid": r["request"]["uid"],
                                                         "result": {"status": "Failure", "message": "no v2 today"}}}
    try:
        started = time.monotonic()
        crs.create_namespaced_custom_object("example.com", "v1", "kube-public", "widgets", _widget("w", "v1"))
        assert resp.read() == b""  # the stream ended, well formed, without the object
        assert time.monotonic() - started < 5
        with pytest.raises(client.ApiException) as err:
            crs.get_namespaced_custom_object("example.com", "v2", "kube-public", "widgets", "w")
        assert json.loads(err.value.body)["message"] == ("conversion webhook for example.com/v1, Kind=Widget failed: "
                                                         "no v2 today")
    finally:
        hooks.handlers["/convert"] = convert
