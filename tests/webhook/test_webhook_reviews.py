"""What a webhook answers, review in, review out: the JSON patch of a mutation, denials and warnings, malformed
reviews answered as controller-runtime answers them, and conversions through the hub."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest

from componentbase.testing.apiserver.apimachinery.patch import json_patch as apply_patch
from componentbase.webhook import (
    AdmissionRequest,
    ConversionError,
    Denied,
    WebhookOptions,
    WebhookServer,
    mutate_path,
    validate_path,
)
from componentbase.webhook._admission import answer_admission
from componentbase.webhook._conversion import Conversion, answer_conversion
from componentbase.webhook._patch import json_patch

pytestmark = pytest.mark.unit

JSON = "application/json"


def _review(obj: dict[str, Any] | None, operation: str = "CREATE", **extra: Any) -> bytes:
    request = {"uid": "u-1", "operation": operation, "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
               "resource": {"group": "", "version": "v1", "resource": "configmaps"}, "name": "cm",
               "namespace": "ns", "userInfo": {"username": "alice", "groups": ["devs"]}, "object": obj, **extra}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()


def _response(body: bytes) -> dict[str, Any]:
    review = json.loads(body)
    assert (review["apiVersion"], review["kind"]) == ("admission.k8s.io/v1", "AdmissionReview")
    return dict(review["response"])


@pytest.mark.parametrize(("old", "new"), [
    ({"a": 1, "b": {"c": [1, 2]}}, {"a": 1, "b": {"c": [1, 3]}}),
    ({"a": 1}, {"b": {"x/y": "1", "t~": 2}}),
    ({"l": [1, 2, 3]}, {"l": [1]}),
    ({"l": [{"n": 1}]}, {"l": [{"n": 1, "m": None}]}),
    ({"v": 1}, {"v": True}),
    ({"v": 1}, {"v": 1.0}),
    ({"meta": {"annotations": {"example.com/owner": "a"}}}, {"meta": {"annotations": {"example.com/owner": "b"}}}),
])
def test_the_patch_turns_the_old_object_into_the_new(old: dict[str, Any], new: dict[str, Any]) -> None:
    ops = json_patch(old, new)
    assert {op["op"] for op in ops} <= {"add", "remove", "replace"}
    patched = apply_patch(copy.deepcopy(old), ops)
    assert json.dumps(patched, sort_keys=True) == json.dumps(new, sort_keys=True)
    assert json_patch(new, new) == []


def test_a_mutation_is_answered_with_a_json_patch_and_the_handler_sees_the_request() -> None:
    seen: list[AdmissionRequest] = []

    def default(req: AdmissionRequest) -> None:
        seen.append(req)
        assert req.object is not None
        req.object.setdefault("data", {})["defaulted"] = "yes"
        req.warn("defaulted a key")

    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1"}}
    answer = _response(answer_admission(_review(obj, dryRun=True, subResource=""), JSON, default, True, "/m"))
    assert answer["uid"] == "u-1" and answer["allowed"] is True and answer["patchType"] == "JSONPatch"
    assert answer["warnings"] == ["defaulted a key"]
    ops = json.loads(base64.b64decode(answer["patch"]))
    assert apply_patch(copy.deepcopy(obj), ops)["data"] == {"a": "1", "defaulted": "yes"}
    (req,) = seen
    assert (req.operation, req.name, req.namespace, req.dry_run, req.user_info["username"]) == (
        "CREATE", "cm", "ns", True, "alice")


def test_a_mutation_returning_a_new_object_and_one_changing_nothing() -> None:
    obj = {"metadata": {"name": "cm"}}
    answer = _response(answer_admission(_review(obj), JSON, lambda r: {"metadata": {"name": "cm", "labels": {
        "a": "b"}}}, True, "/m"))
    assert json.loads(base64.b64decode(answer["patch"])) == [{"op": "add", "path": "/metadata/labels",
                                                              "value": {"a": "b"}}]
    answer = _response(answer_admission(_review(obj), JSON, lambda r: None, True, "/m"))
    assert answer["allowed"] is True and "patch" not in answer and "patchType" not in answer


def test_a_denial_carries_message_reason_code_and_warnings() -> None:
    def check(req: AdmissionRequest) -> None:
        req.warn("size is large")
        assert req.old_object == {"data": {"a": "0"}}
        raise Denied("key 'forbidden' is not allowed", reason="Invalid", code=422)

    body = _review({"data": {"a": "1"}}, "UPDATE", oldObject={"data": {"a": "0"}})
    answer = _response(answer_admission(body, JSON, check, False, "/v"))
    assert answer == {"uid": "u-1", "allowed": False, "warnings": ["size is large"], "status": {
        "metadata": {}, "code": 422, "reason": "Invalid", "message": "key 'forbidden' is not allowed"}}
    answer = _response(answer_admission(body, JSON, lambda r: (_ for _ in ()).throw(Denied("no")), False, "/v"))
    assert answer["status"] == {"metadata": {}, "code": 403, "reason": "Forbidden", "message": "no"}


def test_a_handler_that_fails_is_a_500_answer_not_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    answer = _response(answer_admission(_review({}), JSON, lambda r: 1 / 0, False, "/v"))
    assert answer["allowed"] is False
    assert answer["status"]["code"] == 500 and answer["status"]["message"] == "ZeroDivisionError: division by zero"
    assert "the handler failed on CREATE ns/cm" in caplog.text


@pytest.mark.parametrize(("body", "content_type", "message"), [
    (b"", JSON, "request body is empty"),
    (b"{}", "text/plain", "contentType=text/plain, expected application/json"),
    (b"not json", JSON, "couldn't decode the AdmissionReview: Expecting value"),
    (b'{"apiVersion": "v1", "kind": "Pod"}', JSON, 'no kind "Pod" is registered for version "v1"'),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}', JSON, "the AdmissionReview has no request"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}}', JSON, "has no uid"),
])
def test_a_malformed_review_is_a_denial_with_code_400(body: bytes, content_type: str, message: str) -> None:
    answer = _response(answer_admission(body, content_type, lambda r: pytest.fail("called"), False, "/v"))
    assert answer["allowed"] is False and answer["status"]["code"] == 400
    assert message in answer["status"]["message"]


def test_paths_are_controller_runtimes() -> None:
    assert mutate_path("apps/v1", "Deployment") == "/mutate-apps-v1-deployment"
    assert mutate_path("v1", "Pod") == "/mutate--v1-pod"
    assert validate_path("example.com/v1alpha1", "Widget") == "/validate-example-com-v1alpha1-widget"


def _widgets() -> dict[tuple[str, str], Conversion]:
    def v2_to_v1(obj: dict[str, Any]) -> dict[str, Any]:
        obj["spec"] = {"size": obj["spec"].pop("replicas")}
        return obj

    def v1_to_v2(obj: dict[str, Any]) -> None:
        obj["spec"] = {"replicas": obj["spec"].pop("size")}

    def v3_to_v1(obj: dict[str, Any]) -> None:
        raise ConversionError("v3 widgets cannot go back")

    w = Conversion("example.com", "Widget", "v1").spoke("v2", to_hub=v2_to_v1, from_hub=v1_to_v2)
    w.spoke("v3", to_hub=v3_to_v1, from_hub=lambda o: o)
    return {("example.com", "Widget"): w}


def _convert(desired: str, *objects: dict[str, Any]) -> dict[str, Any]:
    review = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
              "request": {"uid": "c-1", "desiredAPIVersion": desired, "objects": list(objects)}}
    status, body = answer_conversion(json.dumps(review).encode(), _widgets(), "/convert")
    assert status == 200
    answer = json.loads(body)
    assert (answer["apiVersion"], answer["kind"], answer["response"]["uid"]) == (
        "apiextensions.k8s.io/v1", "ConversionReview", "c-1")
    return dict(answer["response"])


def _widget(version: str, spec: dict[str, Any], name: str = "w") -> dict[str, Any]:
    return {"apiVersion": f"example.com/{version}", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


def test_conversions_go_through_the_hub_several_objects_at_once() -> None:
    answer = _convert("example.com/v2", _widget("v1", {"size": 2}), _widget("v2", {"replicas": 5}, "b"))
    assert answer["result"] == {"status": "Success"}
    assert answer["convertedObjects"] == [_widget("v2", {"replicas": 2}), _widget("v2", {"replicas": 5}, "b")]
    answer = _convert("example.com/v3", _widget("v2", {"replicas": 3}))  # spoke to spoke: v2 -> v1 -> v3
    assert answer["convertedObjects"] == [_widget("v3", {"size": 3})]


def test_a_failed_conversion_fails_the_review_with_its_message() -> None:
    answer = _convert("example.com/v1", _widget("v2", {"replicas": 1}), _widget("v3", {"size": 1}))
    assert answer["result"] == {"status": "Failure", "message": "v3 widgets cannot go back"}
    answer = _convert("example.com/v1", _widget("v9", {}))
    assert answer["result"]["message"] == ("no conversion between example.com/v9 and the hub example.com/v1 "
                                           "for Widget")
    answer = _convert("other.io/v1", {"apiVersion": "other.io/v2", "kind": "Gadget", "metadata": {}})
    assert answer["result"] == {"status": "Failure", "message": "no conversion is registered for Gadget of group "
                                                                "'other.io'"}
    answer = _convert("example.com/v1", _widget("v2", {}))  # a KeyError in the user's function
    assert answer["result"] == {"status": "Failure", "message": "KeyError: 'replicas'"}


@pytest.mark.parametrize("body", [b"not json", b'{"apiVersion": "apiextensions.k8s.io/v1", "kind": '
                                               b'"ConversionReview"}', b"[]"])
def test_a_conversion_review_that_cannot_be_read_is_a_400(body: bytes) -> None:
    assert answer_conversion(body, _widgets(), "/convert") == (400, b"")


def test_a_path_is_registered_once_and_a_kind_converted_once() -> None:
    server = WebhookServer("/nonexistent")
    server.validate("v1", "ConfigMap", lambda r: None)
    with pytest.raises(ValueError, match="can't register duplicate path: /validate--v1-configmap"):
        server.validate("v1", "ConfigMap", lambda r: None)
    with pytest.raises(ValueError, match="must start with /"):
        server.mutate("v1", "ConfigMap", lambda r: None, path="mutate")
    server.conversion("example.com", "Widget", hub="v1")
    with pytest.raises(ValueError, match=r"a conversion of Widget of group 'example\.com' is already registered"):
        server.conversion("example.com", "Widget", hub="v1")
    with pytest.raises(ValueError, match="is the hub"):
        server.conversion("example.com", "Gadget", hub="v1").spoke("v1", to_hub=lambda o: o, from_hub=lambda o: o)
    assert server.paths == ["/convert", "/validate--v1-configmap"]


def test_the_webhook_flags_and_their_errors() -> None:
    from componentbase.cli import NamedFlagSets

    options = WebhookOptions()
    fss = NamedFlagSets()
    options.add_flags(fss)
    fss.parse(["--webhook-cert-dir=/certs", "--webhook-port=10250", "--webhook-cert-name=serving.crt"])
    assert (options.cert_dir, options.port, options.cert_name, options.key_name) == (
        "/certs", 10250, "serving.crt", "tls.key")
    assert options.validate() == []
    server = WebhookServer.from_options(options)
    assert (server.cert_file, server.key_file, server.requested_port) == ("/certs/serving.crt", "/certs/tls.key",
                                                                          10250)
    bad = WebhookOptions(port=70000, key_name="keys/tls.key")
    assert [str(e) for e in bad.validate()] == [
        "--webhook-port 70000 must be between 0 and 65535, inclusive",
        "--webhook-cert-key 'keys/tls.key' must be a file name in --webhook-cert-dir"]
