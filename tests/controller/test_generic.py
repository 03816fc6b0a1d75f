"""Any served kind, by apiVersion and kind: discovery, informers and object calls through the official client."""

from __future__ import annotations

import io
import threading

import pytest
from kubernetes.client.exceptions import ApiException

from componentbase.client import ObjectClient, UnknownKind
from componentbase.informers import InformerFactory
from componentbase.testing import LoopbackAPIServer, eventually
from tests.controller.helpers import configmap

pytestmark = pytest.mark.integration


def test_an_informer_for_a_kind_lists_and_watches_with_its_selector(kube_apiserver: LoopbackAPIServer) -> None:
    api = kube_apiserver.api_client()
    objects = ObjectClient(api)
    objects.create(configmap("before", hello="true"))
    objects.create(configmap("other", hello="false"))
    factory = InformerFactory(api)
    cms = factory.for_kind("v1", "ConfigMap", label_selector="hello=true")
    assert factory.for_kind("v1", "ConfigMap", label_selector="hello=true") is cms  # shared
    stop = threading.Event()
    try:
        factory.start(stop)
        assert factory.wait_for_cache_sync(10)
        assert [o["metadata"]["name"] for o in cms.list()] == ["before"]
        assert cms.get("default/before")["kind"] == "ConfigMap"  # list items carry their kind
        objects.create(configmap("after", hello="true"))
        eventually(lambda: cms.get("default/after"), what="the watch to deliver the new ConfigMap")
    finally:
        stop.set()
        factory.join(10)


def test_a_controller_naming_an_unknown_kind_exits_1_with_that_one_line(kube_apiserver: LoopbackAPIServer) -> None:
    from componentbase import controller_command
    from componentbase.controller import Manager
    from componentbase.serving import configz

    def setup(mgr: Manager) -> None:
        mgr.informer("v1", "Configmap")

    cmd = controller_command("typo", setup)
    cmd.configz_registry = configz.Registry()
    err = io.StringIO()
    args = [f"--kubeconfig={kube_apiserver.kubeconfig_path}", "--leader-elect=false", "--secure-port=0"]
    assert cmd.execute(args, stdout=io.StringIO(), stderr=err) == 1
    assert "Traceback" not in err.getvalue()
    assert err.getvalue().splitlines()[-1].endswith(
        '] command failed: no matches for kind "Configmap" in version "v1"; did you mean ConfigMap?')


def test_cluster_scoped_kinds_and_namespaces(kube_apiserver: LoopbackAPIServer) -> None:
    api = kube_apiserver.api_client()
    factory = InformerFactory(api)
    namespaces = factory.for_kind("v1", "Namespace")
    stop = threading.Event()
    try:
        factory.start(stop)
        assert factory.wait_for_cache_sync(10)
        assert namespaces.get("default") is not None
    finally:
        stop.set()
        factory.join(10)
    with pytest.raises(ValueError, match="namespaces are cluster-scoped"):
        factory.for_kind("v1", "Namespace", "default")


def test_an_unknown_kind_is_one_line_naming_it_and_close_matches(kube_apiserver: LoopbackAPIServer) -> None:
    factory = InformerFactory(kube_apiserver.api_client())
    with pytest.raises(UnknownKind, match=r'^no matches for kind "Configmap" in version "v1"; did you mean '
                                          r'ConfigMap\?$'):
        factory.for_kind("v1", "Configmap")
    with pytest.raises(UnknownKind, match=r'no matches for kind "Widget" in version "example.com/v1" '
                                          r'\(the server serves no example.com/v1\)'):
        factory.for_kind("example.com/v1", "Widget")


def test_objects_are_created_read_patched_and_deleted_by_kind(kube_apiserver: LoopbackAPIServer) -> None:
    objects = ObjectClient(kube_apiserver.api_client())
    created = objects.create(configmap("c1"))
    assert created["metadata"]["uid"]
    patched = objects.patch(created, {"data": {"greeting": "hi"}})
    assert patched["data"] == {"k": "v", "greeting": "hi"}
    assert objects.get("v1", "ConfigMap", "c1", "default")["data"]["greeting"] == "hi"
    objects.delete(patched)
    with pytest.raises(ApiException) as err:
        objects.get("v1", "ConfigMap", "c1", "default")
    assert err.value.status == 404
