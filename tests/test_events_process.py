"""``EventBroadcaster(sink="process")`` against the loopback API server: the sender in a child process."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator

import psutil
import pytest
from kubernetes import client

from componentbase.events import EventBroadcaster
from componentbase.testing import (
    LoopbackAPIServer,
    User,
    eventually,
)
from tests.events_support import POD, list_events


def _gone(pid: int) -> bool:
    """No such process, or only a zombie waiting for a reaper that is not its parent."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.fixture
def process_broadcaster(kube_client: client.ApiClient) -> Iterator[EventBroadcaster]:
    b = EventBroadcaster(kube_client, retry_delay=0.02, sink="process", max_similar=3)
    b.start()
    yield b
    b.shutdown(2)


@pytest.mark.process
def test_events_arrive_from_a_child_process_repeats_aggregate_and_many_threads_lose_none() -> None:
    """One child process for three claims (each child imports the client first, half a CPU-second): Events
    arrive from it and repeats aggregate; it carries the client's bearer token; Events recorded by many threads
    at once all arrive."""
    with LoopbackAPIServer(tokens={"s3cret": User("sched", "u1", ("system:masters",))}) as server:
        api = server.api_client()
        b = EventBroadcaster(api, retry_delay=0.02, sink="process", max_similar=3)
        b.start()
        try:
            assert b.sink == "process"
            assert b.sender_pid is not None and b.sender_pid != os.getpid()
            recorder = b.new_recorder("default-scheduler", host="host-a")
            for _ in range(5):
                recorder.event(POD, "Normal", "Scheduled", "Successfully assigned default/web-1 to n1",
                               action="Binding")
            for i in range(5):  # more than max_similar messages: combined into one Event
                recorder.event(POD, "Warning", "BackOff", f"attempt {i}")
            assert b.flush(30)  # a bound, not a speed: the child imports the client first
            assert b.sink == "process"
            events = list_events(api)  # an unauthenticated create would have been refused: none would be here
            [scheduled] = [e for e in events if e["reason"] == "Scheduled"]
            assert scheduled["count"] == 5
            assert scheduled["source"] == {"component": "default-scheduler", "host": "host-a"}
            assert scheduled["involvedObject"]["uid"] == "uid-1"
            assert scheduled["action"] == "Binding"
            backoff = sorted((e["message"], e["count"]) for e in events if e["reason"] == "BackOff")
            assert backoff == [("(combined from similar events): attempt 4", 2), ("attempt 0", 1),
                               ("attempt 1", 1), ("attempt 2", 1)]
            assert b.sent == len(events)
            _many_threads_record_and_none_is_left_behind(api, b)
        finally:
            b.shutdown(2)
            api.close()


def _many_threads_record_and_none_is_left_behind(api: client.ApiClient, b: EventBroadcaster) -> None:
    """The feeder is woken only when idle and sends what gathered meanwhile: none may be left behind."""
    before, sent = len(list_events(api)), b.sent
    recorder = b.new_recorder("c")

    def record(t: int) -> None:
        for i in range(25):
            recorder.event({**POD, "metadata": {"name": f"p{t}-{i}", "namespace": "default"}}, "Normal", "R", "m")
            if i % 5 == t % 5:
                time.sleep(0.001 * t)  # threads fall in and out of step with the feeder

    threads = [threading.Thread(target=record, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert b.flush(30)
    assert len(list_events(api)) == before + 200
    assert b.sent == sent + 200


@pytest.mark.process
def test_full_queue_drops_with_one_line_and_shutdown_is_bounded(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="componentbase.events")
    with LoopbackAPIServer() as server:
        server.faults.set(stall=30, verbs=["create"], resources=["events"])
        api = server.api_client()
        b = EventBroadcaster(api, queue_size=5, request_timeout=30, sink="process")
        recorder = b.new_recorder("c")
        started = time.monotonic()
        for i in range(50):
            recorder.event(POD, "Normal", "R", f"message {i}")
        assert time.monotonic() - started < 5  # blocking would wait out the 30 s stall
        assert len([r for r in caplog.records if "event queue full" in r.getMessage()]) == 1
        assert not b.flush(0.2)  # the server holds the first create
        pid = b.sender_pid
        assert pid is not None
        started = time.monotonic()
        b.shutdown(0.5)
        assert time.monotonic() - started < 10  # bounded: the stalled create would hold it 30 s
        assert _gone(pid)
        server.faults.clear()
        api.close()


@pytest.mark.process
def test_after_shutdown_the_child_is_gone_and_nothing_is_lost(kube_client: client.ApiClient) -> None:
    b = EventBroadcaster(kube_client, sink="process")
    recorder = b.new_recorder("c")
    for i in range(20):
        recorder.event({**POD, "metadata": {"name": f"p{i}", "namespace": "default"}}, "Normal", "R", "m")
    pid = b.sender_pid
    assert pid is not None
    b.shutdown(30)  # flushes first
    assert len(list_events(kube_client)) == 20
    assert _gone(pid)
    recorder.event(POD, "Normal", "R", "after shutdown: ignored")
    assert len(list_events(kube_client)) == 20


@pytest.mark.process
def test_a_killed_child_is_replaced_by_a_thread_with_one_line(kube_client: client.ApiClient,
                                                               process_broadcaster: EventBroadcaster,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    b = process_broadcaster
    pid = b.sender_pid
    assert pid is not None
    assert b.wait_ready(30)
    # A SIGTERM to the whole process group (a shell, systemd) reaches the child too: the parent decides.
    os.kill(pid, signal.SIGTERM)
    b.new_recorder("c").event(POD, "Normal", "R", "after a SIGTERM to the child")
    assert b.flush(30)
    assert b.sender_pid == pid and psutil.pid_exists(pid)
    feeders = [t for t in threading.enumerate() if t.name == "event-sender-feed"]
    os.kill(pid, signal.SIGKILL)
    eventually(lambda: any("event sender process exited" in r.getMessage() for r in caplog.records),
               what="the log line")
    # The thread that fed the child ends with it, close() or not (it once waited forever, holding up exit).
    eventually(lambda: not any(t.is_alive() for t in feeders), 5, what="the feeder thread to end")
    b.new_recorder("c").event(POD, "Normal", "R", "after the child died")
    assert b.flush(30)
    assert [e["message"] for e in list_events(kube_client)] == ["after a SIGTERM to the child",
                                                                 "after the child died"]
    assert len([r for r in caplog.records if "event sender process exited" in r.getMessage()]) == 1


@pytest.mark.integration
def test_a_broadcaster_shut_down_starts_no_child(kube_client: client.ApiClient) -> None:
    """Nothing would stop a sender started after ``shutdown``: its child would outlive the component."""
    b = EventBroadcaster(kube_client, sink="process")
    b.shutdown(1)
    b.start()
    assert b.wait_ready(1)
    b.new_recorder("c").event(POD, "Normal", "R", "m")
    assert b.sender_pid is None and b.sent == 0


@pytest.mark.integration
def test_a_client_that_cannot_be_carried_sends_from_a_thread(kube_client: client.ApiClient,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    kube_client.configuration.refresh_api_key_hook = lambda configuration: None  # type: ignore[assignment]
    b = EventBroadcaster(kube_client, sink="process")
    b.new_recorder("c").event(POD, "Normal", "R", "m")
    assert b.flush(30)
    assert b.sink == "thread" and b.sender_pid is None
    [line] = [r.getMessage() for r in caplog.records if "not a child process" in r.getMessage()]
    assert "refresh_api_key_hook" in line
    assert len(list_events(kube_client)) == 1
    b.shutdown(2)


PARENT = textwrap.dedent('''
    import sys, time
    from componentbase.events import EventBroadcaster
    from kubernetes import config
    b = EventBroadcaster(config.new_client_from_config(config_file=sys.argv[1]), sink="process")
    b.new_recorder("c").event({"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}, "Normal", "R", "m")
    b.flush(30)
    print(b.sender_pid, flush=True)
    time.sleep(60)
''')


@pytest.mark.process
def test_the_child_exits_when_its_parent_is_killed(kube_apiserver: LoopbackAPIServer) -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, kube_apiserver.kubeconfig_path], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert not _gone(child)
    finally:
        parent.kill()
        parent.wait(10)
    eventually(lambda: _gone(child), timeout=5, what=f"the event sender {child} to exit")
