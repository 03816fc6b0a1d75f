"""resourceVersion rules of list and watch, through the official client: consistent pages, exact reads,
410 for what the history no longer holds, "Too large resource version", option validation, WatchList."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, watch

from componentbase.testing import LoopbackAPIServer

pytestmark = pytest.mark.integration

_INCONSISTENT = ("The provided continue parameter is too old to display a consistent list result. You can start "
                 "a new list without the continue parameter, or use the continue token in this response to "
                 "retrieve the remainder of the results. Continuing with the provided token results in an "
                 "inconsistent list - objects that were created, modified, or deleted between the time the first "
                 "chunk was returned and now may show up in the list.")


@pytest.fixture
def small() -> Iterator[client.CoreV1Api]:
    """A server whose history holds only a few events, so tests can outlive it."""
    with LoopbackAPIServer(watch_history=3) as server, server.api_client() as api:
        yield client.CoreV1Api(api)


def _cm(name: str, value: str = "v") -> dict[str, Any]:
    return {"metadata": {"name": name}, "data": {"k": value}}


def _names(items: Any) -> list[str]:
    return [i.metadata.name for i in items.items]


def _refused(call: Any, *args: Any, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(client.ApiException) as info:
        call(*args, **kwargs)
    return info.value.status, json.loads(info.value.body)


def _churn(v1: client.CoreV1Api, n: int) -> None:
    for i in range(n):
        v1.create_namespaced_config_map("default", _cm(f"churn-{i}"))


def test_pages_read_one_snapshot(v1: client.CoreV1Api) -> None:
    for name in "abcd":
        v1.create_namespaced_config_map("default", _cm(name))
    first = v1.list_namespaced_config_map("default", limit=2)
    v1.delete_namespaced_config_map("d", "default")
    v1.create_namespaced_config_map("default", _cm("e"))
    rest = v1.list_namespaced_config_map("default", limit=10, _continue=first.metadata._continue)
    assert _names(first) + _names(rest) == ["a", "b", "c", "d"]
    assert rest.metadata.resource_version == first.metadata.resource_version


def test_exact_list_reads_the_past(v1: client.CoreV1Api) -> None:
    rv = v1.create_namespaced_config_map("default", _cm("a", "old")).metadata.resource_version
    v1.patch_namespaced_config_map("a", "default", {"data": {"k": "new"}})
    v1.create_namespaced_config_map("default", _cm("b"))
    past = v1.list_namespaced_config_map("default", resource_version=rv, resource_version_match="Exact")
    assert [(i.metadata.name, i.data["k"]) for i in past.items] == [("a", "old")]
    assert past.metadata.resource_version == rv
    legacy = v1.list_namespaced_config_map("default", resource_version=rv, limit=10)  # rv with limit: exact
    assert _names(legacy) == ["a"]
    newer = v1.list_namespaced_config_map("default", resource_version=rv, resource_version_match="NotOlderThan")
    assert _names(newer) == ["a", "b"] and int(newer.metadata.resource_version) > int(rv)


def test_expired_continue_token_is_410_with_a_token_for_the_rest(small: client.CoreV1Api) -> None:
    for name in "abc":
        small.create_namespaced_config_map("default", _cm(name))
    first = small.list_namespaced_config_map("default", limit=1)
    _churn(small, 8)
    code, status = _refused(small.list_namespaced_config_map, "default", limit=1,
                            _continue=first.metadata._continue)
    assert (code, status["reason"], status["message"]) == (410, "Expired", _INCONSISTENT)
    rest = small.list_namespaced_config_map("default", _continue=status["metadata"]["continue"])
    assert _names(rest)[:2] == ["b", "c"] and len(rest.items) == 10  # the rest, churn included


def test_exact_list_from_a_compacted_resource_version_is_410(small: client.CoreV1Api) -> None:
    rv = small.create_namespaced_config_map("default", _cm("a")).metadata.resource_version
    _churn(small, 8)
    code, status = _refused(small.list_namespaced_config_map, "default", resource_version=rv,
                            resource_version_match="Exact")
    assert (code, status["reason"], status["message"]) == (
        410, "Expired", "The resourceVersion for the provided list is too old.")


def test_watch_from_a_compacted_resource_version_names_the_oldest_it_has(small: client.CoreV1Api) -> None:
    rv = small.list_namespaced_config_map("default").metadata.resource_version
    _churn(small, 8)
    with pytest.raises(client.ApiException) as info:
        list(watch.Watch().stream(small.list_namespaced_config_map, "default", resource_version=rv,
                                  timeout_seconds=5))
    assert info.value.status == 410
    message = str(info.value.reason)
    assert message.startswith(f"Expired: too old resource version: {rv} (")
    floor = int(message.rsplit("(", 1)[1].rstrip(")"))
    assert int(rv) < floor
    events = watch.Watch().stream(small.list_namespaced_config_map, "default", resource_version=str(floor),
                                  timeout_seconds=1)
    assert [e["type"] for e in events][-1] == "ADDED"  # from the floor the watch is served


def test_list_ahead_of_the_server_is_too_large_after_a_wait(v1: client.CoreV1Api) -> None:
    current = int(v1.list_namespaced_config_map("default").metadata.resource_version)
    start = time.monotonic()
    code, status = _refused(v1.list_namespaced_config_map, "default", resource_version=str(current + 100),
                            resource_version_match="NotOlderThan")
    assert time.monotonic() - start >= 2.5  # kube's watch cache waits 3 s for the rv to arrive
    assert (code, status["reason"]) == (504, "Timeout")
    assert status["message"] == f"Timeout: Too large resource version: {current + 100}, current: {current}"
    assert status["details"]["causes"] == [{"reason": "ResourceVersionTooLarge",
                                            "message": "Too large resource version"}]
    assert status["details"]["retryAfterSeconds"] == 1


def test_stop_ends_a_list_waiting_for_a_resource_version_at_once() -> None:
    server = LoopbackAPIServer().start()
    v1 = client.CoreV1Api(server.api_client())
    current = int(v1.list_namespaced_config_map("default").metadata.resource_version)
    ended = threading.Event()

    def wait() -> None:
        try:
            v1.list_namespaced_config_map("default", resource_version=str(current + 100),
                                          resource_version_match="NotOlderThan")
        except Exception:  # the server hangs up: the point is that it does not first wait its 3 s
            pass
        ended.set()

    threading.Thread(target=wait, daemon=True).start()
    time.sleep(0.3)  # the list is waiting now
    stopped = time.monotonic()
    server.stop()
    assert ended.wait(10)
    assert time.monotonic() - stopped < 2.0


def test_watch_ahead_of_the_server_is_held_open_for_what_comes_after(v1: client.CoreV1Api) -> None:
    """kube's watch cache neither waits nor refuses a plain watch from a resourceVersion it has not reached
    (only a list or a sendInitialEvents watch gets "Too large resource version"): it delivers what comes
    after it, and sends no bookmark older than it."""
    current = int(v1.list_namespaced_config_map("default").metadata.resource_version)
    start = current + 2
    got: list[tuple[str, str, int]] = []

    def run() -> None:
        for ev in watch.Watch().stream(v1.list_namespaced_config_map, "default", resource_version=str(start),
                                       allow_watch_bookmarks=True, timeout_seconds=3):
            meta = ev["raw_object"]["metadata"]
            got.append((ev["type"], meta.get("name", ""), int(meta["resourceVersion"])))

    reader = threading.Thread(target=run, daemon=True)
    reader.start()
    time.sleep(1.5)  # past the bookmark sent 2 s before the watch's end: it must not go out below its start
    for name in "abc":
        v1.create_namespaced_config_map("default", _cm(name))
    reader.join(10)
    assert [(kind, name) for kind, name, _ in got if kind != "BOOKMARK"] == [("ADDED", "c")]
    assert all(rv >= start for _, _, rv in got)


def test_list_waits_for_a_resource_version_that_arrives(v1: client.CoreV1Api) -> None:
    import threading

    current = int(v1.list_namespaced_config_map("default").metadata.resource_version)
    timer = threading.Timer(0.5, v1.create_namespaced_config_map, ("default", _cm("late")))
    timer.start()
    got = v1.list_namespaced_config_map("default", resource_version=str(current + 1),
                                        resource_version_match="NotOlderThan")
    timer.join()
    assert _names(got) == ["late"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"resource_version_match": "Exact"},
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
     "resourceVersionMatch is forbidden unless resourceVersion is provided"),
    ({"resource_version": "0", "resource_version_match": "Exact"},
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
     'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
    ({"resource_version": "1", "resource_version_match": "Newest"},
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": '
     'supported values: "Exact", "NotOlderThan", ""'),
    ({"send_initial_events": True},
     'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'),
])
def test_list_options_are_validated(v1: client.CoreV1Api, kwargs: dict[str, Any], message: str) -> None:
    code, status = _refused(v1.list_namespaced_config_map, "default", **kwargs)
    assert (code, status["reason"], status["message"]) == (422, "Invalid", message)
    assert status["details"]["kind"] == "ListOptions" and status["details"]["group"] == "meta.k8s.io"


def test_continue_with_a_resource_version_is_400(v1: client.CoreV1Api) -> None:
    for name in "ab":
        v1.create_namespaced_config_map("default", _cm(name))
    token = v1.list_namespaced_config_map("default", limit=1).metadata._continue
    code, status = _refused(v1.list_namespaced_config_map, "default", _continue=token, resource_version="5")
    assert (code, status["message"]) == (400, "specifying resource version is not allowed when using continue")
    code, status = _refused(v1.list_namespaced_config_map, "default", _continue="e30")  # "{}"
    assert (code, status["message"]) == (400, "invalid continue token: continue key is not valid: server does "
                                               "not recognize this encoded version ")


def test_watch_options_are_validated(v1: client.CoreV1Api) -> None:
    code, status = _refused(v1.list_namespaced_config_map, "default", watch=True, send_initial_events=True,
                            allow_watch_bookmarks=True, _preload_content=False)
    assert (code, status["message"]) == (422, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: '
                                               "Forbidden: sendInitialEvents requires setting resourceVersionMatch "
                                               "to NotOlderThan")
    code, status = _refused(v1.list_namespaced_config_map, "default", watch=True, resource_version="1",
                            resource_version_match="NotOlderThan", _preload_content=False)
    assert code == 422 and "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided" \
        in status["message"]


def test_streaming_list_sends_initial_events_then_the_marked_bookmark(v1: client.CoreV1Api) -> None:
    for name in "ab":
        v1.create_namespaced_config_map("default", _cm(name))
    w = watch.Watch()
    got = []
    for ev in w.stream(v1.list_namespaced_config_map, "default", send_initial_events=True,
                       resource_version_match="NotOlderThan", allow_watch_bookmarks=True, timeout_seconds=10):
        meta = ev["raw_object"]["metadata"]
        got.append((ev["type"], meta.get("name", ""), meta.get("annotations")))
        if ev["type"] == "BOOKMARK":
            w.stop()
    assert got == [("ADDED", "a", None), ("ADDED", "b", None),
                   ("BOOKMARK", "", {"k8s.io/initial-events-end": "true"})]


def test_streaming_list_ahead_of_the_server_ends_with_too_large(v1: client.CoreV1Api) -> None:
    current = int(v1.list_namespaced_config_map("default").metadata.resource_version)
    with pytest.raises(client.ApiException) as info:
        list(watch.Watch().stream(v1.list_namespaced_config_map, "default", send_initial_events=True,
                                  resource_version=str(current + 50), resource_version_match="NotOlderThan",
                                  allow_watch_bookmarks=True, timeout_seconds=10))
    assert info.value.status == 504
    assert str(info.value.reason) == f"Timeout: Timeout: Too large resource version: {current + 50}, current: {current}"


def test_bookmarks_come_about_once_a_minute_and_just_before_the_timeout(v1: client.CoreV1Api) -> None:
    assert LoopbackAPIServer().bookmark_interval == 60.0
    current = v1.list_namespaced_config_map("default").metadata.resource_version
    start = time.monotonic()
    kinds = [(ev["type"], time.monotonic() - start) for ev in watch.Watch().stream(
        v1.list_namespaced_config_map, "default", allow_watch_bookmarks=True, resource_version=current,
        timeout_seconds=4)]
    assert [k for k, _ in kinds] == ["BOOKMARK"]  # one, two seconds before the end; none per second
    assert 1.5 <= kinds[0][1] < 3.5
