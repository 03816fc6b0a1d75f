"""CRUD, conflicts, errors and the lifecycle of the loopback server, through the official client."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import urllib.request
from typing import Any

import pytest
from kubernetes import client, config

from componentbase.testing import LoopbackAPIServer


def _pod(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def _error(exc: client.ApiException) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(exc.body)
    return body


@pytest.mark.process
def test_importing_testing_does_not_import_kubernetes() -> None:
    code = ("import sys, componentbase.testing, componentbase.testing.pytest_plugin;"
            "print('kubernetes' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    assert out.stdout.strip() == "False"


@pytest.mark.integration
def test_context_manager_writes_kubeconfig_and_stops() -> None:
    with LoopbackAPIServer() as server:
        path = server.kubeconfig_path
        assert server.url.startswith("http://127.0.0.1:")
        cfg = client.Configuration()
        config.load_kube_config(config_file=path, client_configuration=cfg)
        assert cfg.host == server.url
        with client.ApiClient(cfg) as api:
            names = {ns.metadata.name for ns in client.CoreV1Api(api).list_namespace().items}
        assert names == {"default", "kube-system", "kube-public", "kube-node-lease"}
        url = server.url
    assert not os.path.exists(path)
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "/version", timeout=2)


@pytest.mark.integration
def test_kubeconfig_path_given(tmp_path: Any) -> None:
    path = tmp_path / "kc.yaml"
    with LoopbackAPIServer(kubeconfig_path=path) as server:
        assert server.kubeconfig_path == str(path)
        with config.new_client_from_config(config_file=str(path)) as api:
            assert client.VersionApi(api).get_code().major == "1"


@pytest.mark.integration
def test_lease_create_get_update_conflict(kube_client: client.ApiClient) -> None:
    leases = client.CoordinationV1Api(kube_client)
    now = datetime.datetime.now(datetime.UTC)
    body = client.V1Lease(metadata=client.V1ObjectMeta(name="leader"),
                          spec=client.V1LeaseSpec(holder_identity="a", lease_duration_seconds=15,
                                                  acquire_time=now, renew_time=now, lease_transitions=0))
    created = leases.create_namespaced_lease("kube-system", body)
    assert created.metadata.uid and created.metadata.creation_timestamp
    assert created.metadata.generation == 1
    raw = leases.read_namespaced_lease("leader", "kube-system", _preload_content=False)
    assert json.loads(raw.data)["spec"]["renewTime"] == now.isoformat()  # MicroTime kept verbatim
    got = leases.read_namespaced_lease("leader", "kube-system")
    got.spec.holder_identity = "b"
    updated = leases.replace_namespaced_lease("leader", "kube-system", got)
    assert updated.spec.holder_identity == "b"
    assert int(updated.metadata.resource_version) > int(got.metadata.resource_version)
    assert updated.metadata.generation == 2
    with pytest.raises(client.ApiException) as info:
        leases.replace_namespaced_lease("leader", "kube-system", got)  # stale resourceVersion
    assert info.value.status == 409
    status = _error(info.value)
    assert status["kind"] == "Status" and status["reason"] == "Conflict"
    assert status["message"] == (
        'Operation cannot be fulfilled on leases.coordination.k8s.io "leader": the object has been modified; '
        "please apply your changes to the latest version and try again")


@pytest.mark.integration
def test_not_found_and_already_exists(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    with pytest.raises(client.ApiException) as info:
        v1.read_namespaced_pod("x", "default")
    assert info.value.status == 404
    assert _error(info.value)["message"] == 'pods "x" not found'
    assert _error(info.value)["reason"] == "NotFound"
    v1.create_namespaced_pod("default", _pod("x"))
    with pytest.raises(client.ApiException) as info:
        v1.create_namespaced_pod("default", _pod("x"))
    assert info.value.status == 409 and _error(info.value)["reason"] == "AlreadyExists"
    with pytest.raises(client.ApiException) as info:
        client.CoordinationV1Api(kube_client).read_namespaced_lease("nope", "default")
    assert _error(info.value)["message"] == 'leases.coordination.k8s.io "nope" not found'


@pytest.mark.integration
def test_a_put_creates_only_the_kinds_kube_lets_it(kube_client: client.ApiClient) -> None:
    # kube's AllowCreateOnUpdate: Leases, Services, Endpoints, Events, ServiceAccounts and RBAC objects yes,
    # ConfigMaps, Nodes and most others 404.
    leases = client.CoordinationV1Api(kube_client)
    assert leases.replace_namespaced_lease("l", "default", {"metadata": {"name": "l"}},
                                           dry_run="All").metadata.uid  # dry: not stored
    with pytest.raises(client.ApiException) as info:
        leases.read_namespaced_lease("l", "default")
    assert info.value.status == 404
    body = {"metadata": {"name": "l", "resourceVersion": "99"}, "spec": {"holderIdentity": "a"}}
    made = leases.replace_namespaced_lease("l", "default", body)
    assert made.spec.holder_identity == leases.read_namespaced_lease("l", "default").spec.holder_identity == "a"
    with pytest.raises(client.ApiException) as info:
        client.CoreV1Api(kube_client).replace_namespaced_config_map("c", "default", {"metadata": {"name": "c"}})
    assert (info.value.status, _error(info.value)["message"]) == (404, 'configmaps "c" not found')


@pytest.mark.integration
def test_a_create_carrying_a_resource_version_is_refused_as_kubes_storage_does(kube_client: client.ApiClient) -> None:
    # A controller re-creating an object it read (its resourceVersion still set) fails on a cluster: here too.
    v1 = client.CoreV1Api(kube_client)
    with pytest.raises(client.ApiException) as info:
        v1.create_namespaced_config_map("default", {"metadata": {"name": "again", "resourceVersion": "12"}})
    assert info.value.status == 500
    assert _error(info.value) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                  "message": "resourceVersion should not be set on objects to be created",
                                  "code": 500}
    for unset in ("", "0"):  # kube's storage reads these as no resourceVersion
        body = {"metadata": {"name": f"c{unset}", "resourceVersion": unset}}
        created = v1.create_namespaced_config_map("default", body)
        assert int(created.metadata.resource_version) > 0


@pytest.mark.integration
def test_missing_namespace_is_404(kube_client: client.ApiClient) -> None:
    with pytest.raises(client.ApiException) as info:
        client.CoreV1Api(kube_client).create_namespaced_config_map("ghost", {"metadata": {"name": "a"}})
    assert info.value.status == 404
    assert _error(info.value)["message"] == 'namespaces "ghost" not found'


@pytest.mark.integration
def test_generate_name_and_invalid(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    cm = v1.create_namespaced_config_map("default", {"metadata": {"generateName": "cfg-"}})
    assert cm.metadata.name.startswith("cfg-") and len(cm.metadata.name) == 9
    with pytest.raises(client.ApiException) as info:
        v1.create_namespaced_config_map("default", {"metadata": {}, "data": {}})
    assert info.value.status == 422 and _error(info.value)["reason"] == "Invalid"


@pytest.mark.integration
@pytest.mark.parametrize("kind", ["configmaps", "secrets", "services", "endpoints", "events"])
def test_generic_crud(kube_client: client.ApiClient, kind: str) -> None:
    v1 = client.CoreV1Api(kube_client)
    create = getattr(v1, f"create_namespaced_{_singular(kind)}")
    read = getattr(v1, f"read_namespaced_{_singular(kind)}")
    delete = getattr(v1, f"delete_namespaced_{_singular(kind)}")
    lister = getattr(v1, f"list_namespaced_{_singular(kind)}")
    body: dict[str, Any] = {"metadata": {"name": "thing"}}
    if kind == "events":
        body |= {"involvedObject": {"kind": "Pod", "name": "p"}, "reason": "Test", "message": "m"}
    if kind == "services":
        body |= {"spec": {"ports": [{"port": 80}]}}  # kube requires ports of a service with a cluster IP
    create("default", body)
    assert read("thing", "default").metadata.name == "thing"
    bootstrapped = ["kubernetes"] if kind in ("services", "endpoints") else []  # the API server's own Service
    assert sorted(o.metadata.name for o in lister("default").items) == [*bootstrapped, "thing"]
    delete("thing", "default")
    with pytest.raises(client.ApiException) as info:
        read("thing", "default")
    assert info.value.status == 404


def _singular(kind: str) -> str:
    return {"configmaps": "config_map", "secrets": "secret", "services": "service",
            "endpoints": "endpoints", "events": "event"}[kind]


@pytest.mark.integration
def test_resource_versions_increase_across_resources(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    a = v1.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    b = client.CoordinationV1Api(kube_client).create_namespaced_lease("default", {"metadata": {"name": "b"}})
    listed = v1.list_namespaced_config_map("default")
    assert int(a.metadata.resource_version) < int(b.metadata.resource_version)
    assert int(listed.metadata.resource_version) >= int(b.metadata.resource_version)


@pytest.mark.integration
def test_all_namespaces_list(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespaced_pod("default", _pod("a"))
    v1.create_namespaced_pod("kube-system", _pod("b"))
    pods = v1.list_pod_for_all_namespaces().items
    assert [(p.metadata.namespace, p.metadata.name) for p in pods] == [("default", "a"), ("kube-system", "b")]


@pytest.mark.integration
def test_nodes_cluster_scoped(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    node = v1.create_node({"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "4"}}})
    assert node.metadata.namespace is None
    assert v1.read_node("n1").status.capacity == {"cpu": "4"}


@pytest.mark.integration
def test_events_both_groups_with_client_datetimes(kube_client: client.ApiClient) -> None:
    """The client sends datetimes with isoformat(); MicroTime fields come back as sent."""
    now = datetime.datetime.now(datetime.UTC)
    core = client.CoreV1Api(kube_client)
    ev = core.create_namespaced_event("default", client.CoreV1Event(
        metadata=client.V1ObjectMeta(name="e1"), involved_object=client.V1ObjectReference(kind="Pod", name="p"),
        reason="Scheduled", message="ok", first_timestamp=now, last_timestamp=now, event_time=now, count=1))
    assert ev.last_timestamp == now and ev.event_time == now
    events = client.EventsV1Api(kube_client)
    new = events.create_namespaced_event("default", client.EventsV1Event(
        metadata=client.V1ObjectMeta(name="e2"), event_time=now.replace(microsecond=0),
        reporting_controller="x/y", reporting_instance="i", action="Bind", reason="Scheduled",
        regarding=client.V1ObjectReference(kind="Pod", name="p"), note="hi", type="Normal"))
    assert new.event_time == now.replace(microsecond=0)
    # one storage, as in kube: each API sees the other's events, in its own shape
    seen = {e.metadata.name: e for e in events.list_event_for_all_namespaces().items}
    assert set(seen) == {"e1", "e2"} and seen["e1"].note == "ok" and seen["e1"].regarding.name == "p"
    assert core.read_namespaced_event("e2", "default").message == "hi"
    raw = core.read_namespaced_event("e1", "default", _preload_content=False)
    assert json.loads(raw.data)["eventTime"] == now.isoformat()


@pytest.mark.integration
@pytest.mark.parametrize("stamp", ["2024-05-01T10:00:00Z", "2024-05-01T10:00:00.5Z",
                                   "2024-05-01T10:00:00+00:00", "2024-05-01T10:00:00.123456+00:00"])
def test_lease_micro_time_formats(kube_apiserver: LoopbackAPIServer, kube_client: client.ApiClient,
                                  stamp: str) -> None:
    body = json.dumps({"metadata": {"name": "l"}, "spec": {"renewTime": stamp}}).encode()
    req = urllib.request.Request(kube_apiserver.url + "/apis/coordination.k8s.io/v1/namespaces/default/leases",
                                 data=body, headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 201
    leases = client.CoordinationV1Api(kube_client)
    raw = leases.read_namespaced_lease("l", "default", _preload_content=False)
    assert json.loads(raw.data)["spec"]["renewTime"] == stamp
    assert leases.read_namespaced_lease("l", "default").spec.renew_time.year == 2024


@pytest.mark.integration
def test_session_fixture_is_shared(kube_apiserver_session: LoopbackAPIServer) -> None:
    with kube_apiserver_session.api_client() as api:
        assert client.CoreV1Api(api).read_namespace("default").status.phase == "Active"


@pytest.mark.integration
def test_request_counts_by_verb_and_resource(kube_apiserver: LoopbackAPIServer, kube_client: Any) -> None:
    core = client.CoreV1Api(kube_client)
    core.list_namespace()
    core.list_namespaced_pod("default")
    core.list_namespaced_pod("kube-system")
    counts = kube_apiserver.request_counts()
    assert counts[("list", "pods")] == 2 and counts[("list", "namespaces")] == 1
