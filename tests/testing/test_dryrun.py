"""``dryRun=All`` on every verb: the answer is what would be stored, and nothing is stored, watched or counted.

Each test opens a watch from the current resourceVersion before its dry runs and ends with one real
change, which must be the first event and carry the next resourceVersion: a dry run that wrote, sent
an event or took a resourceVersion would show up there. The last tests drive the real kubectl.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from tests.testing.dryrun_support import (
    ALL,
    Watching,
    cm_body,
    error_body,
    marker,
    pod_body,
    raw_body,
    watch_configmaps,
)

# --- create ------------------------------------------------------------------------------------


@pytest.mark.integration
def test_dry_run_create_returns_the_object_without_storing_it(v1: client.CoreV1Api) -> None:
    w = watch_configmaps(v1)
    got = raw_body(v1.create_namespaced_config_map("default", cm_body("c"), dry_run=ALL, _preload_content=False))
    meta = got["metadata"]
    assert got["kind"] == "ConfigMap" and got["data"] == {"a": "1"}
    assert meta["name"] == "c" and meta["namespace"] == "default"
    assert meta["uid"] and meta["creationTimestamp"]
    assert "resourceVersion" not in meta  # kube's dry-run create has nothing stored to version
    generated = v1.create_namespaced_config_map("default", {"metadata": {"generateName": "g-"}}, dry_run=ALL)
    assert generated.metadata.name.startswith("g-") and len(generated.metadata.name) == 7
    with pytest.raises(client.ApiException) as info:
        v1.read_namespaced_config_map("c", "default")
    assert info.value.status == 404
    assert v1.list_namespaced_config_map("default").items == []
    marker(v1, w)


@pytest.mark.integration
def test_dry_run_create_defaults_and_echoes_a_client_resource_version(v1: client.CoreV1Api) -> None:
    w = Watching(v1.list_namespaced_pod, namespace="default")
    pod = v1.create_namespaced_pod("default", pod_body("p"), dry_run=ALL)
    assert pod.spec.scheduler_name == "default-scheduler" and pod.status.phase == "Pending"
    assert pod.metadata.generation == 1
    body = cm_body("c")
    body["metadata"]["resourceVersion"] = "42"  # kube's dry-run storage does not refuse it: it echoes it
    assert v1.create_namespaced_config_map("default", body, dry_run=ALL).metadata.resource_version == "42"
    v1.create_namespaced_pod("default", pod_body("real"))
    w.expect_only("ADDED", "real")


@pytest.mark.integration
def test_dry_run_create_fails_as_the_real_one_would(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_config_map("default", cm_body("c"))
    w = watch_configmaps(v1)
    for namespace, body, code, reason in (("default", cm_body("c"), 409, "AlreadyExists"),
                                          ("nope", cm_body("c"), 404, "NotFound"),
                                          ("default", {"metadata": {}}, 422, "Invalid")):
        with pytest.raises(client.ApiException) as info:
            v1.create_namespaced_config_map(namespace, body, dry_run=ALL)
        assert (info.value.status, error_body(info.value)["reason"]) == (code, reason)
    marker(v1, w)


# --- update and patch --------------------------------------------------------------------------


@pytest.mark.integration
def test_dry_run_update_answers_with_the_stored_resource_version(kube_client: client.ApiClient) -> None:
    leases = client.CoordinationV1Api(kube_client)
    created = leases.create_namespaced_lease("default", {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}})
    w = Watching(leases.list_namespaced_lease, namespace="default")
    created.spec.holder_identity = "b"
    got = leases.replace_namespaced_lease("l", "default", created, dry_run=ALL)
    assert got.spec.holder_identity == "b" and got.metadata.generation == 2
    assert got.metadata.resource_version == created.metadata.resource_version
    assert got.metadata.uid == created.metadata.uid
    created.metadata.resource_version = None  # an unconditional update, too, answers with the stored one
    got = leases.replace_namespaced_lease("l", "default", created, dry_run=ALL)
    assert got.metadata.resource_version == w.rv
    stored = leases.read_namespaced_lease("l", "default")
    assert stored.spec.holder_identity == "a" and stored.metadata.generation == 1
    assert stored.metadata.resource_version == w.rv
    stored.metadata.resource_version = "1"
    stored.spec.holder_identity = "c"
    with pytest.raises(client.ApiException) as info:
        leases.replace_namespaced_lease("l", "default", stored, dry_run=ALL)  # stale: 409 all the same
    assert info.value.status == 409
    with pytest.raises(client.ApiException) as info:  # a ConfigMap: a PUT does not create one (a Lease it does)
        client.CoreV1Api(kube_client).replace_namespaced_config_map("nope", "default", {"metadata": {"name": "nope"}},
                                                                    dry_run=ALL)
    assert info.value.status == 404
    leases.patch_namespaced_lease("l", "default", {"spec": {"holderIdentity": "z"}})
    w.expect_only("MODIFIED", "l")


@pytest.mark.integration
def test_dry_run_patch_of_every_flavour(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_config_map("default", cm_body("c"))
    w = watch_configmaps(v1)
    merge = v1.patch_namespaced_config_map("c", "default", {"data": {"a": "2"}}, dry_run=ALL,
                                           _content_type="application/merge-patch+json")
    strategic = v1.patch_namespaced_config_map("c", "default", {"data": {"b": "3"}}, dry_run=ALL)
    jsonpatch = v1.patch_namespaced_config_map("c", "default", [{"op": "remove", "path": "/data/a"}], dry_run=ALL)
    assert (merge.data, strategic.data, jsonpatch.data) == ({"a": "2"}, {"a": "1", "b": "3"}, {})
    assert {merge.metadata.resource_version, jsonpatch.metadata.resource_version} == {w.rv}
    with pytest.raises(client.ApiException) as info:
        v1.patch_namespaced_config_map("c", "default", [{"op": "test", "path": "/data/a", "value": "9"}],
                                       dry_run=ALL)
    assert info.value.status == 422
    with pytest.raises(client.ApiException) as info:
        v1.patch_namespaced_config_map("c", "default", {"metadata": {"resourceVersion": "1"}}, dry_run=ALL)
    assert info.value.status == 409
    assert v1.read_namespaced_config_map("c", "default").data == {"a": "1"}
    marker(v1, w)


@pytest.mark.integration
def test_dry_run_removing_the_last_finalizer_keeps_the_object(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_config_map("default", {"metadata": {"name": "c", "finalizers": ["x/y"]}})
    v1.delete_namespaced_config_map("c", "default")
    w = watch_configmaps(v1)
    got = v1.patch_namespaced_config_map("c", "default", {"metadata": {"finalizers": None}}, dry_run=ALL)
    assert got.metadata.finalizers is None and got.metadata.deletion_timestamp is not None
    assert v1.read_namespaced_config_map("c", "default").metadata.finalizers == ["x/y"]
    marker(v1, w)


# --- subresources ------------------------------------------------------------------------------


@pytest.mark.integration
def test_dry_run_status_and_binding(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_pod("default", pod_body("p"))
    w = Watching(v1.list_namespaced_pod, namespace="default")
    patched = v1.patch_namespaced_pod_status("p", "default", {"status": {"phase": "Running"}}, dry_run=ALL)
    assert patched.status.phase == "Running" and patched.metadata.resource_version == w.rv
    current = v1.read_namespaced_pod("p", "default")
    current.status.phase = "Failed"
    current.spec.node_name = "ignored"  # a status write keeps the spec
    replaced = v1.replace_namespaced_pod_status("p", "default", current, dry_run=ALL)
    assert replaced.status.phase == "Failed" and replaced.spec.node_name is None
    binding = client.V1Binding(metadata=client.V1ObjectMeta(name="p"),
                               target=client.V1ObjectReference(kind="Node", name="n1"))
    resp = v1.create_namespaced_pod_binding("p", "default", binding, dry_run=ALL, _preload_content=False)
    assert (resp.status, raw_body(resp)["status"]) == (201, "Success")
    stored = v1.read_namespaced_pod("p", "default")
    assert stored.spec.node_name is None and stored.status.phase == "Pending" and stored.status.conditions is None
    v1.create_namespaced_pod_binding("p", "default", binding, _preload_content=False)
    w.expect_only("MODIFIED", "p")
    with pytest.raises(client.ApiException) as info:  # already bound: the dry run conflicts too
        v1.create_namespaced_pod_binding("p", "default", binding, dry_run=ALL, _preload_content=False)
    assert info.value.status == 409


# --- delete and deletecollection ---------------------------------------------------------------


@pytest.mark.integration
def test_dry_run_delete_by_query_and_by_body(v1: client.CoreV1Api) -> None:
    created = v1.create_namespaced_config_map("default", cm_body("c"))
    w = watch_configmaps(v1)
    by_query = raw_body(v1.delete_namespaced_config_map("c", "default", dry_run=ALL, _preload_content=False))
    by_body = v1.delete_namespaced_config_map("c", "default", body=client.V1DeleteOptions(dry_run=[ALL]),
                                              _preload_content=False)
    assert by_query == raw_body(by_body)
    assert by_query["metadata"]["name"] == "c" and by_query["metadata"]["resourceVersion"] == w.rv
    wrong = client.V1DeleteOptions(dry_run=[ALL], preconditions=client.V1Preconditions(uid="other"))
    with pytest.raises(client.ApiException) as info:
        v1.delete_namespaced_config_map("c", "default", body=wrong)
    assert info.value.status == 409
    with pytest.raises(client.ApiException) as info:
        v1.delete_namespaced_config_map("nope", "default", dry_run=ALL)
    assert info.value.status == 404
    assert v1.read_namespaced_config_map("c", "default").metadata.uid == created.metadata.uid
    marker(v1, w)


@pytest.mark.integration
def test_dry_run_delete_of_a_bound_pod(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_pod("default", pod_body("p", nodeName="node1"))
    w = Watching(v1.list_namespaced_pod, namespace="default")
    resp = v1.delete_namespaced_pod("p", "default", dry_run=ALL, _preload_content=False)
    got = raw_body(resp)
    assert resp.status == 200
    assert got["metadata"]["deletionTimestamp"] and got["metadata"]["deletionGracePeriodSeconds"] == 30
    assert got["metadata"]["resourceVersion"] == w.rv
    stored = v1.read_namespaced_pod("p", "default")
    assert stored.metadata.deletion_timestamp is None and stored.metadata.deletion_grace_period_seconds is None
    unbound = v1.delete_namespaced_pod("p", "default", dry_run=ALL, grace_period_seconds=0)
    # grace 0: gone at once, answered as last stored: marked with grace 0 (store.go's graceful path)
    assert unbound.metadata.deletion_grace_period_seconds == 0
    v1.delete_namespaced_pod("p", "default")
    w.expect_only("MODIFIED", "p")


@pytest.mark.integration
def test_dry_run_delete_of_a_namespace_keeps_its_contents(v1: client.CoreV1Api) -> None:
    v1.create_namespace({"metadata": {"name": "team"}})
    v1.create_namespaced_config_map("team", cm_body("c"))
    w = Watching(v1.list_config_map_for_all_namespaces)
    got = v1.delete_namespace("team", dry_run=ALL)
    assert got["metadata"]["name"] == "team"
    # kube serves no DELETECOLLECTION on namespaces; this server does, and honours dryRun there too
    assert _call(v1.api_client, "DELETE", "/api/v1/namespaces", [("dryRun", ALL)])[0] == 200
    with pytest.raises(client.ApiException) as info:
        v1.delete_namespace("kube-system", dry_run=ALL)
    assert info.value.status == 403
    assert v1.read_namespace("team").status.phase == "Active"
    assert [c.metadata.name for c in v1.list_namespaced_config_map("team").items] == ["c"]
    marker(v1, w)


@pytest.mark.integration
def test_dry_run_delete_collection(v1: client.CoreV1Api) -> None:
    for name in ("a", "b"):
        v1.create_namespaced_config_map("default", cm_body(name))
    v1.create_namespaced_pod("default", pod_body("p", nodeName="node1"))
    w = watch_configmaps(v1)
    v1.delete_collection_namespaced_config_map("default", dry_run=ALL)
    v1.delete_collection_namespaced_pod("default", body=client.V1DeleteOptions(dry_run=[ALL]))
    assert [c.metadata.name for c in v1.list_namespaced_config_map("default").items] == ["a", "b"]
    assert v1.read_namespaced_pod("p", "default").metadata.deletion_timestamp is None
    marker(v1, w)


@pytest.mark.integration
def test_a_delete_body_overrides_the_query(v1: client.CoreV1Api) -> None:
    """kube reads DeleteOptions from the body alone when there is one: ``?dryRun=All`` beside it is ignored."""
    v1.create_namespaced_config_map("default", cm_body("c"))
    v1.delete_namespaced_config_map("c", "default", dry_run=ALL, body=client.V1DeleteOptions())
    with pytest.raises(client.ApiException) as info:
        v1.read_namespaced_config_map("c", "default")
    assert info.value.status == 404


# --- unsupported values ------------------------------------------------------------------------


def _unsupported(kind: str, rendered: str) -> dict[str, Any]:
    why = f'Unsupported value: {rendered}: supported values: "All"'
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'{kind}.meta.k8s.io "" is invalid: dryRun: {why}', "reason": "Invalid",
            "details": {"group": "meta.k8s.io", "kind": kind,
                        "causes": [{"reason": "FieldValueNotSupported", "message": why, "field": "dryRun"}]},
            "code": 422}


@pytest.mark.integration
@pytest.mark.parametrize(("kind", "call"), [
    ("CreateOptions", lambda v1, d: v1.create_namespaced_config_map("default", cm_body("new"), dry_run=d)),
    ("UpdateOptions", lambda v1, d: v1.replace_namespaced_config_map("c", "default", cm_body("c", a="2"), dry_run=d)),
    ("PatchOptions", lambda v1, d: v1.patch_namespaced_config_map("c", "default", {"data": {}}, dry_run=d)),
    ("DeleteOptions", lambda v1, d: v1.delete_namespaced_config_map("c", "default", dry_run=d)),
    ("DeleteOptions", lambda v1, d: v1.delete_namespaced_config_map(
        "c", "default", body=client.V1DeleteOptions(dry_run=[d]))),
    ("DeleteOptions", lambda v1, d: v1.delete_collection_namespaced_config_map("default", dry_run=d)),
    ("CreateOptions", lambda v1, d: v1.create_namespaced_pod_binding("c", "default", client.V1Binding(
        metadata=client.V1ObjectMeta(name="c"), target=client.V1ObjectReference(name="n")), dry_run=d)),
])
def test_unsupported_dry_run_is_invalid(v1: client.CoreV1Api, kind: str, call: Callable[..., Any]) -> None:
    v1.create_namespaced_config_map("default", cm_body("c"))
    w = watch_configmaps(v1)
    with pytest.raises(client.ApiException) as info:
        call(v1, "Bogus")
    assert info.value.status == 422
    assert error_body(info.value) == _unsupported(kind, '["Bogus"]')
    assert v1.read_namespaced_config_map("c", "default").data == {"a": "1"}
    marker(v1, w)


def _call(api: client.ApiClient, method: str, path: str, query: list[tuple[str, str]],
          body: Any = None) -> tuple[int, dict[str, Any]]:
    """A request with repeated query parameters, which the typed methods cannot send."""
    headers = {"Content-Type": "application/json"} if body is not None else None
    resp = api.call_api(*api.param_serialize(method, path, query_params=query, header_params=headers, body=body))
    resp.read()
    return resp.status, json.loads(resp.data)


@pytest.mark.integration
def test_every_dry_run_value_is_checked(kube_client: client.ApiClient) -> None:
    """Repeated and empty values, and the characters Go's JSON escapes, as kube renders them."""
    for values, rendered in (([ALL, "Bogus"], '["All","Bogus"]'), ([""], '[""]'),
                             (["<&>"], '["\\u003c\\u0026\\u003e"]')):
        code, status = _call(kube_client, "POST", "/api/v1/namespaces/default/configmaps",
                             [("dryRun", v) for v in values], cm_body("c"))
        assert (code, status) == (422, _unsupported("CreateOptions", rendered))
    assert _call(kube_client, "POST", "/api/v1/namespaces/default/configmaps",
                 [("dryRun", ALL), ("dryRun", ALL)], cm_body("c"))[0] == 201
    assert client.CoreV1Api(kube_client).list_namespaced_config_map("default").items == []


@pytest.mark.integration
def test_reads_ignore_dry_run(kube_client: client.ApiClient) -> None:
    """GetOptions and ListOptions carry no dryRun: kube does not look at it on reads."""
    client.CoreV1Api(kube_client).create_namespaced_config_map("default", cm_body("c"))
    for path in ("/api/v1/namespaces/default/configmaps/c", "/api/v1/namespaces/default/configmaps"):
        assert _call(kube_client, "GET", path, [("dryRun", "Bogus")])[0] == 200
