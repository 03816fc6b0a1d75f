"""Listing: label and field selectors, limit/continue pagination, list resourceVersion."""

from __future__ import annotations

import json

import pytest
from kubernetes import client

from componentbase.client import request

pytestmark = pytest.mark.integration


@pytest.fixture
def v1(kube_client: client.ApiClient) -> client.CoreV1Api:
    api = client.CoreV1Api(kube_client)
    pods = [
        ("a", {"app": "web", "tier": "front"}, "node1", "Running", "default-scheduler"),
        ("b", {"app": "web"}, "", "Pending", "default-scheduler"),
        ("c", {"app": "db", "tier": "back"}, "node2", "Running", "other"),
        ("d", {}, "", "Pending", "other"),
    ]
    for name, labels, node, phase, scheduler in pods:
        api.create_namespaced_pod("default", {"metadata": {"name": name, "labels": labels},
                                              "spec": {"containers": [{"name": "c", "image": "i"}],
                                                       "nodeName": node or None, "schedulerName": scheduler}})
        api.patch_namespaced_pod_status(name, "default", {"status": {"phase": phase}})
    return api


def _names(pods: client.V1PodList) -> list[str]:
    return [p.metadata.name for p in pods.items]


@pytest.mark.parametrize(("selector", "expected"), [
    ("app=web", ["a", "b"]),
    ("app==web", ["a", "b"]),
    ("app!=web", ["c", "d"]),
    ("app in (db, web)", ["a", "b", "c"]),
    ("app notin (web)", ["c", "d"]),
    ("tier", ["a", "c"]),
    ("!tier", ["b", "d"]),
    ("app=web,tier", ["a"]),
    ("app in (web),!tier", ["b"]),
    ("", ["a", "b", "c", "d"]),
])
def test_label_selectors(v1: client.CoreV1Api, selector: str, expected: list[str]) -> None:
    assert _names(v1.list_namespaced_pod("default", label_selector=selector)) == expected


@pytest.mark.parametrize(("selector", "expected"), [
    ("metadata.name=b", ["b"]),
    ("metadata.name!=b", ["a", "c", "d"]),
    ("metadata.namespace==default", ["a", "b", "c", "d"]),
    ("spec.nodeName=", ["b", "d"]),
    ("spec.nodeName!=", ["a", "c"]),
    ("spec.nodeName=node2", ["c"]),
    ("spec.schedulerName=default-scheduler,spec.nodeName=", ["b"]),
    ("status.phase=Running", ["a", "c"]),
    ("status.phase!=Running", ["b", "d"]),
])
def test_field_selectors(v1: client.CoreV1Api, selector: str, expected: list[str]) -> None:
    assert _names(v1.list_pod_for_all_namespaces(field_selector=selector)) == expected


@pytest.mark.parametrize(("selector", "expected"), [
    ("app in ()", ["d"]),  # kube reads an empty set as the empty value
    ("app in (,web)", ["a", "b", "d"]),
    ("app=", ["d"]),
    ("n>6", ["b"]),  # gt and lt: integer label values only
    ("n<6", ["a"]),
    ("in in (in)", []),  # in and notin are keywords only where an operator goes
])
def test_label_selectors_as_kube_parses_them(v1: client.CoreV1Api, selector: str, expected: list[str]) -> None:
    v1.patch_namespaced_pod("d", "default", {"metadata": {"labels": {"app": "", "n": "x"}}})
    v1.patch_namespaced_pod("a", "default", {"metadata": {"labels": {"n": "5"}}})
    v1.patch_namespaced_pod("b", "default", {"metadata": {"labels": {"n": "12"}}})
    assert _names(v1.list_namespaced_pod("default", label_selector=selector)) == expected


_NAME_PART = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
              "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


@pytest.mark.parametrize(("selector", "message"), [
    ("app:web", f'unable to parse requirement: <nil>: Invalid value: "app:web": {_NAME_PART}'),
    ("app=a b", "found 'b', expected: ',' or 'end of string'"),
    ("app=web,", "found '', expected: identifier after ','"),
    ("app in web", "unable to parse requirement: found 'web' expected: '('"),
    ("app in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"),
    ("n>1x", "unable to parse requirement: values[0]: Invalid value: \"1x\": for 'Gt', 'Lt' operators, the value "
             "must be an integer"),
    ("app=" + "v" * 64, f"unable to parse requirement: values[0][app]: Invalid value: \"{'v' * 64}\": must be no "
                        "more than 63 characters"),
])
def test_a_selector_kube_cannot_parse_is_its_400(v1: client.CoreV1Api, selector: str, message: str) -> None:
    # A controller's malformed selector fails on a cluster; here too, rather than matching nothing.
    with pytest.raises(client.ApiException) as info:
        v1.list_namespaced_pod("default", label_selector=selector)
    assert info.value.status == 400
    assert json.loads(info.value.body)["message"] == message


def test_a_field_selector_term_without_an_operator_is_kubes_400(v1: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as info:
        v1.list_namespaced_pod("default", field_selector="status.phase=Running,metadata.name")
    assert info.value.status == 400
    assert json.loads(info.value.body)["message"] == \
        "invalid selector: 'status.phase=Running,metadata.name'; can't understand 'metadata.name'"


def test_bad_selector_is_400(v1: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as info:
        v1.list_namespaced_pod("default", label_selector="app in web")
    assert info.value.status == 400
    assert json.loads(info.value.body)["reason"] == "BadRequest"


@pytest.mark.parametrize(("path", "selector", "message"), [
    ("/api/v1/pods", "status.hostIP=1.2.3.4", "field label not supported: status.hostIP"),
    ("/api/v1/nodes", "metadata.namespace=x", "field label not supported: metadata.namespace"),
    ("/api/v1/namespaces/default/configmaps", "data.k=v",
     '"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"'),
    ("/apis/apps/v1/deployments", "spec.replicas=1",
     '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'),
    ("/apis/batch/v1/jobs", "status.active=1", 'field label "status.active" not supported for batchv1.Job'),
])
def test_a_field_label_the_kind_does_not_register_is_400_as_kube_says(
        kube_client: client.ApiClient, path: str, selector: str, message: str) -> None:
    # A typo in a controller's field selector fails against a real cluster: here too, not an empty list.
    for watch in ("false", "true"):
        with pytest.raises(client.ApiException) as info:
            request(kube_client, "GET", path, query=[("fieldSelector", selector), ("watch", watch)])
        assert info.value.status == 400
        assert json.loads(info.value.body)["message"] == message


def test_the_labels_kinds_register_select(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespaced_secret("default", {"metadata": {"name": "tls"}, "type": "kubernetes.io/tls",
                                            "data": {"tls.crt": "", "tls.key": ""}})
    v1.create_namespaced_secret("default", {"metadata": {"name": "plain"}})
    assert [s.metadata.name for s in v1.list_namespaced_secret("default", field_selector="type=Opaque").items] \
        == ["plain"]
    v1.create_namespaced_event("default", {"metadata": {"name": "e"}, "reason": "R", "source": {"component": "me"},
                                           "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}})
    for selector in ("source=me", "involvedObject.kind=Pod,reason=R"):  # source: the label of source.component
        assert [e.metadata.name for e in v1.list_namespaced_event("default", field_selector=selector).items] == ["e"]
    assert v1.list_namespaced_event("default", field_selector="source=other").items == []
    assert [n.metadata.name for n in v1.list_namespace(field_selector="status.phase=Active").items] \
        == sorted(n.metadata.name for n in v1.list_namespace().items)


def test_pagination(v1: client.CoreV1Api) -> None:
    first = v1.list_namespaced_pod("default", limit=3)
    assert _names(first) == ["a", "b", "c"]
    assert first.metadata._continue and first.metadata.remaining_item_count == 1
    second = v1.list_namespaced_pod("default", limit=3, _continue=first.metadata._continue)
    assert _names(second) == ["d"] and not second.metadata._continue
    assert second.metadata.resource_version == first.metadata.resource_version


def test_pagination_with_selector(v1: client.CoreV1Api) -> None:
    names, token = [], None
    while True:
        page = v1.list_namespaced_pod("default", limit=1, label_selector="app", _continue=token)
        names += _names(page)
        token = page.metadata._continue
        if not token:
            break
    assert names == ["a", "b", "c"]


def test_bad_continue_is_400(v1: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as info:
        v1.list_namespaced_pod("default", limit=1, _continue="garbage!")
    assert info.value.status == 400


def test_list_resource_version_tracks_writes(v1: client.CoreV1Api) -> None:
    before = int(v1.list_namespaced_pod("default").metadata.resource_version)
    created = v1.create_namespaced_config_map("default", {"metadata": {"name": "x"}})
    after = int(v1.list_namespaced_pod("default").metadata.resource_version)
    assert after == int(created.metadata.resource_version) > before


def test_delete_collection(v1: client.CoreV1Api) -> None:
    status = v1.delete_collection_namespaced_pod("default", label_selector="app=web", grace_period_seconds=0)
    assert status.status == "Success"
    assert _names(v1.list_namespaced_pod("default")) == ["c", "d"]


def _all_pages(list_func: object, **kw: object) -> tuple[list[str], list[int | None]]:
    names: list[str] = []
    remaining: list[int | None] = []
    token = None
    while True:
        page = list_func(_continue=token, **kw)  # type: ignore[operator]
        names += [f"{i.metadata.namespace}/{i.metadata.name}" for i in page.items]
        remaining.append(page.metadata.remaining_item_count)
        token = page.metadata._continue
        if not token:
            return names, remaining


def test_pages_across_namespaces_continue_after_the_last_item(kube_client: client.ApiClient) -> None:
    """Each page resumes right after the one before (writes to other resources in between change nothing);
    a filtered page leaves remainingItemCount out, as kube does, since only filtering the rest could count it."""
    api = client.CoreV1Api(kube_client)
    expected = []
    for ns in ("p1", "p2"):
        api.create_namespace({"metadata": {"name": ns}})
        for i in range(5):
            labels = {"keep": "yes"} if i % 2 == 0 else {}
            api.create_namespaced_config_map(ns, {"metadata": {"name": f"cm-{i}", "labels": labels}})
            if labels:
                expected.append(f"{ns}/cm-{i}")
    first = api.list_config_map_for_all_namespaces(limit=2, label_selector="keep=yes")
    api.create_namespaced_secret("p1", {"metadata": {"name": "between-pages"}})
    names, remaining = _all_pages(api.list_config_map_for_all_namespaces, limit=2, label_selector="keep=yes")
    assert names == expected and remaining == [None, None, None]
    assert [f"{i.metadata.namespace}/{i.metadata.name}" for i in first.items] == expected[:2]
    names, remaining = _all_pages(api.list_namespaced_config_map, namespace="p2", limit=2)
    assert names == [f"p2/cm-{i}" for i in range(5)] and remaining == [3, 1, None]
