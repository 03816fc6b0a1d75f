"""Discovery documents, checked through the typed APIs and the dynamic client that relies on them."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from kubernetes import client, dynamic

from componentbase.testing import LoopbackAPIServer

pytestmark = pytest.mark.integration


def test_version(kube_client: client.ApiClient) -> None:
    info = client.VersionApi(kube_client).get_code()
    assert info.major == "1" and info.git_version.startswith("v1.")


def test_api_and_apis(kube_client: client.ApiClient) -> None:
    assert client.CoreApi(kube_client).get_api_versions().versions == ["v1"]
    groups = {g.name: g.preferred_version.version for g in client.ApisApi(kube_client).get_api_versions().groups}
    assert {"apps": "v1", "batch": "v1", "autoscaling": "v2", "coordination.k8s.io": "v1", "events.k8s.io": "v1",
            "authentication.k8s.io": "v1", "authorization.k8s.io": "v1", "apiextensions.k8s.io": "v1",
            "rbac.authorization.k8s.io": "v1"}.items() <= groups.items()
    group = client.CoordinationApi(kube_client).get_api_group()
    assert group.name == "coordination.k8s.io"


def test_core_resource_list(kube_client: client.ApiClient) -> None:
    resources = {r.name: r for r in client.CoreV1Api(kube_client).get_api_resources().resources}
    assert {"namespaces", "nodes", "nodes/status", "pods", "pods/status", "pods/binding", "events", "configmaps",
            "secrets", "services", "endpoints"} <= set(resources)
    pods = resources["pods"]
    assert pods.namespaced and pods.kind == "Pod" and pods.short_names == ["po"]
    assert {"create", "get", "list", "watch", "update", "patch", "delete"} <= set(pods.verbs)
    assert resources["nodes"].namespaced is False
    assert resources["pods/binding"].verbs == ["create"]


def test_group_resource_lists(kube_client: client.ApiClient) -> None:
    leases = client.CoordinationV1Api(kube_client).get_api_resources()
    assert leases.group_version == "coordination.k8s.io/v1"
    assert [(r.name, r.kind, r.namespaced) for r in leases.resources] == [("leases", "Lease", True)]
    reviews = client.AuthorizationV1Api(kube_client).get_api_resources().resources
    assert [(r.name, r.namespaced, r.verbs) for r in reviews] == [
        ("localsubjectaccessreviews", True, ["create"]), ("selfsubjectaccessreviews", False, ["create"]),
        ("selfsubjectrulesreviews", False, ["create"]), ("subjectaccessreviews", False, ["create"])]


def test_dynamic_client_finds_resources(kube_client: client.ApiClient) -> None:
    dyn = dynamic.DynamicClient(kube_client)
    leases = dyn.resources.get(api_version="coordination.k8s.io/v1", kind="Lease")
    leases.create(body={"metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}}, namespace="default")
    got = leases.get(name="l", namespace="default")
    assert got.spec.holderIdentity == "me"
    assert dyn.resources.get(api_version="v1", kind="Pod").namespaced


@pytest.mark.parametrize(("method", "path", "code"), [
    ("GET", "/nothing", 404),
    ("GET", "/api/v2/pods", 404),
    ("GET", "/apis/example.com/v1/widgets", 404),
    ("GET", "/apis/apps/v2/deployments", 404),
    ("GET", "/apis/apps/v1/widgets", 404),
    ("GET", "/api/v1/widgets", 404),
    ("PUT", "/api/v1/namespaces/default/pods", 405),
    ("POST", "/api/v1/namespaces/default/pods/x", 405),
    ("GET", "/apis/authorization.k8s.io/v1/subjectaccessreviews", 405),
    ("POST", "/version", 405),
])
def test_unknown_paths(kube_apiserver: LoopbackAPIServer, method: str, path: str, code: int) -> None:
    req = urllib.request.Request(kube_apiserver.url + path, data=b"{}" if method != "GET" else None,
                                 method=method)
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=10)
    assert info.value.code == code
    status = json.loads(info.value.read())
    assert status["kind"] == "Status" and status["code"] == code


def test_healthz(kube_apiserver: LoopbackAPIServer) -> None:
    with urllib.request.urlopen(kube_apiserver.url + "/healthz", timeout=10) as resp:
        assert resp.read() == b"ok"
