"""The reflector under faults: closed watches resume, 410 relists, errors back off, dead watches time out.

The loopback server keeps no request log, so list requests are counted at the server with a fault rule
that stalls every list for a millisecond: ``faults.counts["stall"]`` then counts them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

import pytest
from kubernetes import client

from componentbase.informers import (
    Backoff,
    InformerFactory,
    SharedInformer,
)
from componentbase.testing import LoopbackAPIServer, eventually

from .conftest import Mirror, cache_state, cm, fast_backoff, server_state

pytestmark = pytest.mark.integration

LOGGER = "componentbase.informers"


@pytest.fixture
def server() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer(seed=1) as srv:
        yield srv


@pytest.fixture
def api(server: LoopbackAPIServer) -> Iterator[client.ApiClient]:
    api_client = server.api_client()
    yield api_client
    api_client.close()


def _count_lists(server: LoopbackAPIServer) -> None:
    server.faults.set(stall=0.001, verbs=["list"])


def _lists(server: LoopbackAPIServer) -> int:
    return server.faults.counts.get("stall", 0)


def _informer(api: client.ApiClient, backoff: Backoff | None = None, watch_timeout: float = 30) -> SharedInformer:
    return InformerFactory(api, watch_timeout=watch_timeout, backoff=backoff or fast_backoff()).configmaps("default")


def test_after_the_server_closes_watches_handlers_see_exactly_the_real_changes(
        server: LoopbackAPIServer, api: client.ApiClient, stop: threading.Event) -> None:
    v1 = client.CoreV1Api(api)
    _count_lists(server)
    v1.create_namespaced_config_map("default", cm("a"), _preload_content=False)
    informer = _informer(api)
    mirror = Mirror()
    informer.add_event_handler(**mirror.handlers())
    informer.start(stop)
    assert informer.wait_for_sync(5)
    expected = [("add", "default/a")]
    for round_ in range(3):
        watches = informer.reflector.watches
        server.faults.close_watches()
        name = f"after-close-{round_}"
        v1.create_namespaced_config_map("default", cm(name), _preload_content=False)
        v1.patch_namespaced_config_map("a", "default", {"data": {"round": str(round_)}}, _preload_content=False)
        expected += [("add", f"default/{name}"), ("update", "default/a")]
        want = len(expected)
        eventually(lambda w=watches: informer.reflector.watches > w, what="a new watch")  # type: ignore[misc]
        eventually(lambda n=want: len(mirror.calls) == n, what="the changes made while away")  # type: ignore[misc]
    # exactly the real changes, nothing synthesized: a watch cut after living a while resumes without a list,
    # and one cut at once (a second is "very short") is followed by a list whose Replace adds nothing false
    # (in key order, not the order they were made, as client-go's Replace delivers them)
    assert sorted(mirror.calls) == sorted(expected)
    assert _lists(server) == informer.reflector.lists
    assert cache_state(informer) == server_state(api)


def test_watch_timeouts_resume_from_the_last_resource_version(
        server: LoopbackAPIServer, api: client.ApiClient, stop: threading.Event) -> None:
    """timeoutSeconds ends each watch (1-2 s here); the next one starts where it ended."""
    v1 = client.CoreV1Api(api)
    _count_lists(server)
    informer = _informer(api, watch_timeout=1)
    mirror = Mirror()
    informer.add_event_handler(**mirror.handlers())
    informer.start(stop)
    assert informer.wait_for_sync(5)
    eventually(lambda: informer.reflector.watches >= 2, timeout=5, what="a watch to time out")
    v1.create_namespaced_config_map("default", cm("late"), _preload_content=False)
    eventually(lambda: mirror.calls == [("add", "default/late")], what="the event after the timeout")
    assert _lists(server) == 1


def test_gone_relists_and_handlers_see_what_changed_while_away(stop: threading.Event) -> None:
    """The server forgets history (410 in the stream): relist; deletions missed become tombstones."""
    with LoopbackAPIServer(watch_history=2) as server:
        api = server.api_client()
        v1 = client.CoreV1Api(api)
        for name in "abcde":
            v1.create_namespaced_config_map("default", cm(name), _preload_content=False)
        informer = _informer(api)
        mirror = Mirror()
        informer.add_event_handler(**mirror.handlers())
        informer.start(stop)
        assert informer.wait_for_sync(5)
        server.faults.set(stall=30, verbs=["watch"])  # keep the informer away ...
        server.faults.close_watches()
        eventually(lambda: server.faults.counts.get("stall", 0) >= 1, what="the informer to re-watch")
        v1.delete_namespaced_config_map("a", "default", _preload_content=False)
        v1.delete_namespaced_config_map("b", "default", _preload_content=False)
        v1.patch_namespaced_config_map("c", "default", {"data": {"k": "changed"}}, _preload_content=False)
        v1.create_namespaced_config_map("default", cm("f"), _preload_content=False)
        for i in range(6):  # ... while the server's history moves on without it
            v1.create_namespaced_secret("default", {"metadata": {"name": f"s{i}"}}, _preload_content=False)
        calls_before = len(mirror.calls)
        server.faults.clear()
        want = server_state(api)
        eventually(lambda: mirror.snapshot() == want, what="handlers to match the server after the relist")
        assert cache_state(informer) == want
        assert informer.reflector.lists >= 2  # the stalled watch failing relists too
        assert sorted(mirror.calls[calls_before:]) == [
            ("add", "default/f"), ("delete", "default/a"), ("delete", "default/b"), ("update", "default/c")]
        assert sorted(t.key for t in mirror.tombstones) == ["default/a", "default/b"]
        assert mirror.tombstones[0].obj["metadata"]["name"] in ("a", "b")  # the last state known
        assert mirror.problems == []
        api.close()


def test_backoff_under_500s_is_bounded_and_logged_once(server: LoopbackAPIServer, api: client.ApiClient,
                                                       stop: threading.Event,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    server.faults.set(error_rate=1.0, error_code=500)
    informer = _informer(api, Backoff(duration=0.1, cap=0.4, jitter=0.0))
    informer.start(stop)
    time.sleep(1.5)
    requests = server.faults.counts.get("error", 0)
    # 0.1 + 0.2 + 0.4 + 0.4 ... : about 5 tries in 1.5 s; a tight loop would make hundreds.
    assert 3 <= requests <= 7, requests
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "500 InternalError: Internal error occurred: injected fault" in warnings[0].getMessage()
    assert "\n" not in warnings[0].getMessage() and warnings[0].exc_info is None
    server.faults.clear()
    assert informer.wait_for_sync(2)
    eventually(lambda: any("recovered after" in r.getMessage() for r in caplog.records), what="recovery log")


def test_429_waits_as_long_as_retry_after(server: LoopbackAPIServer, api: client.ApiClient,
                                          stop: threading.Event) -> None:
    server.faults.set(error_rate=1.0, error_code=429, retry_after=1, verbs=["list"])
    informer = _informer(api, Backoff(duration=0.01, cap=0.05, jitter=0.0))
    started = time.monotonic()
    informer.start(stop)
    eventually(lambda: server.faults.counts.get("error", 0) >= 2, 10, interval=0.01, what="a second list")
    # After the 1 s Retry-After, not after the 10 ms backoff: a busy machine can only make it later.
    assert time.monotonic() - started >= 1.0
    assert server.faults.counts.get("error", 0) == 2
    server.faults.clear()
    assert informer.wait_for_sync(2)


def test_dropped_watch_connections_back_off_and_resume(server: LoopbackAPIServer, api: client.ApiClient,
                                                       stop: threading.Event) -> None:
    v1 = client.CoreV1Api(api)
    _count_lists(server)
    informer = _informer(api, Backoff(duration=0.1, cap=0.2, jitter=0.0))
    mirror = Mirror()
    informer.add_event_handler(**mirror.handlers())
    informer.start(stop)
    assert informer.wait_for_sync(5)
    server.faults.add(drop_rate=1.0, verbs=["watch"])
    server.faults.close_watches()
    v1.create_namespaced_config_map("default", cm("during-drops"), _preload_content=False)
    time.sleep(0.8)
    drops = server.faults.counts.get("drop", 0)
    # 0.1 + 0.2 + 0.2 + ...: about 5 watch attempts; urllib3's default Retry(3) sends each up to 4 times.
    assert 2 <= drops <= 4 * 7, drops
    _count_lists(server)  # drops off, list counting on
    eventually(lambda: mirror.calls == [("add", "default/during-drops")], what="the change made during drops")
    # a failed watch is followed by a list (the server may have been restored behind the same address);
    # its Replace hands handlers only the real change
    assert informer.reflector.lists > 1
    assert mirror.calls == [("add", "default/during-drops")]


def test_dropped_lists_retry_until_the_server_answers(server: LoopbackAPIServer, api: client.ApiClient,
                                                      stop: threading.Event) -> None:
    server.faults.set(drop_rate=1.0, verbs=["list"])
    informer = _informer(api)
    informer.start(stop)
    eventually(lambda: server.faults.counts.get("drop", 0) >= 2, what="retries")
    assert not informer.has_synced()
    server.faults.clear()
    assert informer.wait_for_sync(3)


def test_a_silently_dead_watch_is_noticed(server: LoopbackAPIServer, api: client.ApiClient,
                                          stop: threading.Event, caplog: pytest.LogCaptureFixture) -> None:
    """A watch that never answers is given up after timeoutSeconds plus a grace (here 1-2 s + 1 s)."""
    caplog.set_level(logging.WARNING, logger=LOGGER)
    informer = _informer(api, watch_timeout=1)
    informer.start(stop)
    assert informer.wait_for_sync(5)
    server.faults.set(stall=60, verbs=["watch"])
    server.faults.close_watches()
    eventually(lambda: server.faults.counts.get("stall", 0) >= 2, timeout=6, what="a second watch attempt")
    assert any("timed out" in r.getMessage().lower() for r in caplog.records)
    server.faults.clear()


def test_bookmarks_advance_the_resource_version(stop: threading.Event) -> None:
    with LoopbackAPIServer(bookmark_interval=0.1) as server:
        api = server.api_client()
        v1 = client.CoreV1Api(api)
        informer = _informer(api)
        informer.start(stop)
        assert informer.wait_for_sync(5)
        synced_at = int(informer.last_sync_resource_version)
        resp = v1.create_namespaced_secret("default", {"metadata": {"name": "elsewhere"}}, _preload_content=False)
        import json

        secret_rv = int(json.loads(resp.data)["metadata"]["resourceVersion"])
        assert secret_rv > synced_at
        eventually(lambda: int(informer.last_sync_resource_version) >= secret_rv, what="a bookmark")
        api.close()
