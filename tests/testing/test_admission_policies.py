"""ValidatingAdmissionPolicies and their bindings as kube-apiserver applies them, through the official client.

One server for the module; each test binds its policy to a namespace of its own (the binding's
namespaceSelector), so the tests' policies never see each other's requests. Messages are kube's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from componentbase.client import request
from componentbase.testing import LoopbackAPIServer
from tests.testing.test_validation import refused

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def api() -> Iterator[client.ApiClient]:
    with LoopbackAPIServer() as server:
        api_client = server.api_client()
        yield api_client
        api_client.close()


@pytest.fixture
def ns(api: client.ApiClient, request: pytest.FixtureRequest) -> str:
    name = request.node.name.replace("_", "-")[:50].strip("-")
    client.CoreV1Api(api).create_namespace({"metadata": {"name": name, "labels": {"test": name}}})
    return name


def _install(api: client.ApiClient, ns: str, validations: list[dict[str, Any]], actions: tuple[str, ...] = ("Deny",),
             operations: tuple[str, ...] = ("CREATE", "UPDATE"), **spec: Any) -> None:
    """A policy on ConfigMaps named after ``ns``, bound to ``ns`` with ``actions``."""
    reg = client.AdmissionregistrationV1Api(api)
    param_ref = spec.pop("paramRef", None)
    reg.create_validating_admission_policy({
        "metadata": {"name": ns}, "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                    "operations": list(operations), "resources": ["configmaps"]}]},
            "validations": validations, **spec}})
    binding: dict[str, Any] = {"policyName": ns, "validationActions": list(actions),
                               "matchResources": {"namespaceSelector": {"matchLabels": {"test": ns}}}}
    if param_ref is not None:
        binding["paramRef"] = param_ref
    reg.create_validating_admission_policy_binding({"metadata": {"name": f"{ns}-binding"}, "spec": binding})


def _cm(name: str, **data: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"app": "demo"}}, "data": data}


def test_a_failing_validation_is_kubes_denial(api: client.ApiClient, ns: str) -> None:
    _install(api, ns, [{"expression": "object.data.size() <= 2", "message": "at most two keys"},
                       {"expression": "'app' in object.metadata.labels"}])
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_config_map(ns, _cm("ok", a="1"))
    code, status = refused(lambda: v1.create_namespaced_config_map(ns, _cm("big", a="1", b="2", c="3")))
    cause = (f"ValidatingAdmissionPolicy '{ns}' with binding '{ns}-binding' denied request: at most two keys")
    assert (code, status["reason"], status["message"]) == (422, "Invalid", f'configmaps "big" is forbidden: {cause}')
    assert status["details"] == {"name": "big", "kind": "configmaps", "causes": [{"message": cause}]}
    with pytest.raises(client.ApiException):
        v1.read_namespaced_config_map("big", ns)
    bare = {"metadata": {"name": "bare", "labels": {"tier": "web"}}, "data": {}}
    code, status = refused(lambda: v1.create_namespaced_config_map(ns, bare))
    assert status["message"].endswith("denied request: failed expression: 'app' in object.metadata.labels")


def test_message_expression_reason_variables_and_update(api: client.ApiClient, ns: str) -> None:
    _install(api, ns, [{"expression": "variables.keys <= 1", "reason": "Forbidden",
                        "messageExpression": "'has ' + string(variables.keys) + ' keys'"},
                       {"expression": "request.operation != 'UPDATE' || object.data == oldObject.data ||"
                                      " !has(oldObject.data.locked)", "message": "locked"}],
             variables=[{"name": "keys", "expression": "has(object.data) ? object.data.size() : 0"}])
    v1 = client.CoreV1Api(api)
    code, status = refused(lambda: v1.create_namespaced_config_map(ns, _cm("two", a="1", b="2")))
    assert (code, status["reason"]) == (403, "Forbidden")
    assert status["message"].endswith("denied request: has 2 keys")
    v1.create_namespaced_config_map(ns, _cm("lock", locked="yes"))
    code, status = refused(lambda: v1.patch_namespaced_config_map("lock", ns, {"data": {"locked": "no"}}))
    assert status["message"].endswith("denied request: locked")


def test_warn_reaches_the_client_and_audit_admits(api: client.ApiClient, ns: str) -> None:
    _install(api, ns, [{"expression": "object.metadata.name.startsWith('good-')", "message": "bad name"}],
             actions=("Warn", "Audit"))
    resp = request(api, "POST", f"/api/v1/namespaces/{ns}/configmaps", body=_cm("plain"))
    resp.read()
    assert resp.status == 201
    assert resp.headers["Warning"] == (f'299 - "Validation failed for ValidatingAdmissionPolicy \'{ns}\' with binding '
                                       f'\'{ns}-binding\': bad name"')


def test_params_from_a_config_map_and_a_missing_param(api: client.ApiClient, ns: str) -> None:
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_config_map(ns, {"metadata": {"name": "limits"}, "data": {"max": "1"}})
    _install(api, ns, [{"expression": "!has(object.data) || object.data.size() <= int(params.data.max)",
                        "messageExpression": "'at most ' + params.data.max + ' keys'"}],
             paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
             paramRef={"name": "limits", "parameterNotFoundAction": "Deny"})
    code, status = refused(lambda: v1.create_namespaced_config_map(ns, _cm("many", a="1", b="2")))
    assert status["message"].endswith("denied request: at most 1 keys")
    v1.delete_namespaced_config_map("limits", ns)
    code, status = refused(lambda: v1.create_namespaced_config_map(ns, _cm("one", a="1")))
    assert (code, status["message"]) == (422, (
        f"configmaps \"one\" is forbidden: ValidatingAdmissionPolicy '{ns}' with binding '{ns}-binding' denied "
        "request: failed to configure binding: no params found for policy binding with `Deny` "
        "parameterNotFoundAction"))


def test_an_expression_that_raises_obeys_the_failure_policy(api: client.ApiClient, ns: str) -> None:
    _install(api, ns, [{"expression": "object.data.missing == 'x'"}])
    v1 = client.CoreV1Api(api)
    _code, status = refused(lambda: v1.create_namespaced_config_map(ns, _cm("c", a="1")))
    assert status["message"].endswith(
        "denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing")
    reg = client.AdmissionregistrationV1Api(api)
    reg.patch_validating_admission_policy(ns, {"spec": {"failurePolicy": "Ignore"}})
    assert v1.create_namespaced_config_map(ns, _cm("c", a="1")).metadata.name == "c"


def test_a_policy_that_does_not_compile_is_refused(api: client.ApiClient) -> None:
    reg = client.AdmissionregistrationV1Api(api)
    code, status = refused(lambda: reg.create_validating_admission_policy({
        "metadata": {"name": "broken"}, "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                    "operations": ["CREATE"], "resources": ["configmaps"]}]},
            "validations": [{"expression": "object.data.size( > 1"}]}}))
    assert (code, status["reason"]) == (422, "Invalid")
    cause = status["details"]["causes"][0]
    assert cause["field"] == "spec.validations[0].expression"
    assert cause["message"].startswith('Invalid value: "object.data.size( > 1": compilation failed: ERROR: '
                                       "<input>:1:19: Syntax error:")
    code, status = refused(lambda: request(  # the client's models refuse it before sending
        api, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
        body={"metadata": {"name": "b"}, "spec": {"policyName": "p"}}))
    assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == [
        ("spec.validationActions", "Required value: at least one validation action is required")]


def test_a_delete_is_judged_on_the_old_object(api: client.ApiClient, ns: str) -> None:
    """kube evaluates policies on DELETE with ``oldObject`` the object and ``object`` null."""
    _install(api, ns, [{"expression": "object == null && request.operation == 'DELETE' && "
                                      "!('protected' in oldObject.metadata.labels)", "message": "protected"}],
             operations=("DELETE",))
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_config_map(ns, {"metadata": {"name": "keep", "labels": {"protected": "yes"}}})
    v1.create_namespaced_config_map(ns, _cm("free"))  # CREATE is not bound
    code, status = refused(lambda: v1.delete_namespaced_config_map("keep", ns))
    cause = f"ValidatingAdmissionPolicy '{ns}' with binding '{ns}-binding' denied request: protected"
    assert (code, status["reason"], status["message"]) == (422, "Invalid", f'configmaps "keep" is forbidden: {cause}')
    assert v1.read_namespaced_config_map("keep", ns).metadata.name == "keep"
    v1.delete_namespaced_config_map("free", ns)
    assert [c.metadata.name for c in v1.list_namespaced_config_map(ns).items] == ["keep"]
