"""A shared informer against the loopback API server: sync, bursts, handlers, resync, indexes, selectors."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest
from kubernetes import client

from componentbase.informers import (
    NAMESPACE_INDEX,
    InformerFactory,
    ListWatch,
    SharedInformer,
    meta_namespace_index,
)
from componentbase.testing import LoopbackAPIServer, eventually

from .conftest import Mirror, cache_state, cm, fast_backoff, server_state

pytestmark = pytest.mark.integration


def _factory(api: client.ApiClient, **kw: Any) -> InformerFactory:
    return InformerFactory(api, watch_timeout=5, backoff=fast_backoff(), **kw)


def test_cache_and_handlers_follow_a_burst_of_changes(kube_client: client.ApiClient, v1: client.CoreV1Api,
                                                      stop: threading.Event) -> None:
    for i in range(40):
        v1.create_namespaced_config_map("default", cm(f"pre-{i}"), _preload_content=False)
    factory = _factory(kube_client)
    informer = factory.configmaps("default")
    mirror = Mirror()
    informer.add_event_handler(**mirror.handlers())
    factory.start(stop)
    assert factory.wait_for_cache_sync(5)
    assert cache_state(informer) == server_state(kube_client)
    assert len(mirror.snapshot()) == 40

    def churn(seed: int) -> None:
        rng = random.Random(seed)
        names = [f"pre-{i}" for i in range(seed, 40, 2)]
        for step in range(60):
            op = rng.random()
            if op < 0.3:
                name = f"new-{seed}-{step}"
                v1.create_namespaced_config_map("default", cm(name), _preload_content=False)
                names.append(name)
            elif op < 0.75 and names:
                v1.patch_namespaced_config_map(rng.choice(names), "default", {"data": {"step": str(step)}},
                                               _preload_content=False)
            elif names:
                v1.delete_namespaced_config_map(names.pop(rng.randrange(len(names))), "default",
                                                _preload_content=False)

    writers = [threading.Thread(target=churn, args=(seed,)) for seed in (0, 1)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    want = server_state(kube_client)
    eventually(lambda: cache_state(informer) == want, what="cache to equal the server")
    eventually(lambda: mirror.snapshot() == want, what="handlers to see the server's state")
    assert mirror.problems == []


def test_handler_added_to_a_running_informer_first_gets_the_cache(kube_client: client.ApiClient,
                                                                  v1: client.CoreV1Api,
                                                                  stop: threading.Event) -> None:
    for name in ("a", "b", "c"):
        v1.create_namespaced_config_map("default", cm(name), _preload_content=False)
    informer = _factory(kube_client).configmaps("default")
    informer.start(stop)
    assert informer.wait_for_sync(5)
    late = Mirror()
    reg = informer.add_event_handler(**late.handlers())
    eventually(reg.has_synced, what="late handler to sync")
    v1.create_namespaced_config_map("default", cm("d"), _preload_content=False)
    eventually(lambda: len(late.snapshot()) == 4, what="the new object")
    assert sorted(late.calls) == [("add", f"default/{n}") for n in "abcd"]
    assert late.problems == []


def test_handlers_run_in_order_off_the_watch_thread(kube_client: client.ApiClient, v1: client.CoreV1Api,
                                                    stop: threading.Event) -> None:
    """A slow handler delays handlers, not the cache."""
    informer = _factory(kube_client).configmaps("default")
    seen: list[str] = []
    release = threading.Event()

    def slow(obj: dict[str, Any]) -> None:
        release.wait(5)
        seen.append("first:" + obj["metadata"]["name"])

    informer.add_event_handler(on_add=slow)
    informer.add_event_handler(on_add=lambda obj: seen.append("second:" + obj["metadata"]["name"]))
    informer.start(stop)
    assert informer.wait_for_sync(5)
    for name in ("x", "y"):
        v1.create_namespaced_config_map("default", cm(name), _preload_content=False)
    eventually(lambda: informer.get("default/y") is not None, what="cache to hold y while handlers wait")
    assert seen == []
    release.set()
    eventually(lambda: len(seen) == 4, what="handlers")
    assert seen == ["first:x", "second:x", "first:y", "second:y"]


def test_resync_redelivers_every_cached_object(kube_client: client.ApiClient, v1: client.CoreV1Api,
                                               stop: threading.Event) -> None:
    for name in ("a", "b"):
        v1.create_namespaced_config_map("default", cm(name), _preload_content=False)
    informer = InformerFactory(kube_client, resync=0.2, watch_timeout=5).configmaps("default")
    resyncs: list[str] = []
    lock = threading.Lock()

    def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
        assert old is new
        with lock:
            resyncs.append(new["metadata"]["name"])

    informer.add_event_handler(on_update=on_update)
    informer.start(stop)
    eventually(lambda: resyncs.count("a") >= 2 and resyncs.count("b") >= 2, timeout=5, what="two resyncs")


def test_no_resync_without_a_period(kube_client: client.ApiClient, v1: client.CoreV1Api,
                                    stop: threading.Event) -> None:
    v1.create_namespaced_config_map("default", cm("a"), _preload_content=False)
    informer = _factory(kube_client).configmaps("default")
    updates: list[str] = []
    informer.add_event_handler(on_update=lambda old, new: updates.append(new["metadata"]["name"]))
    informer.start(stop)
    assert informer.wait_for_sync(5)
    v1.patch_namespaced_config_map("a", "default", {"data": {"k": "2"}}, _preload_content=False)
    eventually(lambda: updates == ["a"], what="the real update")
    time.sleep(0.3)
    assert updates == ["a"]


def _pod(name: str, node: str = "", **labels: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "labels": labels}, "spec": spec}


def _by_node(obj: dict[str, Any]) -> list[str]:
    node = obj.get("spec", {}).get("nodeName")
    return [node] if node else []


def _names(objs: list[dict[str, Any]]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


def test_indexers_follow_changes(kube_client: client.ApiClient, v1: client.CoreV1Api,
                                 stop: threading.Event) -> None:
    v1.create_namespaced_pod("default", _pod("p1", "n1"), _preload_content=False)
    v1.create_namespaced_pod("default", _pod("p2", "n2"), _preload_content=False)
    v1.create_namespaced_pod("default", _pod("p3"), _preload_content=False)
    v1.create_namespace({"metadata": {"name": "other"}}, _preload_content=False)
    v1.create_namespaced_pod("other", _pod("q1", "n1"), _preload_content=False)
    informer = _factory(kube_client).pods()
    informer.add_indexers({"byNode": _by_node})
    informer.start(stop)
    assert informer.wait_for_sync(5)
    assert _names(informer.by_index("byNode", "n1")) == ["p1", "q1"]
    assert _names(informer.by_index("byNode", "n2")) == ["p2"]
    # An index added after the sync files what is already cached.
    informer.add_indexers({NAMESPACE_INDEX: meta_namespace_index})
    assert _names(informer.by_index(NAMESPACE_INDEX, "other")) == ["q1"]

    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p3"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "n2"}}
    v1.create_namespaced_pod_binding("p3", "default", body, _preload_content=False)
    v1.delete_namespaced_pod("p1", "default", grace_period_seconds=0, _preload_content=False)
    eventually(lambda: _names(informer.by_index("byNode", "n2")) == ["p2", "p3"], what="p3 filed under n2")
    eventually(lambda: _names(informer.by_index("byNode", "n1")) == ["q1"], what="p1 unfiled")
    assert sorted(informer.indexer.list_index_values("byNode")) == ["n1", "n2"]


def test_field_selector_spec_node_name(kube_client: client.ApiClient, v1: client.CoreV1Api,
                                       stop: threading.Event) -> None:
    """What a kubelet watches: only its node's pods; a pod bound to it arrives as an add."""
    v1.create_namespaced_pod("default", _pod("mine", "n1"), _preload_content=False)
    v1.create_namespaced_pod("default", _pod("theirs", "n2"), _preload_content=False)
    v1.create_namespaced_pod("default", _pod("pending"), _preload_content=False)
    factory = _factory(kube_client)
    mine = factory.pods(field_selector="spec.nodeName=n1")
    unassigned = factory.pods(field_selector="spec.nodeName=")
    mirror = Mirror()
    mine.add_event_handler(**mirror.handlers())
    factory.start(stop)
    assert factory.wait_for_cache_sync(5)
    assert _names(mine.list()) == ["mine"]
    assert _names(unassigned.list()) == ["pending"]
    body = {"metadata": {"name": "pending"}, "target": {"kind": "Node", "name": "n1"}}
    v1.create_namespaced_pod_binding("pending", "default", body, _preload_content=False)
    eventually(lambda: _names(mine.list()) == ["mine", "pending"], what="the bound pod")
    eventually(lambda: unassigned.list() == [], what="the pod to leave the unassigned view")
    eventually(lambda: mirror.calls == [("add", "default/mine"), ("add", "default/pending")],
               what="the handler to see the bound pod arrive")


def test_label_selector(kube_client: client.ApiClient, v1: client.CoreV1Api, stop: threading.Event) -> None:
    v1.create_namespaced_config_map("default", cm("web", app="web"), _preload_content=False)
    v1.create_namespaced_config_map("default", cm("db", app="db"), _preload_content=False)
    informer = _factory(kube_client).configmaps("default", label_selector="app=web")
    mirror = Mirror()
    informer.add_event_handler(**mirror.handlers())
    informer.start(stop)
    assert informer.wait_for_sync(5)
    assert _names(informer.list()) == ["web"]
    v1.patch_namespaced_config_map("web", "default", {"metadata": {"labels": {"app": "db"}}},
                                   _preload_content=False)
    eventually(lambda: informer.list() == [], what="web to leave the selection")
    eventually(lambda: mirror.calls == [("add", "default/web"), ("delete", "default/web")],
               what="the handler to see web leave")


def test_filtered_handler_sees_objects_enter_and_leave(kube_client: client.ApiClient, v1: client.CoreV1Api,
                                                       stop: threading.Event) -> None:
    """A scheduler's view: unassigned pods only; binding one reads as its delete."""
    v1.create_namespaced_pod("default", _pod("p"), _preload_content=False)
    informer = _factory(kube_client).pods()
    mirror = Mirror()
    informer.add_event_handler(**mirror.handlers(), filter=lambda pod: not pod["spec"].get("nodeName"))
    informer.start(stop)
    assert informer.wait_for_sync(5)
    eventually(lambda: mirror.calls == [("add", "default/p")], what="the pending pod")
    body = {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}}
    v1.create_namespaced_pod_binding("p", "default", body, _preload_content=False)
    eventually(lambda: mirror.calls[-1:] == [("delete", "default/p")], what="the bound pod's delete")
    assert informer.get("default/p") is not None  # still cached: only the handler filters


def test_factory_shares_one_informer_per_resource_and_selectors(kube_client: client.ApiClient) -> None:
    factory = InformerFactory(kube_client)
    assert factory.pods() is factory.pods()
    assert factory.pods(field_selector="spec.nodeName=n1") is factory.pods(field_selector="spec.nodeName=n1")
    assert factory.pods(field_selector="spec.nodeName=n1") is not factory.pods()
    assert factory.leases("kube-node-lease") is not factory.leases()
    assert len(factory.informers()) == 4


def test_cluster_scoped_and_other_resources(kube_client: client.ApiClient, v1: client.CoreV1Api,
                                            stop: threading.Event) -> None:
    v1.create_node({"metadata": {"name": "n1", "labels": {"zone": "a"}}}, _preload_content=False)
    v1.create_namespaced_secret("default", {"metadata": {"name": "s"}, "stringData": {"k": "v"}},
                                _preload_content=False)
    client.CoordinationV1Api(kube_client).create_namespaced_lease(
        "kube-node-lease", {"metadata": {"name": "n1"}, "spec": {"holderIdentity": "n1"}},
        _preload_content=False)
    factory = _factory(kube_client)
    nodes, secrets, leases = factory.nodes(), factory.secrets("default"), factory.leases("kube-node-lease")
    namespaces = factory.namespaces()
    factory.start(stop)
    assert factory.wait_for_cache_sync(5)
    assert nodes.get("n1") is not None and nodes.get("n1")["kind"] == "Node"  # type: ignore[index]
    assert secrets.get("default/s") is not None
    assert leases.get("kube-node-lease/n1") is not None
    assert namespaces.get("kube-system") is not None


def test_generic_list_watch(kube_client: client.ApiClient, v1: client.CoreV1Api, stop: threading.Event) -> None:
    """Any list method of the official client works, with its positional arguments."""
    v1.create_namespaced_service("default", {"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}},
                                 _preload_content=False)
    informer = SharedInformer(ListWatch(v1.list_namespaced_service, "default"), backoff=fast_backoff())
    informer.start(stop)
    assert informer.wait_for_sync(5)
    assert _names(informer.list()) == ["kubernetes", "svc"]  # default's own Service, as in every cluster
    assert informer.list_watch.resource == "service"


def test_stop_ends_threads_promptly(kube_client: client.ApiClient, stop: threading.Event) -> None:
    informer = _factory(kube_client).configmaps()
    informer.start(stop)
    assert informer.wait_for_sync(5)
    started = time.monotonic()
    stop.set()
    assert informer.join(3)
    assert time.monotonic() - started < 2


def test_wait_for_cache_sync_times_out_while_the_server_fails(stop: threading.Event) -> None:
    with LoopbackAPIServer() as server:
        server.faults.set(error_rate=1.0, verbs=["list"])
        api = server.api_client()
        factory = _factory(api)
        informer = factory.pods()
        factory.start(stop)
        assert not factory.wait_for_cache_sync(0.3)
        assert factory.unsynced() == [informer]
        server.faults.clear()
        assert factory.wait_for_cache_sync(5)
        api.close()


def test_a_failing_handler_is_logged_and_does_not_stop_delivery(kube_client: client.ApiClient,
                                                                v1: client.CoreV1Api, stop: threading.Event,
                                                                caplog: Any) -> None:
    informer = _factory(kube_client).configmaps("default")
    good = Mirror()

    def bad(obj: dict[str, Any]) -> None:
        raise RuntimeError("handler bug")

    informer.add_event_handler(on_add=bad)
    informer.add_event_handler(**good.handlers())
    informer.start(stop)
    assert informer.wait_for_sync(5)
    for name in ("a", "b", "c"):
        v1.create_namespaced_config_map("default", cm(name), _preload_content=False)
    eventually(lambda: len(good.snapshot()) == 3, what="the good handler to see everything")
    failures = [r for r in caplog.records if "event handler failed" in r.getMessage()]
    assert len(failures) == 3
    assert failures[0].exc_info is not None  # the bug's traceback, once
    assert all(r.exc_info is None for r in failures[1:])


def test_waiting_for_slow_handlers_to_sync_burns_no_cpu(kube_client: client.ApiClient, v1: client.CoreV1Api,
                                                       stop: threading.Event) -> None:
    """Listed, but a handler still busy with the first list: the waiter sleeps (it used to spin on a lock the
    handlers' thread needs, slowing the very delivery it waited for)."""
    v1.create_namespaced_config_map("default", cm("slow"))
    release = threading.Event()
    factory = _factory(kube_client)
    informer = factory.configmaps("default")
    informer.add_event_handler(on_add=lambda obj: release.wait(5))
    factory.start(stop)
    assert informer.wait_for_sync(5)
    cpu = time.thread_time()
    assert not factory.wait_for_cache_sync(0.5)
    assert time.thread_time() - cpu < 0.05
    release.set()
    assert factory.wait_for_cache_sync(5)
