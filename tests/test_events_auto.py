"""``EventBroadcaster(sink="auto")``: a thread until Events are written at a sustained high rate, then the
child process, with every Event written once and aggregation, counts and spam filtering carried over."""

from __future__ import annotations

import logging
import os
import signal
from collections import Counter
from collections.abc import Iterator
from typing import Any

import psutil
import pytest
from kubernetes import client

from componentbase.events import EventBroadcaster
from componentbase.events import _auto as auto
from componentbase.testing import eventually
from tests.events_support import POD, list_events

pytestmark = pytest.mark.process


def _senders() -> list[psutil.Process]:
    """This process's event sender children."""
    found = []
    for child in psutil.Process().children():
        try:
            if any("componentbase.events._process" in part for part in child.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


def _pod(name: str) -> dict[str, Any]:
    return {**POD, "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}}


@pytest.fixture
def small_burst(monkeypatch: pytest.MonkeyPatch) -> None:
    """Move after 10 Events beyond 1/s, so that a test's burst surely moves on a loaded machine."""
    monkeypatch.setattr(auto, "MOVE_BURST", 10)
    monkeypatch.setattr(auto, "MOVE_RATE", 1.0)


@pytest.fixture
def auto_broadcaster(kube_client: client.ApiClient) -> Iterator[EventBroadcaster]:
    b = EventBroadcaster(kube_client, retry_delay=0.02, sink="auto", max_similar=3)
    yield b
    b.shutdown(5)


def test_a_component_recording_few_events_never_starts_a_child(kube_client: client.ApiClient,
                                                                auto_broadcaster: EventBroadcaster) -> None:
    b = auto_broadcaster
    b.start()
    assert b.wait_ready(0)  # a thread is ready at once
    recorder = b.new_recorder("c")
    for i in range(40):  # well under the default burst
        recorder.event(_pod(f"p{i}"), "Normal", "R", "m")
    assert b.flush(30)
    assert len(list_events(kube_client)) == 40
    assert b.sender_pid is None and _senders() == []
    assert b.sink == "auto"


def test_a_burst_moves_to_the_child_and_every_event_arrives_once_with_its_count(
        kube_client: client.ApiClient, small_burst: None, auto_broadcaster: EventBroadcaster,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="componentbase.events")
    b = auto_broadcaster
    recorder = b.new_recorder("default-scheduler", host="h")
    spammy = _pod("spammy")

    def record(phase: str, attempts: range) -> None:
        for i in range(30):
            recorder.event(_pod(f"{phase}-{i}"), "Normal", "Scheduled", f"assigned {phase}-{i}")
        for _ in range(5):
            recorder.event(POD, "Normal", "Pulled", "image pulled")
        for i in attempts:  # max_similar 3: the 4th and 5th messages are combined
            recorder.event(POD, "Warning", "BackOff", f"attempt {i}")
        for i in range(20):  # one object, 20 reasons: the spam filter passes 25 in all, not 25 per sender
            recorder.event(spammy, "Normal", f"{phase}{i}", "m")

    record("before", range(2))
    eventually(lambda: b.sender_pid is not None, timeout=30, what="the sender moved to a child process")
    assert b.sender_pid != os.getpid() and [p.pid for p in _senders()] == [b.sender_pid]
    record("after", range(2, 5))
    assert b.flush(30)

    events = list_events(kube_client)
    names = Counter(e["metadata"]["name"] for e in events)
    assert max(names.values()) == 1
    scheduled = [e for e in events if e["reason"] == "Scheduled"]
    assert sorted(e["involvedObject"]["name"] for e in scheduled) == sorted(
        f"{phase}-{i}" for phase in ("before", "after") for i in range(30))
    assert {e["count"] for e in scheduled} == {1}
    [pulled] = [e for e in events if e["reason"] == "Pulled"]
    assert pulled["count"] == 10  # 5 before the move and 5 after: one Event, patched
    backoff = sorted((e["message"], e["count"]) for e in events if e["reason"] == "BackOff")
    assert backoff == [("(combined from similar events): attempt 4", 2), ("attempt 0", 1), ("attempt 1", 1),
                       ("attempt 2", 1)]
    assert len([e for e in events if e["involvedObject"]["name"] == "spammy"]) == 25
    assert len([r for r in caplog.records if "moving the event sender to a child process" in r.getMessage()]) == 1


def test_shutdown_while_the_child_starts_is_clean_and_writes_what_was_recorded(
        kube_client: client.ApiClient, small_burst: None) -> None:
    b = EventBroadcaster(kube_client, sink="auto")
    recorder = b.new_recorder("c")
    for i in range(30):
        recorder.event(_pod(f"p{i}"), "Normal", "R", "m")
    children = eventually(_senders, timeout=30, what="the child starting")
    b.shutdown(10)
    assert len(list_events(kube_client)) == 30
    assert psutil.wait_procs(children, timeout=10)[1] == []
    recorder.event(POD, "Normal", "R", "after shutdown: ignored")
    assert len(list_events(kube_client)) == 30 and _senders() == []


def test_a_client_that_cannot_be_carried_stays_on_the_thread(kube_client: client.ApiClient, small_burst: None,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    kube_client.configuration.refresh_api_key_hook = lambda configuration: None  # type: ignore[assignment]
    b = EventBroadcaster(kube_client, sink="auto")
    recorder = b.new_recorder("c")
    for i in range(60):
        recorder.event(_pod(f"p{i}"), "Normal", "R", "m")
    assert b.flush(30)
    assert len(list_events(kube_client)) == 60
    assert b.sender_pid is None and _senders() == []
    [line] = [r.getMessage() for r in caplog.records if "not a child process" in r.getMessage()]
    assert "refresh_api_key_hook" in line
    b.shutdown(2)


def test_a_child_killed_after_the_move_is_replaced_by_a_thread(kube_client: client.ApiClient, small_burst: None,
                                                                auto_broadcaster: EventBroadcaster,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    b = auto_broadcaster
    recorder = b.new_recorder("c")
    for i in range(30):
        recorder.event(_pod(f"p{i}"), "Normal", "R", "m")
    pid = eventually(lambda: b.sender_pid, timeout=30, what="the sender moved to a child process")
    assert b.flush(30)
    os.kill(pid, signal.SIGKILL)
    eventually(lambda: any("event sender process exited" in r.getMessage() for r in caplog.records),
               what="the log line")
    recorder.event(POD, "Normal", "R", "after the child died")
    assert b.flush(30)
    assert len(list_events(kube_client)) == 31
    assert _senders() == []
