"""The event recorder against the loopback API server: the Event written, aggregation, spam, faults."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Literal

import pytest
from kubernetes import client

from componentbase.events import (
    EventBroadcaster,
    object_reference,
)
from componentbase.testing import LoopbackAPIServer, eventually
from tests.events_support import POD, list_events


@pytest.fixture
def broadcaster(kube_client: client.ApiClient) -> Iterator[EventBroadcaster]:
    b = EventBroadcaster(kube_client, retry_delay=0.02)
    yield b
    b.shutdown(2)


@pytest.mark.integration
def test_an_event_as_kube_writes_it(kube_client: client.ApiClient, broadcaster: EventBroadcaster) -> None:
    recorder = broadcaster.new_recorder("default-scheduler", host="host-a")
    recorder.event(POD, "Normal", "Scheduled", "Successfully assigned default/web-1 to n1")
    assert broadcaster.flush(5)
    [event] = list_events(kube_client)
    assert event["metadata"]["name"].startswith("web-1.")
    assert event["involvedObject"] == {"kind": "Pod", "namespace": "default", "name": "web-1", "uid": "uid-1",
                                       "apiVersion": "v1", "resourceVersion": "7"}
    assert (event["type"], event["reason"], event["count"]) == ("Normal", "Scheduled", 1)
    assert event["message"] == "Successfully assigned default/web-1 to n1"
    assert event["source"] == {"component": "default-scheduler", "host": "host-a"}
    assert event["reportingComponent"] == "default-scheduler"
    assert event["reportingInstance"] == "host-a"
    assert event["firstTimestamp"] and event["lastTimestamp"]


@pytest.mark.integration
def test_a_related_object_is_referenced(kube_client: client.ApiClient, broadcaster: EventBroadcaster) -> None:
    preemptor = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "big", "namespace": "default", "uid": "u-2"}}
    broadcaster.new_recorder("default-scheduler").event(POD, "Normal", "Preempted", "Preempted by pod u-2 on node n1",
                                                        action="Preempting", related=preemptor)
    assert broadcaster.flush(5)
    [event] = list_events(kube_client)
    assert event["related"] == {"kind": "Pod", "namespace": "default", "name": "big", "uid": "u-2",
                                "apiVersion": "v1"}
    assert event["action"] == "Preempting"


@pytest.mark.integration
def test_eventf_formats_and_cluster_scoped_objects_go_to_default(kube_client: client.ApiClient,
                                                                  broadcaster: EventBroadcaster) -> None:
    node = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1", "uid": "u-n1"}}
    broadcaster.new_recorder("kubelet").eventf(node, "Warning", "NodeNotReady", "Node %s status is %s",
                                              "n1", "NotReady")
    assert broadcaster.flush(5)
    [event] = list_events(kube_client)
    assert event["message"] == "Node n1 status is NotReady"
    assert event["type"] == "Warning"
    assert "namespace" not in event["involvedObject"]


@pytest.mark.integration
def test_repeats_patch_one_event_with_count_n(kube_client: client.ApiClient) -> None:
    clock = [1_000_000.0]
    b = EventBroadcaster(kube_client, clock=lambda: clock[0])
    recorder = b.new_recorder("default-scheduler")
    for _ in range(5):  # queued together
        recorder.event(POD, "Warning", "FailedScheduling", "0/3 nodes are available")
    assert b.flush(5)
    for _ in range(7):  # one at a time: each a PATCH of the same Event
        clock[0] += 1
        recorder.event(POD, "Warning", "FailedScheduling", "0/3 nodes are available")
        assert b.flush(5)
    [event] = list_events(kube_client)
    assert event["count"] == 12
    assert event["firstTimestamp"].startswith("1970-01-12T13:46:40")
    assert event["lastTimestamp"] == "1970-01-12T13:46:47Z"
    b.shutdown(2)


@pytest.mark.integration
def test_a_different_message_or_object_is_a_different_event(kube_client: client.ApiClient,
                                                            broadcaster: EventBroadcaster) -> None:
    recorder = broadcaster.new_recorder("c")
    other = {**POD, "metadata": {**POD["metadata"], "name": "web-2", "uid": "uid-2"}}  # type: ignore[dict-item]
    recorder.event(POD, "Normal", "Pulled", "image a")
    recorder.event(POD, "Normal", "Pulled", "image b")
    recorder.event(other, "Normal", "Pulled", "image a")
    recorder.event(POD, "Normal", "Pulled", "image a")
    assert broadcaster.flush(5)
    got = sorted((e["involvedObject"]["name"], e["message"], e["count"]) for e in list_events(kube_client))
    assert got == [("web-1", "image a", 2), ("web-1", "image b", 1), ("web-2", "image a", 1)]


@pytest.mark.integration
def test_many_similar_messages_are_combined(kube_client: client.ApiClient) -> None:
    b = EventBroadcaster(kube_client, max_similar=3)
    recorder = b.new_recorder("c")
    for i in range(6):
        recorder.event(POD, "Warning", "BackOff", f"restarting container, attempt {i}")
        assert b.flush(5)
    events = list_events(kube_client)
    plain = [e for e in events if not e["message"].startswith("(combined")]
    combined = [e for e in events if e["message"].startswith("(combined")]
    assert len(plain) == 3
    assert len(combined) == 1
    assert combined[0]["message"] == "(combined from similar events): restarting container, attempt 5"
    assert combined[0]["count"] == 3
    b.shutdown(2)


@pytest.mark.integration
def test_spam_filter_limits_events_per_object(kube_client: client.ApiClient) -> None:
    b = EventBroadcaster(kube_client, spam_burst=4, spam_qps=1e-9)
    recorder = b.new_recorder("c")
    for i in range(10):
        recorder.event(POD, "Normal", f"Reason{i}", "m")
    recorder.event({**POD, "metadata": {"name": "quiet", "namespace": "default"}}, "Normal", "R", "m")
    assert b.flush(5)
    assert len(list_events(kube_client)) == 5  # 4 for the noisy object, 1 for the other
    b.shutdown(2)


@pytest.mark.integration
def test_recording_never_blocks_and_drops_when_the_queue_is_full(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="componentbase.events")
    with LoopbackAPIServer() as server:
        server.faults.set(stall=30, verbs=["create"], resources=["events"])
        api = server.api_client()
        b = EventBroadcaster(api, queue_size=5, request_timeout=30)
        recorder = b.new_recorder("c")
        started = time.monotonic()
        for i in range(50):
            recorder.event(POD, "Normal", "R", f"message {i}")
        assert time.monotonic() - started < 5  # blocking would wait out the 30 s stall
        drops = [r for r in caplog.records if "event queue full" in r.getMessage()]
        assert len(drops) == 1  # one line for the whole streak
        server.faults.clear()
        assert b.flush(5)
        assert 1 <= len(list_events(api)) <= 6
        b.shutdown(2)
        api.close()


@pytest.mark.integration
def test_server_errors_are_retried(caplog: pytest.LogCaptureFixture) -> None:
    with LoopbackAPIServer(seed=3) as server:
        api = server.api_client()
        server.faults.set(error_rate=1.0, error_code=500, verbs=["create"], resources=["events"])
        b = EventBroadcaster(api, retry_delay=0.05)
        b.new_recorder("c").event(POD, "Normal", "R", "m")
        eventually(lambda: server.faults.counts.get("error", 0) >= 3, what="three refused creates")
        server.faults.clear()
        assert b.flush(5)
        [event] = list_events(api)
        assert event["count"] == 1
        b.shutdown(2)
        api.close()


@pytest.mark.process
@pytest.mark.parametrize("sink", ["thread", "process"])
def test_rejected_events_are_logged_on_one_line_and_dropped(kube_client: client.ApiClient,
                                                             sink: Literal["thread", "process"],
                                                             caplog: pytest.LogCaptureFixture) -> None:
    """From a child process too: its log lines reach the parent's log."""
    broadcaster = EventBroadcaster(kube_client, retry_delay=0.02, sink=sink)
    ghost = {**POD, "metadata": {**POD["metadata"], "namespace": "no-such-namespace"}}  # type: ignore[dict-item]
    broadcaster.new_recorder("c").event(ghost, "Normal", "R", "m")
    assert broadcaster.flush(30)  # a bound, not a speed: a child sender imports the client first
    assert broadcaster.sink == sink
    broadcaster.shutdown(2)
    [line] = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
    assert 'namespaces "no-such-namespace" not found' in line
    assert "\n" not in line


@pytest.mark.integration
def test_bad_event_type_or_object_is_refused(broadcaster: EventBroadcaster,
                                             caplog: pytest.LogCaptureFixture) -> None:
    recorder = broadcaster.new_recorder("c")
    recorder.event(POD, "Info", "R", "m")
    recorder.event({"metadata": {"name": "x"}}, "Normal", "R", "m")
    assert any("Unsupported event type: 'Info'" in r.getMessage() for r in caplog.records)
    assert any("needs an object with a kind" in r.getMessage() for r in caplog.records)
    assert broadcaster.sent == 0


@pytest.mark.unit
def test_object_reference_from_a_reference() -> None:
    ref = {"kind": "Node", "name": "n1", "uid": "u"}
    assert object_reference(ref) == ref


@pytest.mark.integration
def test_shutdown_on_stop_writes_what_is_queued(kube_client: client.ApiClient) -> None:
    stop = threading.Event()
    b = EventBroadcaster(kube_client)
    b.start(stop)
    b.new_recorder("c").event(POD, "Normal", "R", "m")
    stop.set()
    eventually(lambda: list_events(kube_client), what="the queued event written")
    assert len(list_events(kube_client)) == 1
