"""Object lifecycle as kube-apiserver and kube-controller-manager run it: finalizers, Terminating
namespaces, graceful pod deletion and ownerReference garbage collection with its three propagations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer
from tests.testing.lifecycle_support import NS, SPEC, history, make_chain, names, owner_ref

pytestmark = pytest.mark.integration


def _status(exc: client.ApiException) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(exc.body)
    return body


def _body(resp: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(resp.data)
    return body


def _gone(read: Any, *args: Any) -> bool:
    try:
        read(*args)
    except client.ApiException as err:
        return bool(err.status == 404)
    return False


# --- finalizers and namespaces -----------------------------------------------------------------


def test_no_new_finalizer_on_a_deleting_object(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_config_map(NS, {"metadata": {"name": "c", "finalizers": ["x/y"]}})
    v1.delete_namespaced_config_map("c", NS)
    with pytest.raises(client.ApiException) as info:
        v1.patch_namespaced_config_map("c", NS, {"metadata": {"finalizers": ["x/y", "x/z"]}})
    assert info.value.status == 422
    assert _status(info.value)["message"] == (
        'ConfigMap "c" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object '
        'is being deleted, found new finalizers []string{"x/z"}')
    assert v1.read_namespaced_config_map("c", NS).metadata.finalizers == ["x/y"]
    v1.patch_namespaced_config_map("c", NS, {"metadata": {"finalizers": None}})
    assert _gone(v1.read_namespaced_config_map, "c", NS)


def test_a_namespace_stays_terminating_until_its_contents_finalizer_is_removed(v1: client.CoreV1Api) -> None:
    v1.create_namespace({"metadata": {"name": "team"}})
    v1.create_namespaced_config_map("team", {"metadata": {"name": "held", "finalizers": ["example.com/keep"]}})
    v1.create_namespaced_config_map("team", {"metadata": {"name": "plain"}})
    rv = v1.list_namespace().metadata.resource_version
    answer = _body(v1.delete_namespace("team", _preload_content=False))
    assert answer["status"]["phase"] == "Terminating" and answer["metadata"]["deletionTimestamp"]
    ns = v1.read_namespace("team")
    assert ns.status.phase == "Terminating" and ns.spec.finalizers == ["kubernetes"]
    conditions = {c.type: (c.status, c.reason, c.message) for c in ns.status.conditions}
    assert conditions["NamespaceContentRemaining"] == (
        "True", "SomeResourcesRemain", "Some resources are remaining: configmaps. has 1 resource instances")
    assert conditions["NamespaceFinalizersRemaining"] == (
        "True", "SomeFinalizersRemain",
        "Some content in the namespace has finalizers remaining: example.com/keep in 1 resource instances")
    assert names(v1.list_namespaced_config_map, "team") == ["held"]
    assert v1.read_namespaced_config_map("held", "team").metadata.deletion_timestamp is not None
    with pytest.raises(client.ApiException) as info:
        v1.create_namespaced_config_map("team", {"metadata": {"name": "late"}})
    status = _status(info.value)
    assert (info.value.status, status["reason"]) == (403, "Forbidden")
    assert status["message"] == ('configmaps "late" is forbidden: unable to create new content in namespace team '
                                 "because it is being terminated")
    assert status["details"]["causes"] == [{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                                            "message": "namespace team is being terminated"}]
    v1.patch_namespaced_config_map("held", "team", {"metadata": {"finalizers": None}})
    assert _gone(v1.read_namespace, "team")
    events = [(t, n) for t, n, _ in history(v1.list_namespace, rv)]
    assert events[0] == ("MODIFIED", "team") and events[-1] == ("DELETED", "team")
    v1.create_namespace({"metadata": {"name": "team"}})  # the name is free again, and empty
    assert names(v1.list_namespaced_config_map, "team") == []


def test_a_namespace_waits_for_the_kubelet_to_confirm_its_bound_pods(v1: client.CoreV1Api) -> None:
    v1.create_namespace({"metadata": {"name": "team"}})
    v1.create_namespaced_pod("team", {"metadata": {"name": "p"}, "spec": dict(SPEC, nodeName="n1")})
    v1.delete_namespace("team")
    pod = v1.read_namespaced_pod("p", "team")
    assert pod.metadata.deletion_timestamp is not None and pod.metadata.deletion_grace_period_seconds == 30
    assert v1.read_namespace("team").status.phase == "Terminating"
    with pytest.raises(client.ApiException) as info:  # the scheduler cannot bind into it either
        v1.create_namespaced_pod_binding("p", "team", {"metadata": {"name": "p"}, "target": {"name": "n2"}})
    assert info.value.status == 403
    v1.delete_namespaced_pod("p", "team", grace_period_seconds=0)  # the kubelet's confirmation
    assert _gone(v1.read_namespace, "team")


def test_a_namespace_finalizer_of_its_own_holds_it(v1: client.CoreV1Api) -> None:
    v1.create_namespace({"metadata": {"name": "team", "finalizers": ["example.com/ns"]}})
    v1.delete_namespace("team")
    ns = v1.read_namespace("team")
    assert ns.spec.finalizers is None and ns.metadata.finalizers == ["example.com/ns"]
    v1.patch_namespace("team", {"metadata": {"finalizers": None}})
    assert _gone(v1.read_namespace, "team")


def test_pod_grace_periods(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_pod(NS, {"metadata": {"name": "p"}, "spec": dict(SPEC, nodeName="n1")})
    first = v1.delete_namespaced_pod("p", NS, grace_period_seconds=60)
    assert first.metadata.deletion_grace_period_seconds == 60 and first.metadata.generation == 2
    again = v1.delete_namespaced_pod("p", NS, grace_period_seconds=90)  # only a shorter one counts
    assert again.metadata.deletion_grace_period_seconds == 60
    assert again.metadata.resource_version == first.metadata.resource_version
    shorter = v1.delete_namespaced_pod("p", NS, grace_period_seconds=10)
    assert shorter.metadata.deletion_grace_period_seconds == 10
    assert shorter.metadata.deletion_timestamp < first.metadata.deletion_timestamp
    v1.delete_namespaced_pod("p", NS, grace_period_seconds=0)  # the kubelet's confirmation
    assert _gone(v1.read_namespaced_pod, "p", NS)
    events = history(v1.list_namespaced_pod, shorter.metadata.resource_version, namespace=NS)
    assert [(t, m["deletionGracePeriodSeconds"]) for t, _, m in events] == [("MODIFIED", 0), ("DELETED", 0)]


def test_a_bound_pod_with_a_finalizer_waits_for_both(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_pod(NS, {"metadata": {"name": "p", "finalizers": ["x/y"]},
                                  "spec": dict(SPEC, nodeName="n1")})
    v1.delete_namespaced_pod("p", NS)
    v1.delete_namespaced_pod("p", NS, grace_period_seconds=0)
    held = v1.read_namespaced_pod("p", NS)
    assert held.metadata.deletion_grace_period_seconds == 0 and held.metadata.finalizers == ["x/y"]
    v1.patch_namespaced_pod("p", NS, {"metadata": {"finalizers": None}})
    assert _gone(v1.read_namespaced_pod, "p", NS)


# --- garbage collection ------------------------------------------------------------------------


def test_background_deletion_of_a_deployment(kube_client: client.ApiClient, v1: client.CoreV1Api) -> None:
    apps = client.AppsV1Api(kube_client)
    make_chain(kube_client)
    rv = apps.list_namespaced_replica_set(NS).metadata.resource_version
    apps.delete_namespaced_deployment("web", NS)  # apps/v1 deletes dependents in the background
    assert names(apps.list_namespaced_deployment, NS) == []
    assert names(apps.list_namespaced_replica_set, NS) == []
    assert names(v1.list_namespaced_pod, NS) == ["web-b"]  # bound: it waits for its kubelet
    assert v1.read_namespaced_pod("web-b", NS).metadata.deletion_timestamp is not None
    assert [(t, n) for t, n, _ in history(apps.list_namespaced_replica_set, rv, namespace=NS)] == [
        ("DELETED", "web-1")]
    v1.delete_namespaced_pod("web-b", NS, grace_period_seconds=0)
    assert names(v1.list_namespaced_pod, NS) == []


def test_foreground_deletion_waits_for_blocking_dependents(kube_client: client.ApiClient,
                                                            v1: client.CoreV1Api) -> None:
    apps = client.AppsV1Api(kube_client)
    make_chain(kube_client)
    rv = apps.list_namespaced_deployment(NS).metadata.resource_version
    answer = _body(apps.delete_namespaced_deployment("web", NS, propagation_policy="Foreground",
                                                     _preload_content=False))
    assert answer["metadata"]["finalizers"] == ["foregroundDeletion"] and answer["metadata"]["deletionTimestamp"]
    deploy = apps.read_namespaced_deployment("web", NS)
    rs = apps.read_namespaced_replica_set("web-1", NS)
    assert deploy.metadata.finalizers == ["foregroundDeletion"] and deploy.metadata.generation == 2
    assert rs.metadata.finalizers == ["foregroundDeletion"]  # it has dependents of its own
    assert names(v1.list_namespaced_pod, NS) == ["web-b"]
    v1.delete_namespaced_pod("web-b", NS, grace_period_seconds=0)
    assert _gone(apps.read_namespaced_replica_set, "web-1", NS)
    assert _gone(apps.read_namespaced_deployment, "web", NS)
    events = [(t, n, m.get("finalizers")) for t, n, m in history(apps.list_namespaced_deployment, rv,
                                                                   namespace=NS)]
    assert events == [("MODIFIED", "web", ["foregroundDeletion"]), ("DELETED", "web", ["foregroundDeletion"])]


def test_foreground_does_not_wait_for_non_blocking_dependents(kube_client: client.ApiClient,
                                                               v1: client.CoreV1Api) -> None:
    apps = client.AppsV1Api(kube_client)
    deploy = apps.create_namespaced_deployment(NS, {"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": SPEC}}})
    loose = dict(owner_ref(deploy, "Deployment"), blockOwnerDeletion=False)
    v1.create_namespaced_pod(NS, {"metadata": {"name": "p", "ownerReferences": [loose]},
                                  "spec": dict(SPEC, nodeName="n1")})
    apps.delete_namespaced_deployment("d", NS, propagation_policy="Foreground")
    assert _gone(apps.read_namespaced_deployment, "d", NS)
    assert v1.read_namespaced_pod("p", NS).metadata.deletion_timestamp is not None


def test_orphan_deletion_keeps_dependents_and_drops_their_references(kube_client: client.ApiClient,
                                                                      v1: client.CoreV1Api) -> None:
    apps = client.AppsV1Api(kube_client)
    _, rs = make_chain(kube_client)
    apps.delete_namespaced_deployment("web", NS, body=client.V1DeleteOptions(propagation_policy="Orphan"))
    assert _gone(apps.read_namespaced_deployment, "web", NS)
    kept = apps.read_namespaced_replica_set("web-1", NS)
    assert kept.metadata.owner_references is None and kept.metadata.deletion_timestamp is None
    assert [p.metadata.owner_references[0].uid for p in v1.list_namespaced_pod(NS).items] == [rs.metadata.uid] * 2


def test_legacy_orphan_dependents_and_resource_defaults(kube_client: client.ApiClient, v1: client.CoreV1Api) -> None:
    apps, batch = client.AppsV1Api(kube_client), client.BatchV1Api(kube_client)
    make_chain(kube_client)
    apps.delete_namespaced_deployment("web", NS, orphan_dependents=True)
    assert apps.read_namespaced_replica_set("web-1", NS).metadata.owner_references is None
    job = batch.create_namespaced_job(NS, {"metadata": {"name": "j"}, "spec": {"template": {
        "spec": dict(SPEC, restartPolicy="Never")}}})
    v1.create_namespaced_pod(NS, {"metadata": {"name": "j-1", "ownerReferences": [
        owner_ref(job, "Job", "batch/v1")]}, "spec": SPEC})
    batch.delete_namespaced_job("j", NS)  # batch/v1 Jobs orphan their pods unless told otherwise
    assert v1.read_namespaced_pod("j-1", NS).metadata.owner_references is None


@pytest.mark.parametrize(("options", "message"), [
    ({"propagationPolicy": "Sometimes"}, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported '
     'value: "Sometimes": supported values: "Foreground", "Background", "Orphan", "nil"'),
    ({"propagationPolicy": "Orphan", "orphanDependents": False}, 'DeleteOptions.meta.k8s.io "" is invalid: '
     'propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set'),
])
def test_bad_propagation_is_invalid(v1: client.CoreV1Api, options: dict[str, Any], message: str) -> None:
    v1.create_namespaced_config_map(NS, {"metadata": {"name": "c"}})
    with pytest.raises(client.ApiException) as info:
        v1.delete_namespaced_config_map("c", NS, body=options)
    assert (info.value.status, _status(info.value)["message"]) == (422, message)
    assert v1.read_namespaced_config_map("c", NS).metadata.deletion_timestamp is None


def test_dependents_of_an_owner_that_is_gone_are_collected(v1: client.CoreV1Api) -> None:
    owner = v1.create_namespaced_config_map(NS, {"metadata": {"name": "owner"}})
    stale = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "not-the-owner's-uid"}
    mine = owner_ref(owner, "ConfigMap", "v1")
    v1.create_namespaced_config_map(NS, {"metadata": {"name": "stale", "ownerReferences": [stale]}})
    v1.create_namespaced_config_map(NS, {"metadata": {"name": "both", "ownerReferences": [stale, mine]}})
    unknown = {"apiVersion": "example.com/v1", "kind": "Unserved", "name": "x", "uid": "u"}
    v1.create_namespaced_config_map(NS, {"metadata": {"name": "unknown", "ownerReferences": [unknown]}})
    assert names(v1.list_namespaced_config_map, NS) == ["both", "owner", "unknown"]
    both = v1.read_namespaced_config_map("both", NS)  # the reference to the absent owner is dropped
    assert [r.uid for r in both.metadata.owner_references] == [owner.metadata.uid]


def test_garbage_collection_can_be_switched_off() -> None:
    with LoopbackAPIServer(garbage_collection=False) as server:
        api = server.api_client()
        try:
            apps, v1 = client.AppsV1Api(api), client.CoreV1Api(api)
            make_chain(api)
            apps.delete_namespaced_deployment("web", NS, propagation_policy="Foreground")
            assert _gone(apps.read_namespaced_deployment, "web", NS)  # no finalizer was added
            assert names(apps.list_namespaced_replica_set, NS) == ["web-1"]
            assert names(v1.list_namespaced_pod, NS) == ["web-a", "web-b"]
        finally:
            api.close()


@pytest.fixture
def custom(kube_apiserver: LoopbackAPIServer, kube_client: client.ApiClient) -> Iterator[client.CustomObjectsApi]:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    client.ApiextensionsV1Api(kube_client).create_custom_resource_definition(crd)
    yield client.CustomObjectsApi(kube_client)


def test_generation_of_a_custom_resource_without_status_subresource(custom: client.CustomObjectsApi) -> None:
    body = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"a": 1}}
    custom.create_namespaced_custom_object("example.com", "v1", NS, "gadgets", body)
    patched = custom.patch_namespaced_custom_object("example.com", "v1", NS, "gadgets", "g",
                                                    {"metadata": {"labels": {"x": "y"}}})
    assert patched["metadata"]["generation"] == 1
    patched = custom.patch_namespaced_custom_object("example.com", "v1", NS, "gadgets", "g",
                                                    {"status": {"ready": True}})
    assert patched["metadata"]["generation"] == 2 and patched["status"] == {"ready": True}


def test_the_legacy_orphan_dependents_false_is_answered_202_while_the_object_stays(
        kube_client: client.ApiClient, v1: client.CoreV1Api) -> None:
    """kube's DeleteResource: 202 Accepted for orphanDependents=false when the object is not gone yet, else 200."""
    v1.create_namespaced_config_map(NS, {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}})
    v1.create_namespaced_config_map(NS, {"metadata": {"name": "free"}})
    held = v1.delete_namespaced_config_map("held", NS, orphan_dependents=False, _preload_content=False)
    assert held.status == 202 and _body(held)["metadata"]["deletionTimestamp"]
    assert v1.delete_namespaced_config_map("free", NS, orphan_dependents=False, _preload_content=False).status == 200
    v1.create_namespaced_config_map(NS, {"metadata": {"name": "held2", "finalizers": ["example.com/hold"]}})
    assert v1.delete_namespaced_config_map("held2", NS, _preload_content=False).status == 200  # not asked: 200
    for name in ("held", "held2"):
        v1.patch_namespaced_config_map(name, NS, {"metadata": {"finalizers": None}})
