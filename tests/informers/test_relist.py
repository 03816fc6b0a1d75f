"""An informer relists when its position means nothing to the server, and gives up on a silent watch."""

from __future__ import annotations

import threading

import pytest

from componentbase.client import ObjectClient, is_too_large_resource_version
from componentbase.controller import Manager
from componentbase.informers import InformerFactory, deleted_object, strip_managed_fields
from componentbase.testing import LoopbackAPIServer, eventually
from tests.controller.helpers import configmap


@pytest.mark.integration
def test_after_the_server_restarts_with_a_fresh_history_the_cache_relists(stop: threading.Event) -> None:
    """kube-apiserver holds a watch from a resourceVersion it has not reached open in silence, so the
    informer lists after its watch was cut: handlers see the old objects deleted and the new one added,
    and the informer is not synced from the cut until that list is in."""
    with LoopbackAPIServer() as server:
        api = server.api_client()
        for i in range(20):
            ObjectClient(api).create(configmap(f"old-{i}"))
        factory = InformerFactory(api)
        cms = factory.for_kind("v1", "ConfigMap", "default")
        deleted: list[str] = []
        added: list[str] = []
        cms.add_event_handler(on_add=lambda o: added.append(o["metadata"]["name"]),
                              on_delete=lambda o: deleted.append(deleted_object(o)["metadata"]["name"]))
        factory.start(stop)
        try:
            assert factory.wait_for_cache_sync(10) and cms.has_synced()
            server.faults.set(error_rate=1.0, error_code=503, verbs=["list"])  # the relist waits: the informer shows it
            server.restart()  # same address, storage from resourceVersion 1
            eventually(lambda: not cms.has_synced(), 5, what="the informer to stop calling itself synced")
            assert len(cms.list()) == 20
            ObjectClient(server.api_client()).create(configmap("new"))  # resourceVersion 1: behind ours
            server.faults.clear()
            eventually(lambda: [o["metadata"]["name"] for o in cms.list()] == ["new"], 10,
                       what="the cache to show the new server's state")
            assert cms.has_synced()
            eventually(lambda: sorted(deleted) == sorted(f"old-{i}" for i in range(20)), 5,
                       what="a delete for every object the new server does not have")
            assert added[-1] == "new"
        finally:
            stop.set()
            factory.join(10)


@pytest.mark.integration
def test_a_watch_silent_past_the_inactivity_timeout_is_opened_again(
        kube_apiserver: LoopbackAPIServer, stop: threading.Event) -> None:
    factory = InformerFactory(kube_apiserver.api_client(), inactivity_timeout=1.0)  # server timeout stays 300 s
    factory.for_kind("v1", "ConfigMap")
    factory.start(stop)
    try:
        assert factory.wait_for_cache_sync(10)
        kube_apiserver.faults.set(stall=60, verbs=["watch"])
        kube_apiserver.faults.close_watches()
        eventually(lambda: kube_apiserver.faults.counts.get("stall", 0) >= 2, 8, what="a second watch attempt")
    finally:
        kube_apiserver.faults.clear()
        stop.set()
        factory.join(10)


@pytest.mark.integration
def test_a_transform_applies_to_every_cached_object(kube_apiserver: LoopbackAPIServer, stop: threading.Event) -> None:
    api = kube_apiserver.api_client()
    objects = ObjectClient(api)
    managed = {"manager": "test", "operation": "Update", "apiVersion": "v1"}
    listed = configmap("listed")
    listed["metadata"]["managedFields"] = [managed]  # type: ignore[index]
    objects.create(listed)
    factory = InformerFactory(api, transform=strip_managed_fields)
    cms = factory.for_kind("v1", "ConfigMap")
    factory.start(stop)
    try:
        assert factory.wait_for_cache_sync(10)
        watched = configmap("watched")
        watched["metadata"]["managedFields"] = [managed]  # type: ignore[index]
        objects.create(watched)
        eventually(lambda: cms.get("default/watched"), what="the watched object")
        for key in ("default/listed", "default/watched"):
            assert "managedFields" not in (cms.get(key) or {"metadata": {}})["metadata"]
    finally:
        stop.set()
        factory.join(10)


@pytest.mark.unit
def test_too_large_resource_version_is_recognised_as_kube_apiserver_sends_it() -> None:
    status = {"kind": "Status", "code": 504, "reason": "Timeout",
              "message": "Too large resource version: 900, current: 12",
              "details": {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]}}
    assert is_too_large_resource_version(status)
    assert not is_too_large_resource_version({"kind": "Status", "code": 504, "reason": "Timeout"})


@pytest.mark.integration
def test_the_manager_is_synced_again_only_once_the_relist_is_in(stop: threading.Event) -> None:
    with LoopbackAPIServer() as server:
        mgr = Manager(server.api_client())
        mgr.informer("v1", "ConfigMap")
        runner = threading.Thread(target=mgr.run, args=(stop,), daemon=True)
        runner.start()
        try:
            eventually(mgr.has_synced, 10, what="the first sync")
            server.faults.set(error_rate=1.0, error_code=503, verbs=["list"])
            server.restart()
            eventually(lambda: not mgr.has_synced(), 5, what="the manager to stop calling its cache synced")
            server.faults.clear()
            eventually(mgr.has_synced, 10, what="the relist to land")
        finally:
            stop.set()
            runner.join(15)
