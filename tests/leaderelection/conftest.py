"""Fixtures: a real loopback API server, in-process candidates, and the intervals they led."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

from componentbase.leaderelection import (
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
    LeaseLock,
)
from componentbase.testing import LoopbackAPIServer

NAMESPACE = "kube-system"
LEASE = "kube-scheduler"

#: Short timings so the suite runs in seconds; the slack (lease - deadline) absorbs a busy 2-core box.
TIMINGS: dict[str, float] = {"lease_duration": 1.0, "renew_deadline": 0.6, "retry_period": 0.1}


@pytest.fixture
def server() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer(seed=7) as srv:
        yield srv


@attrs.define
class Interval:
    identity: str
    start: float
    end: float | None = None


@attrs.define
class Recorder:
    """Leading intervals as the work saw them: from on_started_leading until its stop event fired."""

    intervals: list[Interval] = attrs.field(factory=list)
    new_leaders: dict[str, list[str]] = attrs.field(factory=dict)
    stopped: list[str] = attrs.field(factory=list)
    mu: threading.Lock = attrs.field(factory=threading.Lock)
    changed: threading.Condition = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.changed = threading.Condition(self.mu)

    def callbacks(self, identity: str, work: Callable[[threading.Event], None] | None = None) -> LeaderCallbacks:
        def lead(stop: threading.Event) -> None:
            iv = Interval(identity, time.monotonic())
            with self.changed:
                self.intervals.append(iv)
                self.changed.notify_all()
            (work or (lambda s: s.wait()))(stop)
            stop.wait()
            with self.changed:
                iv.end = time.monotonic()
                self.changed.notify_all()

        def stopped() -> None:
            with self.changed:
                self.stopped.append(identity)
                self.changed.notify_all()

        def new_leader(holder: str) -> None:
            with self.changed:
                self.new_leaders.setdefault(identity, []).append(holder)
                self.changed.notify_all()

        return LeaderCallbacks(on_started_leading=lead, on_stopped_leading=stopped, on_new_leader=new_leader)

    def current(self) -> list[Interval]:
        with self.mu:
            return [iv for iv in self.intervals if iv.end is None]

    def wait_for(self, pred: Callable[[], Any], timeout: float) -> Any:
        """Wait until ``pred()`` (called under the lock) is truthy; return it or None."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                value = pred()
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.changed.wait(left)

    def max_overlap(self, now: float | None = None) -> float:
        return max_overlap([(iv.start, iv.end) for iv in self.intervals], now)


def max_overlap(intervals: list[tuple[float, float | None]], now: float | None = None) -> float:
    """The longest time any two intervals were open together (0 when leadership never overlapped)."""
    closed = sorted((s, e if e is not None else (now or time.monotonic())) for s, e in intervals)
    worst = 0.0
    for i, (_, e1) in enumerate(closed):
        for s2, e2 in closed[i + 1:]:
            if s2 >= e1:
                break
            worst = max(worst, min(e1, e2) - s2)
    return worst


@attrs.define
class Candidates:
    """Builds in-process electors against one server and stops them all at teardown."""

    server: LoopbackAPIServer
    recorder: Recorder
    threads: list[Any] = attrs.field(factory=list)
    clients: list[Any] = attrs.field(factory=list)

    def client(self, url: str | None = None) -> Any:
        import kubernetes.client as kc

        if url is None:
            api = self.server.api_client()
        else:
            cfg = kc.Configuration()
            cfg.host = url
            api = kc.ApiClient(cfg)
        self.clients.append(api)
        return api

    def config(self, identity: str, api: Any = None, work: Callable[[threading.Event], None] | None = None,
               **overrides: Any) -> LeaderElectionConfig:
        kw: dict[str, Any] = {**TIMINGS, **overrides}
        return LeaderElectionConfig(
            lock=LeaseLock(NAMESPACE, LEASE, api if api is not None else self.client()),
            identity=identity,
            callbacks=self.recorder.callbacks(identity, work),
            **kw,
        )

    def start(self, identity: str, api: Any = None, **overrides: Any) -> Any:
        thread = LeaderElector(self.config(identity, api, **overrides)).run_in_thread()
        self.threads.append(thread)
        return thread

    def stop_all(self) -> None:
        for t in self.threads:
            t.stop_event.set()
        for t in self.threads:
            t.join(5)
        for c in self.clients:
            c.close()


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def candidates(server: LoopbackAPIServer, recorder: Recorder) -> Iterator[Candidates]:
    c = Candidates(server, recorder)
    try:
        yield c
    finally:
        c.stop_all()


def raw_lease(server: LoopbackAPIServer) -> dict[str, Any]:
    """The Lease as the server sent it (its wire timestamps, not the client's datetimes): the official
    client's read, its JSON left undecoded."""
    import json

    import kubernetes.client as kc

    with server.api_client() as api:
        resp = kc.CoordinationV1Api(api).read_namespaced_lease(LEASE, NAMESPACE, _preload_content=False,
                                                               _request_timeout=5)
        return json.loads(resp.data)  # type: ignore[no-any-return]
