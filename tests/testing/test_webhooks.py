"""Admission webhooks called by the loopback server as kube-apiserver calls them, through the official client.

One server and one webhook server for the module; each test installs its configurations with a
namespaceSelector on a namespace of its own, so the tests' webhooks never see each other's requests.
"""

from __future__ import annotations

import base64
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer
from componentbase.util._certs import CertificateAuthority
from tests.testing.webhook_support import WebhookServer, json_patch

pytestmark = pytest.mark.integration

_SERVICE = {"namespace": "system", "name": "webhook"}


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookServer]:
    server = WebhookServer(CertificateAuthority.generate("webhook-ca"), ["127.0.0.1", "webhook.system.svc"])
    yield server.start()
    server.stop()


@pytest.fixture(scope="module")
def server(hooks: WebhookServer) -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer(webhook_services={"system/webhook": f"127.0.0.1:{hooks.port}"}) as api_server:
        yield api_server


@pytest.fixture(scope="module")
def api(server: LoopbackAPIServer) -> Iterator[client.ApiClient]:
    api_client = server.api_client()
    yield api_client
    api_client.close()


@pytest.fixture
def ns(api: client.ApiClient, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace labelled for this test; the configurations the test installs are removed after it."""
    name = request.node.name.replace("_", "-")[:50].strip("-")
    client.CoreV1Api(api).create_namespace({"metadata": {"name": name, "labels": {"test": name}}})
    yield name
    reg = client.AdmissionregistrationV1Api(api)
    for c in reg.list_mutating_webhook_configuration().items:
        reg.delete_mutating_webhook_configuration(c.metadata.name)
    for c in reg.list_validating_webhook_configuration().items:
        reg.delete_validating_webhook_configuration(c.metadata.name)


def _hook(ns: str, name: str, path: str, hooks: WebhookServer | None = None, **extra: Any) -> dict[str, Any]:
    """A webhook on ConfigMaps of ``ns``: through the mapped Service, or by URL when ``hooks`` is given."""
    config = hooks.url(path) if hooks is not None else {
        "service": dict(_SERVICE, path=path), "caBundle": extra.pop("caBundle", None)}
    spec = {"name": name, "clientConfig": config, "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "namespaceSelector": {"matchLabels": {"test": ns}},
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["configmaps"]}]}
    spec.update(extra)
    return spec


def _install(api: client.ApiClient, kind: str, name: str, *webhooks: dict[str, Any]) -> None:
    reg = client.AdmissionregistrationV1Api(api)
    body = {"metadata": {"name": name}, "webhooks": list(webhooks)}
    if kind == "mutating":
        reg.create_mutating_webhook_configuration(body)
    else:
        reg.create_validating_webhook_configuration(body)


def _create_cm(api: client.ApiClient, ns: str, name: str = "cm", **kw: Any) -> Any:
    return client.CoreV1Api(api).create_namespaced_config_map(ns, {"metadata": {"name": name}, "data": {"a": "1"}},
                                                             **kw)


def _refused(api: client.ApiClient, ns: str, **kw: Any) -> dict[str, Any]:
    with pytest.raises(client.ApiException) as err:
        _create_cm(api, ns, **kw)
    body: dict[str, Any] = json.loads(err.value.body)
    assert body["code"] == err.value.status
    assert client.CoreV1Api(api).list_namespaced_config_map(ns).items == []  # nothing refused is stored
    return body


def test_mutating_then_defaulting_then_validating_then_storage(api: client.ApiClient, hooks: WebhookServer,
                                                              ns: str) -> None:
    hooks.handlers["/default"] = lambda r: json_patch({"op": "add", "path": "/metadata/labels",
                                                       "value": {"defaulted": "yes"}})
    hooks.handlers["/check"] = lambda r: {"allowed": True}
    _install(api, "mutating", "defaults", _hook(ns, "default.example.com", "/default", caBundle=hooks.ca_bundle))
    _install(api, "validating", "checks", _hook(ns, "check.example.com", "/check", caBundle=hooks.ca_bundle))
    created = _create_cm(api, ns, field_manager="tester")
    assert created.metadata.labels == {"defaulted": "yes"}
    assert client.CoreV1Api(api).read_namespaced_config_map("cm", ns).metadata.labels == {"defaulted": "yes"}
    mutated, checked = hooks.reviews["/default"][-1]["request"], hooks.reviews["/check"][-1]["request"]
    assert checked["object"]["metadata"]["labels"] == {"defaulted": "yes"}  # validating sees the mutation
    assert {k: mutated[k] for k in ("kind", "resource", "requestKind", "name", "namespace", "operation", "dryRun",
                                    "options")} == {
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"}, "name": "cm", "namespace": ns,
        "operation": "CREATE", "dryRun": False,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "tester"}}
    assert mutated["oldObject"] is None and mutated["object"]["data"] == {"a": "1"}
    assert any(p.startswith("/default?timeout=10s") for p in hooks.paths)  # as client-go asks
    # an update: UPDATE with the old object; the stored label survives, the webhook sees both
    client.CoreV1Api(api).patch_namespaced_config_map("cm", ns, {"data": {"a": "2"}})
    update = hooks.reviews["/check"][-1]["request"]
    assert (update["operation"], update["oldObject"]["data"], update["object"]["data"]) == (
        "UPDATE", {"a": "1"}, {"a": "2"})
    assert update["options"]["kind"] == "UpdateOptions"


def test_a_denial_is_kubes_status(api: client.ApiClient, hooks: WebhookServer, ns: str) -> None:
    hooks.handlers["/deny"] = lambda r: {"allowed": False, "status": {"code": 403, "reason": "Forbidden",
                                                                      "message": "no configmaps today"}}
    hooks.handlers["/deny-bare"] = lambda r: {"allowed": False}
    _install(api, "validating", "deny", _hook(ns, "deny.example.com", "/deny", hooks))
    body = _refused(api, ns)
    assert (body["code"], body["reason"], body["message"]) == (
        403, "Forbidden", 'admission webhook "deny.example.com" denied the request: no configmaps today')
    client.AdmissionregistrationV1Api(api).delete_validating_webhook_configuration("deny")
    _install(api, "validating", "deny-bare", _hook(ns, "bare.example.com", "/deny-bare", hooks))
    body = _refused(api, ns)  # no status: kube raises a code under 400 to 400
    assert (body["code"], body["message"]) == (400, 'admission webhook "bare.example.com" denied the request '
                                                    "without explanation")


def test_failure_policy_with_the_webhook_down(api: client.ApiClient, hooks: WebhookServer, ns: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    down = {"url": f"https://127.0.0.1:{port}/gone", "caBundle": hooks.ca_bundle}
    _install(api, "validating", "down", _hook(ns, "down.example.com", "/gone", clientConfig=down))
    body = _refused(api, ns)
    assert (body["code"], body["reason"]) == (500, "InternalError")
    assert body["message"] == (
        'Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: '
        f'Post "https://127.0.0.1:{port}/gone?timeout=10s": dial tcp 127.0.0.1:{port}: connect: connection refused')
    client.AdmissionregistrationV1Api(api).delete_validating_webhook_configuration("down")
    _install(api, "validating", "down", _hook(ns, "down.example.com", "/gone", clientConfig=down,
                                              failurePolicy="Ignore"))
    assert _create_cm(api, ns).metadata.name == "cm"  # Ignore: the request goes on


def test_a_timeout_and_a_wrong_ca(api: client.ApiClient, hooks: WebhookServer, ns: str) -> None:
    hooks.handlers["/slow"] = lambda r: time.sleep(5) or {"allowed": True}
    _install(api, "validating", "slow", _hook(ns, "slow.example.com", "/slow", hooks, timeoutSeconds=1))
    started = time.monotonic()
    body = _refused(api, ns)
    assert time.monotonic() - started < 3  # the webhook's 1 s timeout, not the handler's 5 s
    assert body["message"].endswith(f'Post "https://127.0.0.1:{hooks.port}/slow?timeout=1s": context deadline '
                                    "exceeded")
    client.AdmissionregistrationV1Api(api).delete_validating_webhook_configuration("slow")
    other = CertificateAuthority.generate("someone-else")
    wrong = _hook(ns, "tls.example.com", "/check", caBundle=base64.b64encode(other.cert_pem).decode())
    hooks.handlers["/check"] = lambda r: {"allowed": True}
    _install(api, "validating", "tls", wrong)
    body = _refused(api, ns)
    assert body["message"] == (
        'Internal error occurred: failed calling webhook "tls.example.com": failed to call webhook: '
        'Post "https://webhook.system.svc:443/check?timeout=10s": tls: failed to verify certificate: '
        "x509: certificate signed by unknown authority")
    client.AdmissionregistrationV1Api(api).delete_validating_webhook_configuration("tls")
    by_name = dict(hooks.url("/check"), url=f"https://localhost:{hooks.port}/check")
    _install(api, "validating", "tls", _hook(ns, "tls.example.com", "/check", clientConfig=by_name))
    assert _refused(api, ns)["message"].endswith(  # the certificate names 127.0.0.1 and webhook.system.svc
        "tls: failed to verify certificate: x509: certificate is valid for webhook.system.svc, not localhost")


def test_dry_run_and_side_effects(api: client.ApiClient, hooks: WebhookServer, ns: str) -> None:
    hooks.handlers["/check"] = lambda r: {"allowed": True}
    _install(api, "validating", "pure", _hook(ns, "pure.example.com", "/check", hooks, sideEffects="NoneOnDryRun"))
    before = len(hooks.reviews.get("/check", ()))
    _create_cm(api, ns, dry_run="All")
    assert client.CoreV1Api(api).list_namespaced_config_map(ns).items == []
    review = hooks.reviews["/check"][-1]["request"]
    assert len(hooks.reviews["/check"]) == before + 1
    assert (review["dryRun"], review["options"]["dryRun"]) == (True, ["All"])
    # admissionregistration/v1 stores no webhook with side effects, so no dry run can reach one
    with pytest.raises(client.ApiException) as err:
        _install(api, "validating", "effects", _hook(ns, "effects.example.com", "/check", hooks, sideEffects="Some"))
    assert json.loads(err.value.body)["details"]["causes"] == [{
        "reason": "FieldValueNotSupported", "field": "webhooks[0].sideEffects",
        "message": 'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'}]


def test_a_malformed_review_and_a_patch_that_does_not_apply(api: client.ApiClient, hooks: WebhookServer,
                                                            ns: str) -> None:
    hooks.handlers["/bad"] = lambda r: {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                        "response": {"uid": "not-the-one", "allowed": True}}
    _install(api, "validating", "bad", _hook(ns, "bad.example.com", "/bad", hooks))
    body = _refused(api, ns)
    uid = hooks.reviews["/bad"][-1]["request"]["uid"]
    assert body["message"] == ('Internal error occurred: failed calling webhook "bad.example.com": received '
                               f'invalid webhook response: expected response.uid="{uid}", got "not-the-one"')
    hooks.handlers["/bad"] = lambda r: b"<html>502 Bad Gateway</html>"
    assert _refused(api, ns)["message"] == ('Internal error occurred: failed calling webhook "bad.example.com": '
                                            "failed to call webhook: couldn't get version/kind; json parse error: "
                                            "invalid character '<' looking for beginning of value")
    client.AdmissionregistrationV1Api(api).delete_validating_webhook_configuration("bad")
    hooks.handlers["/unpatchable"] = lambda r: json_patch({"op": "remove", "path": "/spec/nope"})
    _install(api, "mutating", "unpatchable", _hook(ns, "unpatchable.example.com", "/unpatchable", hooks,
                                                   failurePolicy="Ignore"))
    body = _refused(api, ns)  # whatever the policy
    assert (body["code"], body["message"]) == (
        500, "Internal error occurred: remove operation does not apply: doc is missing path: \"/spec/nope\": "
             "missing value")


def test_reinvocation_if_needed(api: client.ApiClient, hooks: WebhookServer, ns: str) -> None:
    def first(review: dict[str, Any]) -> dict[str, Any]:
        labels = review["request"]["object"]["metadata"].get("labels") or {}
        return json_patch({"op": "add", "path": "/metadata/labels", "value": dict(labels, seen=str(len(labels)))})

    hooks.handlers["/first"] = first
    hooks.handlers["/second"] = lambda r: json_patch({"op": "add", "path": "/metadata/annotations",
                                                      "value": {"second": "yes"}})
    _install(api, "mutating", "a", _hook(ns, "first.example.com", "/first", hooks, reinvocationPolicy="IfNeeded"))
    _install(api, "mutating", "b", _hook(ns, "second.example.com", "/second", hooks))
    created = _create_cm(api, ns)
    # the second webhook changed the object after the first: the first ran again, and saw its own label
    assert created.metadata.annotations == {"second": "yes"}
    assert created.metadata.labels == {"seen": "1"}
    assert len(hooks.reviews["/first"]) == 2 and len(hooks.reviews["/second"]) == 1


def test_rules_selectors_and_delete(api: client.ApiClient, hooks: WebhookServer, ns: str) -> None:
    seen: list[tuple[str, str, str]] = []

    def record(review: dict[str, Any]) -> dict[str, Any]:
        r = review["request"]
        seen.append((r["operation"], r.get("subResource") or "", r["name"]))
        return {"allowed": True, "warnings": [f"saw {r['operation']}"]}

    hooks.handlers["/record"] = record
    rules = [{"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]},
             {"operations": ["UPDATE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["pods/status"],
              "scope": "Namespaced"}]
    _install(api, "validating", "record", _hook(ns, "record.example.com", "/record", hooks, rules=rules,
                                                objectSelector={"matchExpressions": [
                                                    {"key": "watched", "operator": "Exists"}]}))
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_config_map(ns, {"metadata": {"name": "plain"}})
    v1.create_namespaced_config_map(ns, {"metadata": {"name": "watched", "labels": {"watched": "1"}}})
    pod = {"metadata": {"name": "p", "labels": {"watched": "1"}}, "spec": {"containers": [{"name": "c",
                                                                                           "image": "i"}]}}
    v1.create_namespaced_pod(ns, pod)
    v1.patch_namespaced_pod("p", ns, {"metadata": {"annotations": {"a": "b"}}})  # not the status subresource
    v1.patch_namespaced_pod_status("p", ns, {"status": {"phase": "Running"}})
    v1.delete_namespaced_config_map("plain", ns)  # objectSelector: not called
    _, _, headers = v1.delete_namespaced_config_map_with_http_info("watched", ns)
    assert seen == [("UPDATE", "status", "p"), ("DELETE", "", "watched")]
    assert headers["Warning"] == '299 - "saw DELETE"'
    delete = hooks.reviews["/record"][-1]["request"]
    assert delete["object"] is None and delete["oldObject"]["metadata"]["name"] == "watched"
    assert delete["options"]["kind"] == "DeleteOptions"
    assert delete["userInfo"]["username"]  # who asked


def test_a_v1beta1_only_webhook_gets_a_v1beta1_review(api: client.ApiClient, hooks: WebhookServer,
                                                         ns: str) -> None:
    hooks.handlers["/beta"] = lambda r: {"allowed": False, "status": {"message": "beta says no"}}
    _install(api, "validating", "beta", _hook(ns, "beta.example.com", "/beta", hooks,
                                              admissionReviewVersions=["v1beta1"]))
    body = _refused(api, ns)
    assert body["message"] == 'admission webhook "beta.example.com" denied the request: beta says no'
    assert hooks.reviews["/beta"][-1]["apiVersion"] == "admission.k8s.io/v1beta1"


def test_an_eviction_is_sent_to_webhooks_as_a_pods_eviction_create(api: client.ApiClient, hooks: WebhookServer,
                                                                    ns: str) -> None:
    hooks.handlers["/evict"] = lambda r: {"allowed": False, "status": {"code": 429, "reason": "TooManyRequests",
                                                                       "message": "this pod stays"}}
    rules = [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/eviction"]}]
    _install(api, "validating", "evictions", _hook(ns, "evict.example.com", "/evict", hooks, rules=rules))
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_pod(ns, {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}})
    with pytest.raises(client.ApiException) as err:
        v1.create_namespaced_pod_eviction("p", ns, {"metadata": {"name": "p", "namespace": ns}})
    assert (err.value.status, json.loads(err.value.body)["message"]) == (
        429, 'admission webhook "evict.example.com" denied the request: this pod stays')
    request = hooks.reviews["/evict"][-1]["request"]
    assert (request["kind"], request["subResource"], request["name"], request["object"]["kind"]) == (
        {"group": "policy", "version": "v1", "kind": "Eviction"}, "eviction", "p", "Eviction")
    assert v1.read_namespaced_pod("p", ns).metadata.deletion_timestamp is None


def test_a_namespace_delete_is_sent_to_webhooks(api: client.ApiClient, hooks: WebhookServer, ns: str) -> None:
    hooks.handlers["/keep"] = lambda r: {"allowed": False, "status": {"code": 403, "reason": "Forbidden",
                                                                      "message": "namespaces marked keep stay"}}
    rules = [{"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["namespaces"]}]
    _install(api, "validating", "keep", _hook(ns, "keep.example.com", "/keep", hooks, rules=rules))
    v1 = client.CoreV1Api(api)
    with pytest.raises(client.ApiException) as err:
        v1.delete_namespace(ns)  # its own labels match the namespaceSelector
    assert (err.value.status, json.loads(err.value.body)["message"]) == (
        403, 'admission webhook "keep.example.com" denied the request: namespaces marked keep stay')
    assert v1.read_namespace(ns).status.phase == "Active"
    request = hooks.reviews["/keep"][-1]["request"]
    assert (request["operation"], request["name"], request["namespace"]) == ("DELETE", ns, ns)


def test_a_mutating_webhook_cannot_move_or_overwrite_an_object(api: client.ApiClient, hooks: WebhookServer,
                                                                ns: str) -> None:
    _create_cm(api, ns, name="taken")
    hooks.handlers["/rename"] = lambda r: json_patch({"op": "replace", "path": "/metadata/name", "value": "taken"},
                                                     {"op": "replace", "path": "/metadata/uid", "value": "mine"})
    _install(api, "mutating", "rename", _hook(ns, "rename.example.com", "/rename", hooks))
    with pytest.raises(client.ApiException) as err:
        _create_cm(api, ns, name="fresh")  # renamed onto an existing object: kube's AlreadyExists, not an overwrite
    assert (err.value.status, json.loads(err.value.body)["message"]) == (409, 'configmaps "taken" already exists')
    assert client.CoreV1Api(api).read_namespaced_config_map("taken", ns).data == {"a": "1"}
    hooks.handlers["/rename"] = lambda r: json_patch({"op": "replace", "path": "/metadata/uid", "value": "mine"})
    assert _create_cm(api, ns, name="fresh").metadata.uid != "mine"  # the server assigns the uid
    hooks.handlers["/rename"] = lambda r: json_patch({"op": "replace", "path": "/metadata/namespace",
                                                      "value": "default"})
    with pytest.raises(client.ApiException) as err:
        _create_cm(api, ns, name="moved")
    assert (err.value.status, json.loads(err.value.body)["message"]) == (
        400, "the namespace of the provided object does not match the namespace sent on the request")
    hooks.handlers["/rename"] = lambda r: json_patch({"op": "replace", "path": "/metadata/name", "value": "taken"})
    with pytest.raises(client.ApiException) as err:
        client.CoreV1Api(api).patch_namespaced_config_map("fresh", ns, {"data": {"b": "3"}})
    assert (err.value.status, json.loads(err.value.body)["message"]) == (
        422, 'ConfigMap "taken" is invalid: metadata.name: Invalid value: "taken": field is immutable')
    assert client.CoreV1Api(api).read_namespaced_config_map("taken", ns).data == {"a": "1"}


def test_a_service_is_reached_only_once_mapped(server: LoopbackAPIServer, api: client.ApiClient,
                                               hooks: WebhookServer, ns: str) -> None:
    hooks.handlers["/check"] = lambda r: {"allowed": True}
    hook = _hook(ns, "other.example.com", "/check", caBundle=hooks.ca_bundle)
    hook["clientConfig"]["service"] = {"namespace": "other", "name": "hooks", "path": "/check", "port": 8443}
    _install(api, "validating", "other", hook)
    assert _refused(api, ns)["message"].startswith(
        'Internal error occurred: failed calling webhook "other.example.com": failed to call webhook: '
        'Post "https://hooks.other.svc:8443/check?timeout=10s": service "hooks" not found')
    server.set_webhook_service("other/hooks", f"127.0.0.1:{hooks.port}")
    try:  # mapped, the certificate must still be valid for hooks.other.svc, which it is not
        assert _refused(api, ns)["message"].endswith("x509: certificate is valid for webhook.system.svc, not "
                                                     "hooks.other.svc")
    finally:
        server.set_webhook_service("other/hooks", None)


def test_a_webhook_may_call_the_server_back(api: client.ApiClient, hooks: WebhookServer, ns: str) -> None:
    def unique_value(review: dict[str, Any]) -> dict[str, Any]:
        """Refuses a ConfigMap whose data another one in the namespace already has: it lists them."""
        items = client.CoreV1Api(api).list_namespaced_config_map(ns).items
        data = review["request"]["object"].get("data")
        return {"allowed": not any(i.data == data for i in items), "status": {"message": "duplicate data"}}

    hooks.handlers["/unique"] = unique_value
    _install(api, "validating", "unique", _hook(ns, "unique.example.com", "/unique", hooks, timeoutSeconds=5))
    started = time.monotonic()
    _create_cm(api, ns, name="first")
    with pytest.raises(client.ApiException) as err:
        _create_cm(api, ns, name="second")
    assert json.loads(err.value.body)["message"].endswith("denied the request: duplicate data")
    assert time.monotonic() - started < 4  # the list was answered while the create waited for the webhook


def test_the_command_line_maps_webhook_services(capsys: pytest.CaptureFixture[str]) -> None:
    from componentbase.testing.apiserver.__main__ import _parser, main

    args = _parser().parse_args(["--webhook-service", "system/webhook=127.0.0.1:9443"])
    assert args.webhook_service == [("system/webhook", "127.0.0.1:9443")]
    with pytest.raises(SystemExit) as done:
        main(["--webhook-service", "webhook=127.0.0.1:9443"])
    assert done.value.code == 2
    assert capsys.readouterr().err.endswith(
        "error: argument --webhook-service: 'webhook=127.0.0.1:9443' is not NAMESPACE/NAME=HOST:PORT\n")


def test_configurations_are_defaulted_and_validated_as_kube_does(api: client.ApiClient, hooks: WebhookServer,
                                                                 ns: str) -> None:
    _install(api, "mutating", "defaulted", _hook(ns, "defaulted.example.com", "/check", hooks))
    stored = client.CustomObjectsApi(api).get_cluster_custom_object(
        "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "defaulted")
    hook = stored["webhooks"][0]
    assert {k: hook[k] for k in ("failurePolicy", "matchPolicy", "timeoutSeconds", "reinvocationPolicy",
                                 "objectSelector")} == {
        "failurePolicy": "Fail", "matchPolicy": "Equivalent", "timeoutSeconds": 10, "reinvocationPolicy": "Never",
        "objectSelector": {}}
    assert hook["rules"][0]["scope"] == "*"
    bad = _hook(ns, "bad", "/check", hooks, sideEffects="Some", timeoutSeconds=31, admissionReviewVersions=[])
    bad["clientConfig"] = {"url": "http://127.0.0.1/x"}
    with pytest.raises(client.ApiException) as err:
        _install(api, "validating", "bad", bad)
    body = json.loads(err.value.body)
    assert err.value.status == 422
    assert body["message"] == (
        'ValidatingWebhookConfiguration.admissionregistration.k8s.io "bad" is invalid: ['
        'webhooks[0].name: Invalid value: "bad": should be a domain with at least three segments separated by dots, '
        'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun", '
        "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds, "
        "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired "
        "format: https://host[/path], "
        "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1]")


def test_match_conditions_decide_whether_a_webhook_is_called(api: client.ApiClient, hooks: WebhookServer,
                                                             ns: str) -> None:
    """kube's matchConditions: all true calls the webhook, one false skips it (even beside an error), and an
    error with none false obeys failurePolicy: Fail refuses with kube's 403, Ignore skips the webhook."""
    hooks.handlers["/mc"] = lambda r: {"allowed": False, "status": {"message": "checked"}}
    labelled = {"name": "labelled", "expression": "has(object.metadata.labels) && 'check' in object.metadata.labels"}
    broken = {"name": "broken", "expression": "object.data.missing == 'x'"}
    reg = client.AdmissionregistrationV1Api(api)
    _install(api, "validating", "mc", _hook(ns, "mc.example.com", "/mc", hooks, matchConditions=[
        {"name": "create", "expression": "request.operation == 'CREATE'"}, labelled]))
    assert _create_cm(api, ns, "plain").metadata.name == "plain"  # no labels at all: not called
    with pytest.raises(client.ApiException) as err:
        client.CoreV1Api(api).create_namespaced_config_map(ns, {"metadata": {"name": "x", "labels": {"check": "1"}}})
    assert json.loads(err.value.body)["message"] == 'admission webhook "mc.example.com" denied the request: checked'
    assert len(hooks.reviews["/mc"]) == 1
    client.CoreV1Api(api).delete_namespaced_config_map("plain", ns)
    reg.delete_validating_webhook_configuration("mc")
    _install(api, "validating", "mc", _hook(ns, "mc.example.com", "/mc", hooks,
                                            matchConditions=[broken, {"name": "never", "expression": "false"}]))
    assert _create_cm(api, ns).metadata.name == "cm"  # one false: skipped, the other's error aside
    client.CoreV1Api(api).delete_namespaced_config_map("cm", ns)
    reg.delete_validating_webhook_configuration("mc")
    _install(api, "validating", "mc", _hook(ns, "mc.example.com", "/mc", hooks, matchConditions=[broken]))
    body = _refused(api, ns)
    assert (body["code"], body["reason"], body["details"]) == (403, "Forbidden", {"name": "cm", "kind": "configmaps"})
    assert body["message"] == ('configmaps "cm" is forbidden: expression \'object.data.missing == \'x\'\' resulted '
                               "in error: no such key: missing")
    reg.delete_validating_webhook_configuration("mc")
    _install(api, "validating", "mc", _hook(ns, "mc.example.com", "/mc", hooks, matchConditions=[broken],
                                            failurePolicy="Ignore"))
    assert _create_cm(api, ns).metadata.name == "cm"
    assert len(hooks.reviews["/mc"]) == 1  # called once in all: for the labelled ConfigMap


def test_match_conditions_are_validated_as_kube_does(api: client.ApiClient, hooks: WebhookServer, ns: str) -> None:
    conditions = [{"name": "a", "expression": "object.metadata.name == "}, {"name": "a", "expression": "true"},
                  {"name": "no spaces", "expression": " "}]
    with pytest.raises(client.ApiException) as err:
        _install(api, "validating", "bad", _hook(ns, "bad.example.com", "/check", hooks, matchConditions=conditions))
    assert err.value.status == 422
    message = json.loads(err.value.body)["message"]
    path = "webhooks[0].matchConditions"
    assert message.startswith('ValidatingWebhookConfiguration.admissionregistration.k8s.io "bad" is invalid: ['
                              f'{path}[0].expression: Invalid value: "object.metadata.name ==": compilation failed: '
                              "ERROR: <input>:1:")
    assert message.endswith(f'{path}[1].name: Duplicate value: "a", {path}[2].expression: Required value, '
                            f'{path}[2].name: Invalid value: "no spaces": name part must consist of alphanumeric '
                            "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
                            "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]")
