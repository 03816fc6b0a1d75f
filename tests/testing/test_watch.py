"""Watch: initial state, resuming from a resourceVersion, selectors, bookmarks, 410 Gone, timeouts."""

from __future__ import annotations

import http.client
import json
import queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, watch

from componentbase.testing import LoopbackAPIServer, eventually

pytestmark = pytest.mark.integration


def _cm(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}


def _take(events: Iterator[dict[str, Any]], w: watch.Watch, n: int) -> list[tuple[str, str]]:
    got = []
    for ev in events:
        got.append((ev["type"], ev["object"].metadata.name if ev["type"] != "BOOKMARK" else ""))
        if len(got) == n:
            w.stop()
    return got


def test_watch_from_resource_version(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespaced_config_map("default", _cm("a"))
    rv = v1.list_namespaced_config_map("default").metadata.resource_version
    v1.create_namespaced_config_map("default", _cm("b"))
    v1.patch_namespaced_config_map("a", "default", {"data": {"k": "w"}})
    v1.delete_namespaced_config_map("b", "default")
    w = watch.Watch()
    events = w.stream(v1.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=10)
    assert _take(events, w, 3) == [("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b")]


def test_watch_without_rv_lists_first_then_follows(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespaced_config_map("default", _cm("old"))
    w = watch.Watch()
    events = w.stream(v1.list_namespaced_config_map, "default", timeout_seconds=10)
    first = next(events)
    assert (first["type"], first["object"].metadata.name) == ("ADDED", "old")
    threading.Thread(target=v1.create_namespaced_config_map, args=("default", _cm("new"))).start()
    assert _take(events, w, 1) == [("ADDED", "new")]


def test_watch_resumes_where_the_client_left_off(kube_client: client.ApiClient) -> None:
    """The client's Watch keeps the last rv it saw; a new stream from it misses nothing."""
    v1 = client.CoreV1Api(kube_client)
    w = watch.Watch()
    v1.create_namespaced_config_map("default", _cm("one"))
    assert _take(w.stream(v1.list_namespaced_config_map, "default", timeout_seconds=10), w, 1) == [
        ("ADDED", "one")]
    v1.create_namespaced_config_map("default", _cm("two"))
    events = w.stream(v1.list_namespaced_config_map, "default", resource_version=w.resource_version,
                      timeout_seconds=10)
    assert _take(events, w, 1) == [("ADDED", "two")]


def test_watch_label_selector_enters_and_leaves(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    rv = v1.list_namespaced_config_map("default").metadata.resource_version
    v1.create_namespaced_config_map("default", _cm("x", app="web"))
    v1.create_namespaced_config_map("default", _cm("y", app="db"))
    v1.patch_namespaced_config_map("y", "default", {"metadata": {"labels": {"app": "web"}}})
    v1.patch_namespaced_config_map("x", "default", {"metadata": {"labels": {"app": "db"}}})
    w = watch.Watch()
    events = w.stream(v1.list_namespaced_config_map, "default", label_selector="app=web",
                      resource_version=rv, timeout_seconds=10)
    assert _take(events, w, 3) == [("ADDED", "x"), ("ADDED", "y"), ("DELETED", "x")]


def test_watch_field_selector_across_namespaces(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    rv = v1.list_config_map_for_all_namespaces().metadata.resource_version
    v1.create_namespaced_config_map("default", _cm("x"))
    v1.create_namespaced_config_map("kube-system", _cm("x"))
    v1.create_namespaced_config_map("kube-system", _cm("y"))
    w = watch.Watch()
    events = w.stream(v1.list_config_map_for_all_namespaces, field_selector="metadata.namespace=kube-system",
                      resource_version=rv, timeout_seconds=10)
    assert _take(events, w, 2) == [("ADDED", "x"), ("ADDED", "y")]


def test_too_old_resource_version_is_410() -> None:
    with LoopbackAPIServer(watch_history=3) as server, server.api_client() as api:
        v1 = client.CoreV1Api(api)
        for i in range(10):
            v1.create_namespaced_config_map("default", _cm(f"c{i}"))
        with pytest.raises(client.ApiException) as info:
            list(watch.Watch().stream(v1.list_namespaced_config_map, "default", resource_version="1"))
        assert info.value.status == 410
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("GET", "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1")
        resp = conn.getresponse()
        assert resp.status == 200 and resp.getheader("Transfer-Encoding") == "chunked"
        event = json.loads(resp.readline())
        assert event["type"] == "ERROR"
        assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
        assert event["object"]["kind"] == "Status"
        conn.close()


def test_bookmarks() -> None:
    with LoopbackAPIServer(bookmark_interval=0.05) as server, server.api_client() as api:
        v1 = client.CoreV1Api(api)
        current = v1.create_namespaced_config_map("default", _cm("a")).metadata.resource_version
        w = watch.Watch()
        for ev in w.stream(v1.list_namespaced_config_map, "default", allow_watch_bookmarks=True,
                           resource_version=current, timeout_seconds=10):
            assert ev["type"] == "BOOKMARK"
            assert int(ev["raw_object"]["metadata"]["resourceVersion"]) >= int(current)
            w.stop()
        assert w.resource_version is not None


def test_no_bookmarks_unless_asked() -> None:
    with LoopbackAPIServer(bookmark_interval=0.05) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        path = "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1&timeoutSeconds=0.3"
        conn.request("GET", path)
        assert conn.getresponse().read() == b""
        conn.request("GET", path + "&allowWatchBookmarks=true")
        assert json.loads(conn.getresponse().readline())["type"] == "BOOKMARK"
        conn.close()


def test_timeout_seconds_ends_watch(kube_client: client.ApiClient) -> None:
    import time

    v1 = client.CoreV1Api(kube_client)
    start = time.monotonic()
    events = list(watch.Watch().stream(v1.list_namespaced_pod, "default", timeout_seconds=1))
    assert events == [] and 0.9 <= time.monotonic() - start < 5


def test_watch_path_prefix_and_watch_1(
    kube_apiserver: LoopbackAPIServer, kube_client: client.ApiClient
) -> None:
    client.CoreV1Api(kube_client).create_namespaced_config_map("default", _cm("a"))
    for path in ("/api/v1/watch/namespaces/default/configmaps?timeoutSeconds=0.2",
                 "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=0.2"):
        conn = http.client.HTTPConnection("127.0.0.1", kube_apiserver.port, timeout=10)
        conn.request("GET", path)
        lines = [json.loads(line) for line in conn.getresponse().read().splitlines()]
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines] == [("ADDED", "a")]
        conn.close()


def test_stop_ends_open_watches() -> None:
    """An open watch ends as kube-apiserver ends watches when it shuts down: the stream closes cleanly,
    so the client's watch loop returns, with no broken-connection error to tell apart from a real fault."""
    server = LoopbackAPIServer().start()
    api = server.api_client()
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_config_map("default", _cm("a"))
    opened = threading.Event()
    ended: queue.Queue[tuple[list[str], BaseException | None]] = queue.Queue()

    def run() -> None:
        got: list[str] = []
        try:
            for ev in watch.Watch().stream(v1.list_namespaced_config_map, "default", timeout_seconds=60):
                got.append(ev["type"])
                opened.set()
        except BaseException as err:  # handed to the test, which fails on it
            ended.put((got, err))
            return
        ended.put((got, None))

    threading.Thread(target=run, daemon=True).start()
    assert opened.wait(10), "the watch never delivered its first event"
    server.stop()
    try:
        got, err = ended.get(timeout=10)  # the watch asked for 60 s: ending sooner means stop() ended it
    except queue.Empty:
        pytest.fail("stop() left the watch open")
    finally:
        api.close()
    assert err is None, f"the watch ended with {err!r}, not a clean end of stream"
    assert got == ["ADDED"]


def test_abandoned_watch_frees_its_thread(kube_apiserver: LoopbackAPIServer) -> None:
    before = threading.active_count()
    conn = http.client.HTTPConnection("127.0.0.1", kube_apiserver.port, timeout=10)
    conn.request("GET", "/api/v1/namespaces/default/pods?watch=true")
    resp = conn.getresponse()
    assert resp.status == 200
    assert threading.active_count() > before
    conn.close()
    eventually(lambda: threading.active_count() <= before, 5, what="the watch's thread to end")


def test_send_initial_events_ends_with_marked_bookmark(kube_apiserver: LoopbackAPIServer,
                                                        kube_client: client.ApiClient) -> None:
    client.CoreV1Api(kube_client).create_namespaced_config_map("default", _cm("a"))
    conn = http.client.HTTPConnection("127.0.0.1", kube_apiserver.port, timeout=10)
    conn.request("GET", "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true"
                 "&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=0.2")
    events = [json.loads(line) for line in conn.getresponse().read().splitlines()]
    assert [e["type"] for e in events][:2] == ["ADDED", "BOOKMARK"]
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    conn.close()


def test_watch_one_object_by_path(kube_apiserver: LoopbackAPIServer, kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespaced_config_map("default", _cm("a"))
    v1.create_namespaced_config_map("default", _cm("b"))
    conn = http.client.HTTPConnection("127.0.0.1", kube_apiserver.port, timeout=10)
    conn.request("GET", "/api/v1/watch/namespaces/default/configmaps/b?timeoutSeconds=0.2")
    events = [json.loads(line) for line in conn.getresponse().read().splitlines()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "b")]
    conn.close()
