"""``ObjectClient``'s verbs through the official client against the loopback server: reads with selectors and
paging, update conflicts, the three patch types, server-side apply and its conflicts, deletes, status writes,
dry runs, ``create_or_update`` / ``create_or_patch``, and the Manager's fence refusing all of these writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from componentbase.client import (
    Conflict,
    FieldConflict,
    NotLeader,
    ObjectClient,
    OperationResult,
    describe,
    is_conflict,
)
from componentbase.componentconfig import LeaderElectionConfiguration
from componentbase.controller import Manager
from componentbase.testing import LoopbackAPIServer

pytestmark = pytest.mark.integration

#: A custom resource of the tests' own (the widgets example's CRD changes with the example): a status
#: subresource with a phase, and a spec that is validated.
CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties: {replicas: {type: integer, minimum: 0}}
            status:
              type: object
              properties: {phase: {type: string}, observedGeneration: {type: integer}}
"""
WRITES = ("create", "update", "patch", "delete", "deletecollection")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackAPIServer]:
    """One server for the module: each test works on objects of its own names."""
    crd = tmp_path_factory.mktemp("crds") / "widgets.yaml"
    crd.write_text(CRD)
    with LoopbackAPIServer(crd_dirs=[crd]) as s:
        yield s


@pytest.fixture(scope="module")
def api(server: LoopbackAPIServer) -> Iterator[Any]:
    client = server.api_client()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def written() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def objects(api: Any, written: list[dict[str, Any]]) -> ObjectClient:
    """A client whose read-your-own-writes hook records what it is handed."""
    return ObjectClient(api, on_write=written.append)


def cm(name: str, namespace: str = "default", labels: dict[str, str] | None = None, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}}, "data": data}


def widget(name: str, replicas: int = 1) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas}}


def _writes(server: LoopbackAPIServer) -> int:
    return sum(n for (verb, _), n in server.request_counts().items() if verb in WRITES)


def _message(err: ApiException) -> str:
    return str(json.loads(err.body)["message"])


def test_list_follows_continue_filters_by_selectors_and_items_carry_their_kind(
        server: LoopbackAPIServer, objects: ObjectClient) -> None:
    objects.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "paging"}})
    for i in range(5):
        objects.create(cm(f"page-{i}", labels={"app": "pager", "n": str(i)}))
    objects.create(cm("page-other", labels={"app": "other"}))
    objects.create(cm("page-elsewhere", "paging", labels={"app": "pager"}))
    lists = server.request_counts()[("list", "configmaps")]
    paged = objects.list("v1", "ConfigMap", "default", label_selector={"app": "pager"}, limit=2)
    assert [o["metadata"]["name"] for o in paged] == [f"page-{i}" for i in range(5)]
    assert server.request_counts()[("list", "configmaps")] - lists == 3, "pages of 2, 2 and 1"
    assert {(o["apiVersion"], o["kind"]) for o in paged} == {("v1", "ConfigMap")}
    everywhere = objects.list("v1", "ConfigMap", label_selector="app=pager")
    assert {o["metadata"]["namespace"] for o in everywhere} == {"default", "paging"}
    assert [o["metadata"]["name"] for o in objects.list("v1", "ConfigMap", "default", label_selector="app=pager,n>2",
                                                        field_selector="metadata.name!=page-4")] == ["page-3"]
    first = next(objects.iter_list("v1", "ConfigMap", "default", label_selector="app=pager", limit=2))
    assert first["metadata"]["name"] == "page-0"
    assert objects.get("v1", "ConfigMap", "page-0", "default")["metadata"]["labels"]["n"] == "0"


def test_a_namespaced_object_without_a_namespace_is_refused_naming_the_field(objects: ObjectClient) -> None:
    """The server would answer the path without a namespace with 404 'the server could not find the
    requested resource', which names neither the object nor what is missing."""
    with pytest.raises(ValueError, match=r"^GET of a ConfigMap needs metadata\.namespace: the kind is namespaced$"):
        objects.get("v1", "ConfigMap", "kube-root-ca.crt")
    with pytest.raises(ValueError, match=r"^POST of a Widget needs metadata\.namespace: the kind is namespaced$"):
        objects.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
    assert objects.get("v1", "Namespace", "default")["metadata"]["name"] == "default"  # cluster-scoped: none


def test_update_puts_the_object_and_a_stale_resource_version_is_a_conflict(objects: ObjectClient) -> None:
    created = objects.create(cm("upd", greeting="hi"))
    updated = objects.update({**created, "data": {"greeting": "hello"}})
    assert updated["data"] == {"greeting": "hello"}
    assert updated["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    with pytest.raises(Conflict) as err:
        objects.update({**created, "data": {"greeting": "stale"}})
    assert str(err.value) == ('Operation cannot be fulfilled on configmaps "upd": the object has been modified; '
                              'please apply your changes to the latest version and try again')
    assert is_conflict(err.value) and err.value.status == 409 and err.value.fields == ()
    assert isinstance(err.value, ApiException), "code catching the official client's errors still catches it"
    assert isinstance(err.value.__cause__, ApiException)
    assert describe(err.value).summary.startswith("409 Conflict: Operation cannot be fulfilled")
    assert objects.get("v1", "ConfigMap", "upd", "default")["data"] == {"greeting": "hello"}


def test_merge_json_and_strategic_patches_and_strategic_refused_for_a_custom_resource(
        objects: ObjectClient) -> None:
    created = objects.create(cm("pat", a="1", b="2"))
    assert objects.patch(created, {"data": {"a": None, "c": "3"}})["data"] == {"b": "2", "c": "3"}
    ops = [{"op": "replace", "path": "/data/b", "value": "20"}, {"op": "remove", "path": "/data/c"}]
    assert objects.patch(created, ops, patch_type="json")["data"] == {"b": "20"}
    assert objects.patch(created, {"data": {"d": "4"}}, patch_type="strategic")["data"] == {"b": "20", "d": "4"}
    with pytest.raises(Conflict):
        objects.patch(created, {"metadata": {"resourceVersion": created["metadata"]["resourceVersion"]}})
    w = objects.create(widget("pat-w"))
    with pytest.raises(ApiException) as err:
        objects.patch(w, {"spec": {"replicas": 2}}, patch_type="strategic")
    assert err.value.status == 415
    assert _message(err.value) == ("the body of the request was in an unknown format - accepted media types include: "
                                   "application/json-patch+json, application/merge-patch+json, "
                                   "application/apply-patch+yaml")
    with pytest.raises(ValueError, match="patch_type 'apply': must be one of merge, json, strategic"):
        objects.patch(w, {}, patch_type="apply")
    with pytest.raises(TypeError, match="a json patch is a list of operations, not a dict"):
        objects.patch(w, {"spec": {}}, patch_type="json")


def test_apply_owns_fields_and_a_conflict_names_the_managers_and_fields_on_one_line(objects: ObjectClient) -> None:
    mine = objects.apply(cm("ssa", x="1"), field_manager="mine")
    assert mine["data"] == {"x": "1"}
    assert [(e["manager"], e["operation"]) for e in mine["metadata"]["managedFields"]] == [("mine", "Apply")]
    objects.patch(mine, {"data": {"y": "2"}}, field_manager="kubectl")
    with pytest.raises(Conflict) as err:
        objects.apply(cm("ssa", x="1", y="3"), field_manager="mine")
    assert str(err.value) == 'Apply failed with 1 conflict: conflict with "kubectl" using v1: .data.y'
    assert err.value.fields == (FieldConflict('"kubectl" using v1', ".data.y"),)
    with pytest.raises(Conflict) as err:
        objects.apply(cm("ssa", x="9", y="9"), field_manager="theirs")
    assert str(err.value) == ('Apply failed with 2 conflicts: conflicts with "kubectl" using v1: .data.y; '
                              'conflicts with "mine": .data.x')
    assert "\n" not in describe(err.value).summary
    forced = objects.apply(cm("ssa", x="9", y="9"), field_manager="theirs", force=True)
    assert forced["data"] == {"x": "9", "y": "9"}
    owners = {e["manager"]: e for e in forced["metadata"]["managedFields"]}
    assert "f:x" in json.dumps(owners["theirs"]["fieldsV1"]) and "f:x" not in json.dumps(owners["mine"]["fieldsV1"])
    with pytest.raises(ValueError, match="apply needs a field_manager"):
        objects.apply(cm("ssa"), field_manager="")


def test_status_is_written_through_its_subresource_by_update_patch_and_apply(objects: ObjectClient) -> None:
    w = objects.create(widget("st"))
    updated = objects.update({**w, "spec": {"replicas": 50}, "status": {"phase": "Pending"}}, subresource="status")
    assert updated["status"] == {"phase": "Pending"} and updated["spec"]["replicas"] == 1, "spec ignored via status"
    patched = objects.patch(updated, {"status": {"observedGeneration": 1}}, subresource="status")
    assert patched["status"] == {"phase": "Pending", "observedGeneration": 1}
    applied = objects.apply({**widget("st"), "status": {"phase": "Ready"}}, field_manager="st-ctl",
                            subresource="status", force=True)
    assert applied["status"]["phase"] == "Ready"
    entry = next(e for e in applied["metadata"]["managedFields"] if e["manager"] == "st-ctl")
    assert entry["subresource"] == "status"


def test_delete_with_preconditions_propagation_and_grace(server: LoopbackAPIServer, objects: ObjectClient) -> None:
    created = objects.create(cm("del"))
    with pytest.raises(Conflict, match="Precondition failed: UID in precondition: nope"):
        objects.delete(created, uid="nope")
    held = objects.create({**cm("del-held"), "metadata": {**cm("del-held")["metadata"], "finalizers": ["x/y"]}})
    answer = objects.delete(held, propagation_policy="Foreground", uid=held["metadata"]["uid"],
                            resource_version=held["metadata"]["resourceVersion"])
    assert answer["metadata"]["deletionTimestamp"]
    assert answer["metadata"]["finalizers"] == ["x/y", "foregroundDeletion"]
    objects.delete(created, uid=created["metadata"]["uid"])
    with pytest.raises(ApiException) as err:
        objects.get("v1", "ConfigMap", "del", "default")
    assert err.value.status == 404
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "del-pod", "namespace": "default"},
           "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]}}
    objects.create(pod)
    assert objects.delete(pod, grace_period_seconds=7)["metadata"]["deletionGracePeriodSeconds"] == 7
    for name in ("a", "b", "keep"):
        objects.create(cm(f"doomed-{name}", labels={"doomed": str(name != "keep").lower()}))
    assert objects.delete_all_of("v1", "ConfigMap", "default", label_selector={"doomed": "true"}) is None
    left = objects.list("v1", "ConfigMap", "default", label_selector="doomed")
    assert [o["metadata"]["name"] for o in left] == ["doomed-keep"]


def test_a_dry_run_stores_nothing_and_is_not_recorded_as_a_write(
        objects: ObjectClient, written: list[dict[str, Any]]) -> None:
    assert objects.create(cm("dry", k="v"), dry_run=True)["metadata"]["name"] == "dry"
    with pytest.raises(ApiException) as err:
        objects.get("v1", "ConfigMap", "dry", "default")
    assert err.value.status == 404
    live = objects.create(cm("dry", k="v"))
    written.clear()
    objects.update({**live, "data": {"k": "updated"}}, dry_run=True)
    objects.patch(live, {"data": {"k": "patched"}}, dry_run=True)
    objects.patch(live, [{"op": "add", "path": "/data/j", "value": "1"}], patch_type="json", dry_run=True)
    objects.apply(cm("dry", k="applied"), field_manager="dry", force=True, dry_run=True)
    objects.create_or_update(cm("dry"), lambda o: o["data"].update(k="cou"), dry_run=True)
    objects.create_or_patch(cm("dry"), lambda o: o["data"].update(k="cop"), dry_run=True)
    objects.delete(live, dry_run=True)
    objects.delete_all_of("v1", "ConfigMap", "default", field_selector="metadata.name=dry", dry_run=True)
    assert objects.get("v1", "ConfigMap", "dry", "default") == live
    assert written == [], "the watch never brings a dry run back: read-your-own-writes must not wait for it"


def test_create_or_update_creates_updates_or_leaves_alone_with_one_write_each(
        server: LoopbackAPIServer, objects: ObjectClient, written: list[dict[str, Any]]) -> None:
    def greet(obj: dict[str, Any]) -> None:
        obj.setdefault("data", {})["greeting"] = "hello"

    before = _writes(server)
    obj, result = objects.create_or_update(cm("cou"), greet)
    assert (result, obj["data"], _writes(server) - before, len(written)) == (OperationResult.CREATED,
                                                                            {"greeting": "hello"}, 1, 1)
    obj, result = objects.create_or_update(cm("cou"), greet)
    assert (result, _writes(server) - before, len(written)) == ("unchanged", 1, 1)
    obj, result = objects.create_or_update(cm("cou"), lambda o: o["data"].update(greeting="bye"))
    assert (result, obj["data"], _writes(server) - before, len(written)) == ("updated", {"greeting": "bye"}, 2, 2)
    assert written[-1]["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
    with pytest.raises(ValueError, match=r"^MutateFn cannot mutate object name and/or object namespace$"):
        objects.create_or_update(cm("cou"), lambda o: o["metadata"].update(name="elsewhere"))
    assert _writes(server) - before == 2


def test_create_or_patch_patches_what_changed_and_writes_status_through_its_subresource(
        server: LoopbackAPIServer, objects: ObjectClient) -> None:
    _, result = objects.create_or_patch(widget("cop"), lambda o: None)
    assert result == OperationResult.CREATED
    before = _writes(server)
    obj, result = objects.create_or_patch(widget("cop"), lambda o: o["spec"].update(replicas=4))
    assert (result, obj["spec"]["replicas"], _writes(server) - before) == ("updated", 4, 1)
    obj, result = objects.create_or_patch(widget("cop"), lambda o: o.update(status={"phase": "Ready"}))
    assert (result, obj["status"], _writes(server) - before) == ("updatedStatusOnly", {"phase": "Ready"}, 2)

    def both(o: dict[str, Any]) -> None:
        o["spec"]["replicas"] = 5
        o["status"]["phase"] = "Scaling"

    obj, result = objects.create_or_patch(widget("cop"), both)
    assert (result, obj["spec"]["replicas"], obj["status"]["phase"]) == ("updatedStatus", 5, "Scaling")
    obj, result = objects.create_or_update(widget("cop"), lambda o: o["status"].update(phase="Done"))
    assert (result, obj["status"]["phase"], _writes(server) - before) == ("updatedStatusOnly", "Done", 5)
    _, result = objects.create_or_patch(widget("cop"), lambda o: o["spec"].update(replicas=5))
    assert (result, _writes(server) - before) == ("unchanged", 5)


def test_the_managers_fenced_client_refuses_every_write_before_sending_it(server: LoopbackAPIServer) -> None:
    election = LeaderElectionConfiguration(leader_elect=True, resource_name="objects-test",
                                           resource_namespace="default")
    mgr = Manager(server.api_client(), leader_election=election)
    mgr.fence.close_after(lambda: float("-inf"))  # not leading
    objects = mgr.objects
    ObjectClient(server.api_client()).create(cm("fenced", k="v"))  # through a client without the fence
    live = objects.get("v1", "ConfigMap", "fenced", "default")  # reads still go out
    before = _writes(server)
    writes = [
        lambda: objects.create(cm("fenced-new")),
        lambda: objects.update(live),
        lambda: objects.patch(live, {"data": {"k": "w"}}),
        lambda: objects.update(live, subresource="status"),
        lambda: objects.apply(cm("fenced", k="w"), field_manager="f"),
        lambda: objects.delete(live),
        lambda: objects.delete_all_of("v1", "ConfigMap", "default"),
        lambda: objects.create_or_update(cm("fenced"), lambda o: o["data"].update(k="w")),
        lambda: objects.create_or_patch(cm("fenced"), lambda o: o["data"].update(k="w")),
    ]
    for write in writes:
        with pytest.raises(NotLeader, match="this replica is not the leader"):
            write()
    assert _writes(server) == before
    assert objects.list("v1", "ConfigMap", "default", field_selector="metadata.name=fenced") == [live]
