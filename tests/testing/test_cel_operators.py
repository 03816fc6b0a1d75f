"""CRD rules as public operators write them (kubebuilder ``XValidation`` markers), through the official client.

Each schema fragment below is a rule copied from an operator's CRD (named beside it); the expected answers
are what kube-apiserver gives, derived from its libraries' documented semantics and apimachinery's messages
(k8s.io/apiserver/pkg/cel/library, k8s.io/apimachinery/pkg/util/validation), not from this server's output.
One server for the module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer
from tests.testing.test_validation import refused

pytestmark = pytest.mark.integration

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
SPEC_PROPS: dict[str, Any] = {
    # openshift/api's external-framework reference: resource and namespace
    "resource": {"type": "string", "maxLength": 63, "x-kubernetes-validations": [{
        "rule": "!format.dns1123Label().validate(self).hasValue()",
        "message": "the value must consist of only lowercase alphanumeric characters and hyphens"}]},
    # an operator's target namespaces, each checked in one rule on the list
    "targetNamespaces": {"type": "array", "maxItems": 50, "items": {"type": "string", "maxLength": 63},
                         "x-kubernetes-validations": [{
                             "rule": "self.all(ns, !format.dns1123Label().validate(ns).hasValue())",
                             "message": "each namespace must be a valid DNS label"}]},
    # the library's own documented pairing: the rule, and its errors as the message
    "host": {"type": "string", "maxLength": 253, "x-kubernetes-validations": [{
        "rule": "!format.named('dns1123Subdomain').value().validate(self).hasValue()",
        "messageExpression": "format.dns1123Subdomain().validate(self).orValue([]).join(', ')"}]},
    "generateName": {"type": "string", "maxLength": 63, "x-kubernetes-validations": [{
        "rule": "!format.dns1123LabelPrefix().validate(self).hasValue()", "message": "not a name prefix"}]},
    "labelKey": {"type": "string", "maxLength": 317, "x-kubernetes-validations": [{
        "rule": "format.named('qualifiedName').hasValue() && !format.named('nope').hasValue() && "
                "!format.qualifiedName().validate(self).hasValue()",
        "messageExpression": "format.qualifiedName().validate(self).value()[0]"}]},
}


def _crd(plural: str, props: dict[str, Any], *rules: dict[str, Any]) -> dict[str, Any]:
    """A CRD whose ``spec`` has ``props``, and ``rules`` on the spec itself."""
    spec: dict[str, Any] = {"type": "object", "properties": props}
    if rules:
        spec["x-kubernetes-validations"] = list(rules)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.ops.example.com"},
            "spec": {"group": "ops.example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "kind": plural[:-1].capitalize()},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": spec}}}}]}}


@pytest.fixture(scope="module")
def objects() -> Iterator[client.CustomObjectsApi]:
    with LoopbackAPIServer() as server:
        api_client = server.api_client()
        client.ApiextensionsV1Api(api_client).create_custom_resource_definition(_crd("probes", SPEC_PROPS))
        yield client.CustomObjectsApi(api_client)
        api_client.close()


def _create(objects: client.CustomObjectsApi, plural: str, name: str, **spec: Any) -> Any:
    body = {"apiVersion": "ops.example.com/v1", "kind": plural[:-1].capitalize(), "metadata": {"name": name},
            "spec": spec}
    return objects.create_namespaced_custom_object("ops.example.com", "v1", "default", plural, body)


def _causes(objects: client.CustomObjectsApi, plural: str, name: str, **spec: Any) -> list[tuple[str, str]]:
    code, status = refused(lambda: _create(objects, plural, name, **spec))
    assert (code, status["reason"]) == (422, "Invalid")
    return [(c["field"], c["message"]) for c in status["details"]["causes"]]


def test_format_library_accepts_valid_names(objects: client.CustomObjectsApi) -> None:
    made = _create(objects, "probes", "ok", resource="deployments", targetNamespaces=["default", "kube-system"],
                   host="api.example.com", generateName="web-", labelKey="example.com/My_Key.1")
    assert made["spec"]["resource"] == "deployments"


def test_format_library_refuses_with_the_rules_message(objects: client.CustomObjectsApi) -> None:
    assert _causes(objects, "probes", "bad1", resource="Deployments", targetNamespaces=["ok", "a.b"]) == [
        ("spec.resource", 'Invalid value: "string": the value must consist of only lowercase alphanumeric '
                          "characters and hyphens"),
        ("spec.targetNamespaces", 'Invalid value: "array": each namespace must be a valid DNS label')]


def test_format_errors_as_the_message_expression(objects: client.CustomObjectsApi) -> None:
    assert _causes(objects, "probes", "bad2", host="-x.com", generateName="Web-", labelKey="a/b/c") == [
        ("spec.host", f'Invalid value: "string": {SUBDOMAIN_MSG}'),
        ("spec.generateName", 'Invalid value: "string": not a name prefix'),
        ("spec.labelKey", 'Invalid value: "string": a qualified name must consist of alphanumeric characters, '
                          "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  "
                          "or 'my.name',  or '123-abc', regex used for validation is "
                          "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
                          "'/' (e.g. 'example.com/MyName')")]
    assert _causes(objects, "probes", "bad3", labelKey="-bad.io/x") == [
        ("spec.labelKey", f'Invalid value: "string": prefix part {SUBDOMAIN_MSG}')]


BUDGET = ("(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and "
          "strings are declared)")
AT = "spec.validation.openAPIV3Schema.properties[spec].properties"


def _crd_causes(objects: client.CustomObjectsApi, crd: dict[str, Any]) -> list[tuple[str, str, str]]:
    ext = client.ApiextensionsV1Api(objects.api_client)
    code, status = refused(lambda: ext.create_custom_resource_definition(crd))
    assert (code, status["reason"]) == (422, "Invalid")
    return [(c["reason"], c["field"], c["message"]) for c in status["details"]["causes"]]


def test_a_regex_over_each_item_of_an_unbounded_list_is_over_budget(objects: client.CustomObjectsApi) -> None:
    """karpenter's requirement values and many operators' name lists: each item matched against a regex.
    Unbounded, kube prices a 3 MiB request's worth of strings, each as long as the request."""
    rule = {"rule": "self.all(x, x.matches('^[a-z0-9]+$'))", "message": "lowercase values"}
    unbounded = {"type": "array", "items": {"type": "string"}, "x-kubernetes-validations": [rule]}
    causes = _crd_causes(objects, _crd("regexlists", {"values": unbounded}))
    assert causes[0] == ("FieldValueForbidden", f"{AT}[values].x-kubernetes-validations[0].rule",
                         f"Forbidden: estimated rule cost exceeds budget by factor of more than 100x {BUDGET}")
    bounded = dict(unbounded, maxItems=64, items={"type": "string", "maxLength": 63})
    client.ApiextensionsV1Api(objects.api_client).create_custom_resource_definition(
        _crd("regexlists", {"values": bounded}))


def test_a_rule_on_each_item_is_paid_per_item(objects: client.CustomObjectsApi) -> None:
    """One regex on an unbounded string costs 8 x 314,573 (a tenth of its bytes, times a quarter of the
    regex's length): within budget alone, over it on every item of an unbounded list of objects."""
    name = {"type": "string", "x-kubernetes-validations": [
        {"rule": "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')", "message": "not a DNS label"}]}
    items = {"type": "array", "items": {"type": "object", "properties": {"name": name}}}
    causes = _crd_causes(objects, _crd("peritems", {"name": name, "items": items}))
    each, alone = (f"{AT}[items].items.properties[name].x-kubernetes-validations[0].rule",
                   f"{AT}[name].x-kubernetes-validations[0].rule")
    # the rule alone (2,516,585) is among the schema's most expensive, each over 1% of the total limit
    assert [c[1] for c in causes] == [each, each, alone, "spec.validation.openAPIV3Schema"]
    assert causes[0][2] == f"Forbidden: estimated rule cost exceeds budget by factor of more than 100x {BUDGET}"


def test_the_schemas_total_is_limited_and_names_the_four_most_expensive(objects: client.CustomObjectsApi) -> None:
    """Thirteen regex rules on unbounded strings, each within the per-rule budget (a regex of 4k characters
    costs 1 + 314,573 k), together 102,236,238 > 100,000,000."""
    props = {f"f{k}": {"type": "string", "x-kubernetes-validations": [
        {"rule": f"self.matches('^{'a' * (4 * k - 2)}$')", "message": "no"}]} for k in range(19, 32)}
    causes = _crd_causes(objects, _crd("totals", props))
    contributed = "Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit " \
                  "for entire OpenAPIv3 schema"
    assert causes == [
        *[("FieldValueForbidden", f"{AT}[f{k}].x-kubernetes-validations[0].rule", contributed)
          for k in (31, 30, 29, 28)],
        ("FieldValueForbidden", "spec.validation.openAPIV3Schema", "Forbidden: x-kubernetes-validations estimated "
         f"rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.022362x "
         f"{BUDGET}")]
    del props["f19"]  # 96,262,350: kube installs it
    client.ApiextensionsV1Api(objects.api_client).create_custom_resource_definition(_crd("totals", props))


def test_set_and_map_lists_compare_regardless_of_order(objects: client.CustomObjectsApi) -> None:
    """kubebuilder's ``+listType=set``/``+listType=map`` with the usual immutability rule: kube's CEL compares
    such lists as sets and by key, so a reordered list equals its old self; a changed one does not."""
    immutable = [{"rule": "self == oldSelf", "message": "is immutable"}]
    zones = {"type": "array", "maxItems": 8, "x-kubernetes-list-type": "set",
             "items": {"type": "string", "maxLength": 32}, "x-kubernetes-validations": immutable}
    ports = {"type": "array", "maxItems": 8, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
             "items": {"type": "object", "required": ["name"], "properties": {
                 "name": {"type": "string", "maxLength": 15}, "port": {"type": "integer"}}},
             "x-kubernetes-validations": immutable}
    ext = client.ApiextensionsV1Api(objects.api_client)
    ext.create_custom_resource_definition(_crd("zonals", {
        "zones": zones, "ports": ports, "pinned": {"type": "object", "properties": {"zones": zones | {
            "x-kubernetes-validations": []}}, "x-kubernetes-validations": [
            {"rule": "self.zones == oldSelf.zones", "message": "pinned zones are immutable"}]}}))
    made = _create(objects, "zonals", "z", zones=["a", "b", "c"], pinned={"zones": ["x", "y"]},
                   ports=[{"name": "http", "port": 80}, {"name": "https", "port": 443}])
    made["spec"] |= {"zones": ["c", "a", "b"], "pinned": {"zones": ["y", "x"]},
                     "ports": [{"name": "https", "port": 443}, {"name": "http", "port": 80}]}
    made = objects.replace_namespaced_custom_object("ops.example.com", "v1", "default", "zonals", "z", made)
    assert made["spec"]["zones"] == ["c", "a", "b"]  # stored as sent
    made["spec"] |= {"zones": ["c", "a", "d"], "pinned": {"zones": ["y", "z"]},
                     "ports": [{"name": "https", "port": 8443}, {"name": "http", "port": 80}]}
    code, status = refused(lambda: objects.replace_namespaced_custom_object(
        "ops.example.com", "v1", "default", "zonals", "z", made))
    assert code == 422
    assert sorted((c["field"], c["message"]) for c in status["details"]["causes"]) == [  # kube's order is a map's
        ("spec.pinned", 'Invalid value: "object": pinned zones are immutable'),
        ("spec.ports", 'Invalid value: "array": is immutable'),
        ("spec.zones", 'Invalid value: "array": is immutable')]


def _rule_error(cause: tuple[str, str, str]) -> str:
    return cause[2].split("}: ", 1)[1]


def test_rules_are_checked_against_the_schemas_types(objects: client.CustomObjectsApi) -> None:
    """kube compiles each rule against its node's declared types: what cannot type-check refuses the CRD."""
    props = {"replicas": {"type": "integer"}, "ratio": {"type": "number"},
             "ports": {"type": "array", "maxItems": 8, "items": {"type": "integer"}},
             "name": {"type": "string", "maxLength": 63}}
    rules = ["self.replicas == '3'", "self.replicas.startsWith('1')", "self.ports.name == 'x'", "self.ratio == 1",
             "self.replicas"]
    crd = _crd("typeds", props, *({"rule": r, "message": "m"} for r in rules))
    assert [_rule_error(c) for c in _crd_causes(objects, crd)] == [
        "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(int, string)'"
        "\n | self.replicas == '3'\n | ..............^",
        "compilation failed: ERROR: <input>:1:25: found no matching overload for 'startsWith' applied to "
        "'(int, string)'\n | self.replicas.startsWith('1')\n | ........................^",
        "compilation failed: ERROR: <input>:1:11: type 'list(int)' does not support field selection"
        "\n | self.ports.name == 'x'\n | ..........^",
        "compilation failed: ERROR: <input>:1:12: found no matching overload for '_==_' applied to '(double, int)'"
        "\n | self.ratio == 1\n | ...........^",
        "cel expression must evaluate to a bool"]


def test_well_typed_operator_rules_install(objects: client.CustomObjectsApi) -> None:
    """Rules as operators write them, each type-checking on kube: karpenter's restricted label domains on a
    map's keys, a cross-type numeric comparison (kube enables CrossTypeNumericComparisons), int-or-string,
    optional field access, and timestamps of format date-time."""
    labels = {"type": "object", "maxProperties": 100, "additionalProperties": {"type": "string", "maxLength": 63},
              "x-kubernetes-validations": [
                  {"rule": "self.all(x, x in [\"karpenter.sh/capacity-type\", \"karpenter.sh/nodepool\"] || "
                           "!x.find(\"^([^/]+)\").endsWith(\"karpenter.sh\"))",
                   "message": "label domain \"karpenter.sh\" is restricted"}]}
    props = {"labels": labels, "ratio": {"type": "number"}, "surge": {"x-kubernetes-int-or-string": True},
             "mode": {"type": "string", "maxLength": 16}, "since": {"type": "string", "format": "date-time"}}
    rules = [
        {"rule": "!has(self.ratio) || (self.ratio > 0 && self.ratio <= 1)", "message": "ratio in (0, 1]"},
        {"rule": "!has(self.surge) || (type(self.surge) == int ? self.surge >= 0 : self.surge.endsWith('%'))",
         "message": "surge"},
        {"rule": "self.?mode.orValue('On') in ['On', 'Off']", "message": "mode"},
        {"rule": "!has(self.since) || self.since > timestamp('2000-01-01T00:00:00Z')", "message": "since"}]
    client.ApiextensionsV1Api(objects.api_client).create_custom_resource_definition(_crd("pools", props, *rules))
    made = _create(objects, "pools", "p", labels={"karpenter.sh/nodepool": "a", "team": "x"}, ratio=0.5,
                   surge="25%", since="2024-01-01T00:00:00Z")
    assert made["spec"]["ratio"] == 0.5
    assert sorted(_causes(objects, "pools", "q", labels={"foo.karpenter.sh/x": "a"}, ratio=2, surge=1,
                          mode="Maybe")) == [
        ("spec", 'Invalid value: "object": mode'),
        ("spec", 'Invalid value: "object": ratio in (0, 1]'),
        ("spec.labels", 'Invalid value: "object": label domain "karpenter.sh" is restricted')]


def test_required_fields_bound_an_unbounded_list(objects: client.CustomObjectsApi) -> None:
    """kueue's Workload: root rules scan status.conditions, an unbounded list of Conditions. kube sizes a
    condition by its required fields ("type":"",... 92 bytes at least), so the list holds 33,825 of them in a
    request and both rules are within budget; sized as {} they would be over it."""
    condition = {"type": "object", "required": ["lastTransitionTime", "message", "reason", "status", "type"],
                 "properties": {"lastTransitionTime": {"type": "string", "format": "date-time"},
                                "message": {"type": "string", "maxLength": 32768},
                                "reason": {"type": "string", "maxLength": 1024},
                                "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                                "type": {"type": "string", "maxLength": 316}}}
    admitted = ("has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, "
                "c.type == 'Admitted' && c.status == 'True')")
    rule = {"rule": f"(({admitted}) && ({admitted.replace('oldSelf', 'self')})) ? "
                    "((has(oldSelf.spec.maximumExecutionTimeSeconds) ? oldSelf.spec.maximumExecutionTimeSeconds : 0)"
                    " == (has(self.spec.maximumExecutionTimeSeconds) ? self.spec.maximumExecutionTimeSeconds : 0))"
                    " : true",
            "message": "maximumExecutionTimeSeconds is immutable while admitted"}
    crd = _crd("workloads", {"maximumExecutionTimeSeconds": {"type": "integer", "format": "int32"}})
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["status"] = {"type": "object", "properties": {"conditions": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"], "items": condition}}}
    schema["x-kubernetes-validations"] = [rule]
    client.ApiextensionsV1Api(objects.api_client).create_custom_resource_definition(crd)
    del condition["required"]
    crd["metadata"]["name"], crd["spec"]["names"] = "jobs.ops.example.com", {"plural": "jobs", "kind": "Job"}
    causes = _crd_causes(objects, crd)
    assert causes[0][:2] == ("FieldValueForbidden", "spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule")


def test_a_reserved_word_is_a_field_name_too(objects: client.CustomObjectsApi) -> None:
    """JobSet's volumeClaimPolicies: 't.metadata.namespace' on a template's own metadata schema. kube escapes
    the CEL keyword to __namespace__ and recognizes it as itself too (recognizeKeywordAsFieldName)."""
    metadata = {"type": "object", "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}}}
    policies = {"type": "array", "maxItems": 8, "items": {
        "type": "object", "properties": {"templates": {"type": "array", "maxItems": 8, "items": {
            "type": "object", "properties": {"metadata": metadata}}}},
        "x-kubernetes-validations": [{
            "rule": "self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0)",
            "message": "namespace cannot be set for VolumeClaimPolicies templates"}]}}
    client.ApiextensionsV1Api(objects.api_client).create_custom_resource_definition(
        _crd("jobsets", {"volumeClaimPolicies": policies}))
    _create(objects, "jobsets", "ok", volumeClaimPolicies=[{"templates": [{"metadata": {"name": "data"}}]}])
    assert _causes(objects, "jobsets", "bad", volumeClaimPolicies=[
        {"templates": [{"metadata": {"name": "data", "namespace": "other"}}]}]) == [
        ("spec.volumeClaimPolicies[0]",
         'Invalid value: "object": namespace cannot be set for VolumeClaimPolicies templates')]


def test_below_an_unbounded_list_a_rule_is_paid_as_often_as_its_node_fits(objects: client.CustomObjectsApi) -> None:
    """crossplane's Composition: pipeline (maxItems 99) of steps, each with an unbounded list of credentials
    whose items carry a rule. Below an unbounded list kube stops multiplying and counts how many such items a
    request can hold (3 MiB / 25 bytes); multiplied, 99 x 125,829 evaluations would be over budget."""
    credentials = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                   "items": {"type": "object", "required": ["name", "source"], "properties": {
                       "name": {"type": "string"}, "source": {"type": "string", "enum": ["None", "Secret"]},
                       "secretRef": {"type": "object", "required": ["name", "namespace"], "properties": {
                           "name": {"type": "string"}, "namespace": {"type": "string"}}}},
                       "x-kubernetes-validations": [{"rule": "self.source == 'Secret' && has(self.secretRef)",
                                                     "message": "the Secret source requires a secretRef"}]}}
    pipeline = {"type": "array", "maxItems": 99, "minItems": 1, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["step"], "items": {"type": "object", "required": ["step"],
                                                                  "properties": {"step": {"type": "string"},
                                                                                 "credentials": credentials}}}
    client.ApiextensionsV1Api(objects.api_client).create_custom_resource_definition(
        _crd("compositions", {"pipeline": pipeline}))
    assert _causes(objects, "compositions", "c", pipeline=[
        {"step": "a", "credentials": [{"name": "x", "source": "Secret"}]}]) == [
        ("spec.pipeline[0].credentials[0]", 'Invalid value: "object": the Secret source requires a secretRef')]


def test_comparing_two_strings_costs_a_tenth_of_the_shorter(objects: client.CustomObjectsApi) -> None:
    """The usual immutability rule on an unbounded string costs 314,575 per evaluation (cel-go's string
    equality traverses the strings): 16 list items of it fit the budget, 64 are 2.0x over it."""
    name = {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}]}

    def items(n: int) -> dict[str, Any]:
        return {"type": "array", "maxItems": n, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"],
                "items": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"},
                                                                              "name": name}}}
    causes = _crd_causes(objects, _crd("renames", {"entries": items(64)}))
    assert causes[0] == ("FieldValueForbidden",
                         f"{AT}[entries].items.properties[name].x-kubernetes-validations[0].rule",
                         f"Forbidden: estimated rule cost exceeds budget by factor of 2.0x {BUDGET}")
    client.ApiextensionsV1Api(objects.api_client).create_custom_resource_definition(
        _crd("renames", {"entries": items(16)}))


SAFE_UPGRADES = {  # gateway-api's config/crd/experimental/gateway.networking.k8s.io_vap_safeupgrades.yaml
    "matchConstraints": {"resourceRules": [{"apiGroups": ["apiextensions.k8s.io"], "apiVersions": ["v1"],
                                            "operations": ["CREATE", "UPDATE"], "resources": ["*"]}]},
    "failurePolicy": "Fail",
    "validations": [
        {"expression": "object.spec.group != 'gateway.networking.k8s.io' || oldObject == null || ("
                       "has(object.metadata.annotations) && object.metadata.annotations.exists(k, k == "
                       "'gateway.networking.k8s.io/channel') && object.metadata.annotations["
                       "'gateway.networking.k8s.io/channel'] == 'standard' ) || (oldObject != null && "
                       "has(oldObject.metadata.annotations) && oldObject.metadata.annotations.exists(k, k == "
                       "'gateway.networking.k8s.io/channel') && oldObject.metadata.annotations["
                       "'gateway.networking.k8s.io/channel'] == 'experimental' )",
         "message": "Installing experimental CRDs on top of standard channel CRDs is prohibited by default.",
         "reason": "Invalid"},
        {"expression": "object.spec.group != 'gateway.networking.k8s.io' ||\n(has(object.metadata.annotations) && "
                       "object.metadata.annotations.exists(k, k == 'gateway.networking.k8s.io/bundle-version') &&\n"
                       "(object.metadata.annotations['gateway.networking.k8s.io/bundle-version'] == 'v0.0.0-dev' ||\n"
                       "(object.metadata.annotations['gateway.networking.k8s.io/bundle-version'].startsWith('v1.') &&"
                       "\n !matches(object.metadata.annotations['gateway.networking.k8s.io/bundle-version'], "
                       "'^v1\\\\.[0-4](\\\\.|$)'))))\n",
         "message": "Installing CRDs with version other than v0.0.0-dev or v1.5+ is prohibited by default.",
         "reason": "Invalid"}]}


def test_gateway_apis_safe_upgrades_policy(objects: client.CustomObjectsApi) -> None:
    """gateway-api ships a ValidatingAdmissionPolicy guarding its CRDs: an old bundle version is refused, a
    v1.5+ standard CRD installs, and replacing it with an experimental one is refused."""
    admission = client.AdmissionregistrationV1Api(objects.api_client)
    name = "safe-upgrades.gateway.networking.k8s.io"
    admission.create_validating_admission_policy({"metadata": {"name": name}, "spec": SAFE_UPGRADES})
    admission.create_validating_admission_policy_binding({"metadata": {"name": name}, "spec": {
        "policyName": name, "validationActions": ["Deny"], "matchResources": {"resourceRules": [
            {"apiGroups": ["apiextensions.k8s.io"], "apiVersions": ["v1"], "resources": ["customresourcedefinitions"],
             "operations": ["CREATE", "UPDATE"]}]}}})
    crd = _crd("foos", {})
    crd["metadata"] = {"name": "foos.gateway.networking.k8s.io", "annotations": {
        "gateway.networking.k8s.io/bundle-version": "v1.3.0", "gateway.networking.k8s.io/channel": "standard"}}
    crd["spec"]["group"] = "gateway.networking.k8s.io"
    ext = client.ApiextensionsV1Api(objects.api_client)
    code, status = refused(lambda: ext.create_custom_resource_definition(crd))
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"].endswith(f"ValidatingAdmissionPolicy '{name}' with binding '{name}' denied request: "
                                      "Installing CRDs with version other than v0.0.0-dev or v1.5+ is prohibited "
                                      "by default.")
    crd["metadata"]["annotations"]["gateway.networking.k8s.io/bundle-version"] = "v1.5.1"
    made = ext.create_custom_resource_definition(crd)
    made.metadata.annotations["gateway.networking.k8s.io/channel"] = "experimental"
    code, status = refused(lambda: ext.replace_custom_resource_definition(made.metadata.name, made))
    assert code == 422
    assert status["message"].endswith("denied request: Installing experimental CRDs on top of standard channel "
                                      "CRDs is prohibited by default.")


def test_a_typed_scalar_compared_with_a_constant_is_priced_as_kube_does(objects: client.CustomObjectsApi) -> None:
    """openshift/api's MachineConfigPool: an integer's transition rule on each item of an unbounded list.
    cel-go prices 'self == 0' on an int nothing beyond its operands (kube's 'self[1] == 0.0' costs 2), so
    the rule costs 6 on each of the 1,572,864 integers a request can hold, 9,437,184: within budget."""
    generation = {"type": "integer", "format": "int64", "minimum": 0, "x-kubernetes-validations": [
        {"rule": "self >= oldSelf || (self == 0 && oldSelf > 0)",
         "message": "observedGeneration must not move backwards except to zero"}]}
    statuses = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                "items": {"type": "object", "required": ["type"], "properties": {
                    "type": {"type": "string", "enum": ["PinnedImageSets"]}, "observedGeneration": generation}}}
    client.ApiextensionsV1Api(objects.api_client).create_custom_resource_definition(
        _crd("pools2s", {"synchronizers": statuses}))
    made = _create(objects, "pools2s", "p", synchronizers=[{"type": "PinnedImageSets", "observedGeneration": 3}])
    made["spec"]["synchronizers"][0]["observedGeneration"] = 2
    code, status = refused(lambda: objects.replace_namespaced_custom_object(
        "ops.example.com", "v1", "default", "pools2s", "p", made))
    assert (code, [c["message"] for c in status["details"]["causes"]]) == (
        422, ['Invalid value: "integer": observedGeneration must not move backwards except to zero'])


def test_min_properties_and_repeated_keys_are_refused(objects: client.CustomObjectsApi) -> None:
    """openshift/api's ClusterCSIDriver secretsStore: a struct with minProperties 1 sent empty, and a map list
    of audiences with one repeated (kube's ValidateListSetsAndMaps), both refused as its test suite expects."""
    audiences = {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "map",
                 "x-kubernetes-list-map-keys": ["audience"], "items": {
                     "type": "object", "required": ["audience"], "properties": {"audience": {"type": "string"}}}}
    zones = {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
    managed = {"type": "object", "minProperties": 1, "properties": {"audiences": audiences, "zones": zones}}
    client.ApiextensionsV1Api(objects.api_client).create_custom_resource_definition(
        _crd("drivers", {"managed": managed}))
    assert _causes(objects, "drivers", "empty", managed={}) == [
        ("spec.managed", "Invalid value: 0: spec.managed in body should have at least 1 properties")]
    assert _causes(objects, "drivers", "twice", managed={
        "audiences": [{"audience": "a"}, {"audience": "b"}, {"audience": "a"}], "zones": ["x", "x"]}) == [
        ("spec.managed.audiences[2]", 'Duplicate value: map[string]interface {}{"audience":"a"}'),
        ("spec.managed.zones[1]", 'Duplicate value: "x"')]
