"""Validation as kube-apiserver answers it, through the official client: 422 Invalid with kube's field
causes and messages, 400 for what cannot be decoded, 404 for a namespace that does not exist."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

pytestmark = pytest.mark.integration

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_KEY = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}], **spec}}


def refused(call: Callable[[], object]) -> tuple[int, dict[str, Any]]:
    with pytest.raises(client.ApiException) as info:
        call()
    return info.value.status, json.loads(info.value.body)


def causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


def test_a_bad_name_is_invalid_with_the_rule_in_kube_words(v1: client.CoreV1Api) -> None:
    code, body = refused(lambda: v1.create_namespaced_pod("default", pod("Bad_Name")))
    assert (code, body["reason"]) == (422, "Invalid")
    assert body["message"] == f'Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN}'
    assert body["details"] == {"name": "Bad_Name", "kind": "Pod", "causes": [
        {"reason": "FieldValueInvalid", "field": "metadata.name",
         "message": f'Invalid value: "Bad_Name": {SUBDOMAIN}'}]}
    code, body = refused(lambda: v1.create_namespaced_config_map("default", {"metadata": {"name": "a" * 300}}))
    assert (code, causes(body)) == (422, [("metadata.name", f'Invalid value: "{"a" * 300}": '
                                          "must be no more than 253 characters")])
    assert v1.list_namespaced_pod("default").items == []


def test_names_follow_each_kinds_rule(v1: client.CoreV1Api) -> None:
    """Namespaces are DNS labels, Services DNS-1035 labels, the rest subdomains."""
    code, body = refused(lambda: v1.create_namespace({"metadata": {"name": "a.b"}}))
    assert (code, causes(body)) == (422, [("metadata.name", 'Invalid value: "a.b": must not contain dots')])
    code, body = refused(lambda: v1.create_namespaced_service("default", {
        "metadata": {"name": "1svc"}, "spec": {"ports": [{"port": 80}]}}))
    assert code == 422 and body["message"].startswith(
        'Service "1svc" is invalid: metadata.name: Invalid value: "1svc": a DNS-1035 label must consist of')
    v1.create_namespaced_config_map("default", {"metadata": {"name": "a.b"}})  # a subdomain may have dots


def test_generate_name_is_checked_as_a_prefix(v1: client.CoreV1Api) -> None:
    made = v1.create_namespaced_config_map("default", {"metadata": {"generateName": "web-"}})
    assert made.metadata.name.startswith("web-") and len(made.metadata.name) == 9
    code, body = refused(lambda: v1.create_namespaced_config_map("default", {"metadata": {"generateName": "Web_"}}))
    assert code == 422
    assert causes(body)[0] == ("metadata.generateName", f'Invalid value: "Web_": {SUBDOMAIN}')


def test_labels_annotations_finalizers_and_owners(v1: client.CoreV1Api) -> None:
    meta = {"name": "m", "labels": {"bad key": "ok", "ok": "bad value!"}, "annotations": {"a/b/c": "x"},
            "finalizers": ["example.com/ok", "bad finalizer"],
            "ownerReferences": [{"apiVersion": "", "kind": "Deployment", "name": "", "uid": "1"}]}
    code, body = refused(lambda: v1.create_namespaced_config_map("default", {"metadata": meta}))
    assert code == 422
    got = causes(body)
    assert ("metadata.labels", f'Invalid value: "bad key": {LABEL_KEY}') in got
    assert ("metadata.labels", 'Invalid value: "bad value!": a valid label must be an empty string or consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
            "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')") in got
    assert ("metadata.annotations", 'Invalid value: "a/b/c": a valid label key must consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  "
            "or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
            "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')") in got
    assert ("metadata.finalizers", f'Invalid value: "bad finalizer": {LABEL_KEY}') in got
    assert ("metadata.ownerReferences.apiVersion", 'Invalid value: "": version must not be empty') in got
    assert ("metadata.ownerReferences.name", 'Invalid value: "": must not be empty') in got
    assert len(got) == 6


def test_annotations_over_256_kib_are_too_long(v1: client.CoreV1Api) -> None:
    big = {"metadata": {"name": "big", "annotations": {"a": "x" * (256 * 1024)}}}
    code, body = refused(lambda: v1.create_namespaced_config_map("default", big))
    assert (code, causes(body)) == (422, [("metadata.annotations", "Too long: may not be more than 262144 bytes")])
    v1.create_namespaced_config_map("default", {"metadata": {"name": "fits", "annotations": {"a": "x" * 1000}}})


def test_two_controller_owners_are_invalid(v1: client.CoreV1Api) -> None:
    owners = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": n, "uid": n, "controller": True}
              for n in ("a", "b")]
    code, body = refused(lambda: v1.create_namespaced_config_map("default", {
        "metadata": {"name": "o", "ownerReferences": owners}}))
    assert code == 422 and causes(body)[0][1].endswith(
        'Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/a and '
        "ReplicaSet/b")


def test_the_namespace_must_exist(v1: client.CoreV1Api) -> None:
    code, body = refused(lambda: v1.create_namespaced_pod("nope", pod()))
    assert (code, body["reason"], body["message"]) == (404, "NotFound", 'namespaces "nope" not found')


def test_pod_spec_essentials(v1: client.CoreV1Api) -> None:
    spec = {"containers": [
        {"name": "app"},
        {"name": "app", "image": "i", "ports": [{"containerPort": 70000}, {"containerPort": 80, "protocol": "FOO"}],
         "resources": {"limits": {"cpu": "1", "foo": "1"}, "requests": {"cpu": "2"}}},
        {"name": "Bad_Name", "image": "i", "imagePullPolicy": "Sometimes"}], "restartPolicy": "Sometimes"}
    code, body = refused(lambda: v1.create_namespaced_pod("default", {"metadata": {"name": "p"}, "spec": spec}))
    assert code == 422
    got = causes(body)
    assert got == [
        ("spec.containers[0].image", "Required value"),
        ("spec.containers[1].name", 'Duplicate value: "app"'),
        ("spec.containers[1].ports[0].containerPort",
         "Invalid value: 70000: must be between 1 and 65535, inclusive"),
        ("spec.containers[1].ports[1].protocol", 'Unsupported value: "FOO": supported values: "SCTP", "TCP", "UDP"'),
        ("spec.containers[1].resources.limits[foo]",
         'Invalid value: "foo": must be a standard resource for containers'),
        ("spec.containers[1].resources.requests", 'Invalid value: "2": must be less than or equal to cpu limit of 1'),
        # kube's defaulting copies the limit to the requests first
        ("spec.containers[1].resources.requests[foo]",
         'Invalid value: "foo": must be a standard resource for containers'),
        ("spec.containers[2].name", 'Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case '
         "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
         "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
        ("spec.containers[2].imagePullPolicy",
         'Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"'),
        ("spec.restartPolicy", 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"')]
    empty = {"metadata": {"name": "p"}, "spec": {"containers": []}}
    code, body = refused(lambda: v1.create_namespaced_pod("default", empty))
    assert (code, causes(body)) == (422, [("spec.containers", "Required value")])


def test_templates_are_validated_with_their_kinds_restart_policy(kube_client: client.ApiClient) -> None:
    apps, batch = client.AppsV1Api(kube_client), client.BatchV1Api(kube_client)
    template = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c"}], "restartPolicy": "Never"}}
    code, body = refused(lambda: apps.create_namespaced_deployment("default", {
        "metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": template}}))
    assert code == 422 and causes(body) == [
        ("spec.template.spec.containers[0].image", "Required value"),
        ("spec.template.spec.restartPolicy", 'Unsupported value: "Never": supported values: "Always"')]
    job = {"metadata": {"name": "j"}, "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    code, body = refused(lambda: batch.create_namespaced_job("default", job))
    assert code == 422 and causes(body) == [("spec.template.spec.restartPolicy",
                                             'Unsupported value: "Always": supported values: "OnFailure", "Never"')]


def test_a_malformed_quantity_is_a_bad_request(v1: client.CoreV1Api) -> None:
    spec = {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "lots"}}}]}
    code, body = refused(lambda: v1.create_namespaced_pod("default", {"metadata": {"name": "p"}, "spec": spec}))
    assert (code, body["reason"]) == (400, "BadRequest")
    assert body["message"] == ('Pod in version "v1" cannot be handled as a Pod: quantities must match the regular '
                               "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def test_a_refused_update_changes_nothing(v1: client.CoreV1Api) -> None:
    made = v1.create_namespaced_config_map("default", {"metadata": {"name": "c", "labels": {"a": "b"}}})
    code, _ = refused(lambda: v1.patch_namespaced_config_map("c", "default", {"metadata": {"labels": {"a": "!"}}}))
    assert code == 422
    assert v1.read_namespaced_config_map("c", "default").metadata.resource_version == made.metadata.resource_version


def test_a_workloads_selector_must_select_its_template(kube_client: client.ApiClient) -> None:
    apps = client.AppsV1Api(kube_client)
    template = {"metadata": {"labels": {"app": "a", "tier": "web"}}, "spec": pod()["spec"]}
    code, body = refused(lambda: apps.create_namespaced_deployment("default", {
        "metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "b"}}, "template": template}}))
    assert (code, causes(body)) == (422, [("spec.template.metadata.labels", 'Invalid value: map[string]string{'
                                           '"app":"a", "tier":"web"}: `selector` does not match template `labels`')])
    apps.create_namespaced_replica_set("default", {"metadata": {"name": "r"}, "spec": {"selector": {
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]}, "template": template}})


def test_a_service_needs_ports_unless_headless(v1: client.CoreV1Api) -> None:
    code, body = refused(lambda: v1.create_namespaced_service("default", {"metadata": {"name": "s"}, "spec": {}}))
    assert (code, causes(body)) == (422, [("spec.ports", "Required value")])
    v1.create_namespaced_service("default", {"metadata": {"name": "h"}, "spec": {"clusterIP": "None"}})


def test_config_keys_and_volume_mounts(v1: client.CoreV1Api) -> None:
    code, body = refused(lambda: v1.create_namespaced_config_map("default", {
        "metadata": {"name": "c"}, "data": {"bad key": "1", "ok": "2"}, "binaryData": {"ok": "Mw=="}}))
    assert (code, causes(body)) == (422, [
        ("data[bad key]", "Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, "
         "'-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
         "'[-._a-zA-Z0-9]+')"),
        ("binaryData[ok]", 'Invalid value: "ok": duplicate of key present in data')])
    spec = {"volumes": [{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}],
            "containers": [{"name": "c", "image": "i", "volumeMounts": [
                {"name": "v", "mountPath": "/a"}, {"name": "w", "mountPath": "/a"}]}]}
    code, body = refused(lambda: v1.create_namespaced_pod("default", {"metadata": {"name": "p"}, "spec": spec}))
    assert (code, causes(body)) == (422, [("spec.volumes[1].name", 'Duplicate value: "v"'),
                                          ("spec.containers[0].volumeMounts[1].name", 'Not found: "w"'),
                                          ("spec.containers[0].volumeMounts[1].mountPath",
                                           'Invalid value: "/a": must be unique')])
