"""CRD validation rules (``x-kubernetes-validations``) as kube-apiserver checks them, through the official client.

Two CRDs of the Gateway API v1.6.1 standard channel (``crds/gateway-api/``, unchanged) and one written here
with every field a rule may carry. One server for the module; each test uses its own object names.
Messages are kube's, word for word.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from ruamel.yaml import YAML

from componentbase.client import request
from componentbase.testing import LoopbackAPIServer
from tests.testing.test_validation import refused

pytestmark = pytest.mark.integration

GATEWAY = Path(__file__).parent / "crds" / "gateway-api"
GW = "gateway.networking.k8s.io"


def _load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = YAML(typ="safe").load((GATEWAY / f"{GW}_{name}.yaml").read_text())
    return doc


def rules_crd(*rules: dict[str, Any], plural: str = "things", **spec_props: Any) -> dict[str, Any]:
    """A CRD of kind Thing in example.com whose ``spec`` carries ``rules``."""
    props = {"replicas": {"type": "integer"}, "min": {"type": "integer"}, "mode": {"type": "string"},
             "ports": {"type": "array", "maxItems": 8, "items": {"type": "integer"}},
             "labels": {"type": "object", "maxProperties": 8,
                        "additionalProperties": {"type": "string", "maxLength": 63}}, **spec_props}
    kind = plural[:-1].capitalize()
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": {
                             "type": "object", "properties": props, "x-kubernetes-validations": list(rules)}}}}}]}}


@pytest.fixture(scope="module")
def api() -> Iterator[client.ApiClient]:
    with LoopbackAPIServer() as server:
        api_client = server.api_client()
        ext = client.ApiextensionsV1Api(api_client)
        for name in ("gatewayclasses", "listenersets"):
            ext.create_custom_resource_definition(_load(name))
        ext.create_custom_resource_definition(rules_crd(
            {"rule": "self.replicas >= self.min", "message": "replicas must be at least min"},
            {"rule": "!has(self.mode) || self.mode in ['a', 'b']", "messageExpression":
             "'mode ' + self.mode + ' is not a or b'", "reason": "FieldValueForbidden", "fieldPath": ".mode"},
            {"rule": "!has(self.ports) || self.ports.isSorted()", "messageExpression": "self.labels['missing']",
             "message": "unsorted"},
            {"rule": "!has(self.labels) || self.labels.all(k, k.matches('^[a-z]+$'))"},
            {"rule": "self.replicas <= oldSelf.replicas + 10", "message": "grows by at most 10"},
            {"rule": "!oldSelf.hasValue() || self.min == oldSelf.value().min", "optionalOldSelf": True,
             "message": "min is immutable"}))
        yield api_client
        api_client.close()


@pytest.fixture
def things(api: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api)


def _thing(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": name},
            "spec": {"replicas": 1, "min": 1, **spec}}


def _refused(things: client.CustomObjectsApi, obj: dict[str, Any]) -> tuple[str, list[tuple[str, str, str]]]:
    code, status = refused(lambda: things.create_namespaced_custom_object("example.com", "v1", "default", "things",
                                                                          obj))
    assert (code, status["reason"]) == (422, "Invalid")
    return status["message"], [(c["reason"], c["field"], c["message"]) for c in status["details"]["causes"]]


def test_a_failing_rule_is_kubes_invalid_with_the_rules_message(things: client.CustomObjectsApi) -> None:
    message, causes = _refused(things, _thing("t1", replicas=0))
    assert message == 'Thing.example.com "t1" is invalid: spec: Invalid value: "object": replicas must be at least min'
    assert causes == [("FieldValueInvalid", "spec", 'Invalid value: "object": replicas must be at least min')]
    with pytest.raises(client.ApiException):
        things.get_namespaced_custom_object("example.com", "v1", "default", "things", "t1")


def test_message_expression_reason_field_path_and_default_message(things: client.CustomObjectsApi) -> None:
    _, causes = _refused(things, _thing("t2", mode="c", ports=[2, 1], labels={"Bad": "x"}))
    assert causes == [
        ("FieldValueForbidden", "spec.mode", "Forbidden: mode c is not a or b"),
        # its messageExpression fails (no such key): kube falls back to the message
        ("FieldValueInvalid", "spec", 'Invalid value: "object": unsorted'),
        ("FieldValueInvalid", "spec", 'Invalid value: "object": failed rule: '
                                      "!has(self.labels) || self.labels.all(k, k.matches('^[a-z]+$'))"),
    ]


def test_a_rule_that_raises_is_refused_with_kubes_runtime_error(things: client.CustomObjectsApi) -> None:
    obj = _thing("t3")
    del obj["spec"]["min"]
    _, causes = _refused(things, obj)
    assert causes == [("FieldValueInvalid", "spec", 'Invalid value: "object": no such key: min evaluating rule: '
                                                    "replicas must be at least min")]


def test_transition_rules_run_on_update_only(things: client.CustomObjectsApi) -> None:
    made = things.create_namespaced_custom_object("example.com", "v1", "default", "things",
                                                  _thing("t4", replicas=50, min=1))  # no oldSelf on create
    made["spec"]["replicas"] = 70
    code, status = refused(lambda: things.replace_namespaced_custom_object(
        "example.com", "v1", "default", "things", "t4", made))
    assert (code, status["message"]) == (422, 'Thing.example.com "t4" is invalid: spec: Invalid value: "object": '
                                              "grows by at most 10")
    made["spec"].update(replicas=55, min=2)
    code, status = refused(lambda: things.replace_namespaced_custom_object(
        "example.com", "v1", "default", "things", "t4", made))
    assert status["details"]["causes"][0]["message"] == 'Invalid value: "object": min is immutable'
    made["spec"]["min"] = 1
    assert things.replace_namespaced_custom_object("example.com", "v1", "default", "things", "t4",
                                                   made)["spec"]["replicas"] == 55


def test_an_unchanged_invalid_value_is_ratcheted_on_update(api: client.ApiClient) -> None:
    """A value stored before its rule tightened may stay as it is, while the rest of the object changes; a changed
    value must satisfy the rule, and so must a new object."""
    ext = client.ApiextensionsV1Api(api)
    labels = {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 8,
              "x-kubernetes-validations": [{"rule": "self.size() <= 8"}]}
    crd = rules_crd(plural="ratchets", labels=labels)
    ext.create_custom_resource_definition(crd)
    objs = client.CustomObjectsApi(api)
    made = objs.create_namespaced_custom_object("example.com", "v1", "default", "ratchets", {
        "apiVersion": "example.com/v1", "kind": "Ratchet", "metadata": {"name": "r"},
        "spec": {"mode": "x", "labels": {"a": "1"}}})
    labels["x-kubernetes-validations"] = [{"rule": "self.size() == 0", "message": "no labels"}]
    ext.patch_custom_resource_definition("ratchets.example.com", {"spec": crd["spec"]})
    made["spec"]["mode"] = "y"  # the labels are unchanged: the update goes through, with kube's warning
    resp = request(api, "PUT", "/apis/example.com/v1/namespaces/default/ratchets/r", body=made)
    made = json.loads(resp.read())
    assert made["spec"] == {"mode": "y", "labels": {"a": "1"}}
    assert resp.headers["Warning"] == '299 - "spec.labels: Invalid value: \\"object\\": no labels"'
    made["spec"]["labels"]["b"] = "2"
    code, status = refused(lambda: objs.replace_namespaced_custom_object(
        "example.com", "v1", "default", "ratchets", "r", made))
    assert (code, status["message"]) == (422, 'Ratchet.example.com "r" is invalid: spec.labels: Invalid value: '
                                              '"object": no labels')
    code, status = refused(lambda: objs.create_namespaced_custom_object("example.com", "v1", "default", "ratchets", {
        "apiVersion": "example.com/v1", "kind": "Ratchet", "metadata": {"name": "r2"},
        "spec": {"labels": {"a": "1"}}}))
    assert status["details"]["causes"][0]["message"] == 'Invalid value: "object": no labels'


def test_timestamps_and_durations_are_typed_by_their_format(api: client.ApiClient) -> None:
    """``format: date-time`` and ``format: duration`` strings are timestamps and durations in CEL, as in kube."""
    stamp, span = {"type": "string", "format": "date-time"}, {"type": "string", "format": "duration"}
    client.ApiextensionsV1Api(api).create_custom_resource_definition(rules_crd(
        {"rule": "self.end > self.start + self.grace", "message": "end must follow start by the grace period"},
        plural="windows", start=stamp, end=stamp, grace=span))
    objs = client.CustomObjectsApi(api)

    def window(name: str, end: str) -> dict[str, Any]:
        return {"apiVersion": "example.com/v1", "kind": "Window", "metadata": {"name": name},
                "spec": {"start": "2024-01-01T00:00:00Z", "end": end, "grace": "1h30m"}}

    objs.create_namespaced_custom_object("example.com", "v1", "default", "windows",
                                         window("w1", "2024-01-01T04:00:00+02:00"))  # 02:00Z: 2 h after start
    _code, status = refused(lambda: objs.create_namespaced_custom_object(
        "example.com", "v1", "default", "windows", window("w2", "2024-01-01T01:00:00Z")))
    assert status["details"]["causes"][0]["message"] == ('Invalid value: "object": end must follow start by the grace '
                                                         "period")


def test_schema_errors_keep_the_rules_from_running(things: client.CustomObjectsApi) -> None:
    _, causes = _refused(things, _thing("t5", replicas="many"))
    assert causes == [
        ("FieldValueTypeInvalid", "spec.replicas",
         'Invalid value: "string": spec.replicas in body must be of type integer: "string"'),
        ("FieldValueInvalid", "<nil>", 'Invalid value: "null": some validation rules were not checked because the '
                                       "object was invalid; correct the existing errors to complete validation")]


# --- the CRD is refused ------------------------------------------------------------------------


def _crd_refused(api: client.ApiClient, crd: dict[str, Any]) -> list[tuple[str, str, str]]:
    ext = client.ApiextensionsV1Api(api)
    code, status = refused(lambda: ext.create_custom_resource_definition(crd))
    assert (code, status["reason"]) == (422, "Invalid")
    with pytest.raises(client.ApiException):
        ext.read_custom_resource_definition(crd["metadata"]["name"])
    return [(c["reason"], c["field"], c["message"]) for c in status["details"]["causes"]]


RULE_AT = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]"


def test_a_rule_that_does_not_compile_refuses_the_crd(api: client.ApiClient) -> None:
    causes = _crd_refused(api, rules_crd({"rule": "self.replicas.frobnicate()"}, plural="badrules"))
    assert causes == [("FieldValueInvalid", f"{RULE_AT}.rule", (
        'Invalid value: apiextensions.ValidationRule{Rule:"self.replicas.frobnicate()", Message:"", '
        'MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", '
        "OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:25: undeclared reference to "
        "'frobnicate' (in container '')\n | self.replicas.frobnicate()\n | ........................^"))]


def test_a_rule_naming_a_field_the_schema_lacks_refuses_the_crd(api: client.ApiClient) -> None:
    causes = _crd_refused(api, rules_crd({"rule": "self.replicsa >= self.min"}, plural="typos"))
    assert [c[2].split(": compilation failed: ")[1] for c in causes] == [
        "ERROR: <input>:1:5: undefined field 'replicsa'\n | self.replicsa >= self.min\n | ....^"]


def test_a_rule_over_budget_refuses_the_crd(api: client.ApiClient) -> None:
    unbounded = {"type": "array", "items": {"type": "string"}}
    causes = _crd_refused(api, rules_crd({"rule": "self.names.all(a, self.names.exists_one(b, a == b))"},
                                         plural="costlies", names=unbounded))
    budget = ("exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, "
              "maxProperties, and maxLength where arrays, maps, and strings are declared)")
    assert causes == [
        ("FieldValueForbidden", f"{RULE_AT}.rule", f"Forbidden: estimated rule cost {budget}"),
        ("FieldValueForbidden", f"{RULE_AT}.rule", "Forbidden: contributed to estimated rule & messageExpression "
                                                   "cost total exceeding cost limit for entire OpenAPIv3 schema"),
        ("FieldValueForbidden", "spec.validation.openAPIV3Schema",
         f"Forbidden: x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 "
         f"schema {budget}")]
    bounded = dict(unbounded, maxItems=16, items={"type": "string", "maxLength": 64})
    client.ApiextensionsV1Api(api).create_custom_resource_definition(rules_crd(
        {"rule": "self.names.all(a, self.names.exists_one(b, a == b))"}, plural="costlies", names=bounded))


def test_a_rule_not_returning_a_bool_refuses_the_crd(api: client.ApiClient) -> None:
    causes = _crd_refused(api, rules_crd({"rule": "self.replicas + 1", "fieldPath": ".replicas"}, plural="notbools"))
    assert causes == [("FieldValueInvalid", f"{RULE_AT}.rule", (
        'Invalid value: apiextensions.ValidationRule{Rule:"self.replicas + 1", Message:"", MessageExpression:"", '
        'Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:".replicas", OptionalOldSelf:(*bool)(nil)}: '
        "cel expression must evaluate to a bool"))]


def test_a_rules_own_fields_are_checked_before_it_is_compiled(api: client.ApiClient) -> None:
    """kube compiles no rule of a schema whose rules' fields are wrong: only those are reported."""
    causes = _crd_refused(api, rules_crd({"rule": "self.replicas + 1", "reason": "FieldValueWrong",
                                          "fieldPath": ".nope", "message": " "}, plural="badfields"))
    assert causes == [
        ("FieldValueInvalid", f"{RULE_AT}.message", 'Invalid value: " ": message must be non-empty if specified'),
        ("FieldValueNotSupported", f"{RULE_AT}.reason", 'Unsupported value: "FieldValueWrong": supported values: '
                                                        '"FieldValueDuplicate", "FieldValueForbidden", '
                                                        '"FieldValueInvalid", "FieldValueRequired"'),
        ("FieldValueInvalid", f"{RULE_AT}.fieldPath", 'Invalid value: ".nope": fieldPath must be a valid path')]


# --- Gateway API -------------------------------------------------------------------------------


def _listener_set(name: str, *listeners: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": f"{GW}/v1", "kind": "ListenerSet", "metadata": {"name": name},
            "spec": {"parentRef": {"name": "gw"}, "listeners": list(listeners)}}


def test_gateway_api_listener_set_rules(api: client.ApiClient) -> None:
    objs = client.CustomObjectsApi(api)
    http = {"name": "http", "port": 80, "protocol": "HTTP"}
    tls = {"name": "tls", "port": 443, "protocol": "TLS", "tls": {"mode": "Passthrough"}}
    made = objs.create_namespaced_custom_object(GW, "v1", "default", "listenersets", _listener_set("ok", http, tls))
    assert [x["name"] for x in made["spec"]["listeners"]] == ["http", "tls"]
    bad = _listener_set("bad", http, dict(http, port=8080), {"name": "tcp", "port": 9, "protocol": "TCP",
                                                              "hostname": "a.example.com"})
    code, status = refused(lambda: objs.create_namespaced_custom_object(GW, "v1", "default", "listenersets", bad))
    assert (code, status["message"]) == (422, (  # listeners is a map list keyed by name: the repeat comes first
        'ListenerSet.gateway.networking.k8s.io "bad" is invalid: [spec.listeners[1]: Duplicate value: '
        'map[string]interface {}{"name":"http"}, spec.listeners: Invalid value: "array": '
        "hostname must not be specified for protocols ['TCP', 'UDP'], spec.listeners: Invalid value: \"array\": "
        "Listener name must be unique within the Gateway]"))


def test_gateway_class_controller_name_is_immutable(api: client.ApiClient) -> None:
    objs = client.CustomObjectsApi(api)
    made = objs.create_cluster_custom_object(GW, "v1", "gatewayclasses", {
        "apiVersion": f"{GW}/v1", "kind": "GatewayClass", "metadata": {"name": "gc"},
        "spec": {"controllerName": "example.com/one"}})
    made["spec"]["controllerName"] = "example.com/two"
    code, status = refused(lambda: objs.replace_cluster_custom_object(GW, "v1", "gatewayclasses", "gc", made))
    assert (code, status["message"]) == (422, 'GatewayClass.gateway.networking.k8s.io "gc" is invalid: '
                                              'spec.controllerName: Invalid value: "string": Value is immutable')


SHARED = Path(__file__).parents[3] / "shared" / "gateway-api-v1.6.1" / "crds"


@pytest.mark.skipif(not SHARED.is_dir(), reason="the six Gateway API CRDs live beside the checkout")
def test_all_six_gateway_api_crds_install(api: client.ApiClient) -> None:
    ext = client.ApiextensionsV1Api(api)
    for path in sorted(SHARED.glob("*.yaml")):
        crd = YAML(typ="safe").load(path.read_text())
        if crd["metadata"]["name"] not in ("gatewayclasses.gateway.networking.k8s.io",
                                           "listenersets.gateway.networking.k8s.io"):
            ext.create_custom_resource_definition(json.loads(json.dumps(crd, default=str)))
    names = {c.metadata.name for c in ext.list_custom_resource_definition().items}
    assert {f"{p}.{GW}" for p in ("gateways", "httproutes", "grpcroutes", "backendtlspolicies")} <= names
