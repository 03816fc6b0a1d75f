"""The elector with in-process candidates (threads) against the loopback server."""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
import time

import pytest

from componentbase.leaderelection import (
    HealthzAdaptor,
    LeaderElectionHealthError,
    LeaderElectionRecord,
    LeaderElector,
    LeaseLock,
)
from componentbase.testing import LoopbackAPIServer, eventually

from .conftest import LEASE, NAMESPACE, TIMINGS, Candidates, Recorder, raw_lease
from .proxy import BlackholeProxy

pytestmark = pytest.mark.integration

LD, RD, RP = TIMINGS["lease_duration"], TIMINGS["renew_deadline"], TIMINGS["retry_period"]
TIMEOUT = min(LD - RD, RD / 2)  # the default request timeout
MICRO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
#: Scheduling slack for assertions on a shared 2-core machine.
SLACK = 0.25
#: A lease long enough that what waits for its expiry stands apart, by seconds, from what does not.
LONG = 5.0


def _leader(recorder: Recorder, timeout: float = 5.0, exclude: tuple[str, ...] = ()) -> str:
    iv = recorder.wait_for(lambda: [i for i in recorder.intervals if i.end is None and i.identity not in exclude],
                           timeout)
    assert iv, "no leader elected"
    return str(iv[0].identity)


def test_exactly_one_leader_among_five(candidates: Candidates, recorder: Recorder,
                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="componentbase.leaderelection")
    threads = {f"c{i}": candidates.start(f"c{i}") for i in range(5)}
    leader = _leader(recorder)
    end = time.monotonic() + 2.0
    while time.monotonic() < end:
        leading = [name for name, t in threads.items() if t.elector.is_leading()]
        assert leading == [leader]
        assert [iv.identity for iv in recorder.current()] == [leader]
        time.sleep(0.02)
    assert len(recorder.intervals) == 1 and recorder.max_overlap() == 0
    assert all(t.elector.get_leader() == leader for t in threads.values())
    assert [t.elector.is_leader() for t in threads.values()].count(True) == 1
    assert recorder.wait_for(lambda: len(recorder.new_leaders) == 5, 2.0)
    assert all(seen == [leader] for seen in recorder.new_leaders.values())
    text = caplog.text
    for name in threads:
        assert f"leader election candidate {name} for lease {NAMESPACE}/{LEASE}" in text
    assert f"successfully acquired lease {NAMESPACE}/{LEASE}" in text
    assert f"new leader elected: {leader}" in text
    assert f"attempting to acquire leader lease {NAMESPACE}/{LEASE}..." in text


def test_release_on_clean_stop(server: LoopbackAPIServer, candidates: Candidates, recorder: Recorder) -> None:
    statuses: list[tuple[str, bool]] = []
    t = candidates.start("solo", release_on_cancel=True, status_observer=lambda n, v: statuses.append((n, v)))
    _leader(recorder)
    before = raw_lease(server)["spec"]
    assert t.stop(5)
    spec = raw_lease(server)["spec"]
    assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1
    assert spec["leaseTransitions"] == before["leaseTransitions"] == 0
    assert spec["renewTime"] == spec["acquireTime"] > before["renewTime"]
    assert recorder.intervals[0].end is not None and recorder.stopped == ["solo"]
    name = f"{NAMESPACE}/{LEASE}"
    assert statuses == [(name, False), (name, True), (name, False)]
    assert not t.elector.is_leader() and t.elector.get_leader() == ""


def test_graceful_handoff_does_not_wait_for_expiry_and_transitions_are_counted(
        server: LoopbackAPIServer, candidates: Candidates, recorder: Recorder) -> None:
    """How fast a handoff is (about a retry period) is benchmarks/leader_failover.py's figure; here, that it
    does not wait out the lease."""
    threads = {f"c{i}": candidates.start(f"c{i}", release_on_cancel=True, lease_duration=LONG) for i in range(4)}
    leader = _leader(recorder)
    first = raw_lease(server)["spec"]
    renewed = eventually(lambda: (spec := raw_lease(server)["spec"])["renewTime"] > first["renewTime"] and spec,
                         3 * RP + 5, what="the leader to renew")
    assert renewed["acquireTime"] == first["acquireTime"]
    assert renewed["leaseTransitions"] == 0
    for n in range(1, 4):
        t0 = time.monotonic()
        assert threads[leader].stop(5)
        gone = {iv.identity for iv in recorder.intervals}
        new = _leader(recorder, 5.0, exclude=tuple(gone))
        took = recorder.intervals[-1].start - t0
        assert took < LONG / 2, f"handoff took {took:.3f}s"  # released: nobody waited out the 5 s lease
        assert recorder.max_overlap() == 0
        spec = raw_lease(server)["spec"]
        assert spec["holderIdentity"] == new and spec["leaseTransitions"] == n
        assert MICRO.fullmatch(spec["acquireTime"]) and MICRO.fullmatch(spec["renewTime"])
        assert spec["acquireTime"] > renewed["acquireTime"]
        leader, renewed = new, spec


def test_takes_over_an_expired_lease_judged_by_the_local_clock(server: LoopbackAPIServer,
                                                               candidates: Candidates,
                                                               recorder: Recorder) -> None:
    # The ghost's timestamps are far in the future: only the local clock since we saw it may count.
    future = dt.datetime(2099, 1, 1, tzinfo=dt.UTC)
    ghost = LeaderElectionRecord(holder_identity="ghost", lease_duration_seconds=1, acquire_time=future,
                                 renew_time=future, leader_transitions=7)
    LeaseLock(NAMESPACE, LEASE, candidates.client()).create(ghost, 2.0)
    t0 = time.monotonic()
    candidates.start("heir")
    _leader(recorder, 5.0)
    took = recorder.intervals[0].start - t0
    assert LD <= took < LD + 1.0, took  # then within a retry period (0.1 s), with a loaded machine's slack
    spec = raw_lease(server)["spec"]
    assert spec["holderIdentity"] == "heir" and spec["leaseTransitions"] == 8


def test_reacquires_its_own_lease_at_once_keeping_acquire_time(server: LoopbackAPIServer,
                                                              candidates: Candidates,
                                                              recorder: Recorder) -> None:
    past = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    mine = LeaderElectionRecord(holder_identity="me", lease_duration_seconds=1, acquire_time=past,
                                renew_time=past, leader_transitions=2)
    LeaseLock(NAMESPACE, LEASE, candidates.client()).create(mine, 2.0)
    t0 = time.monotonic()
    candidates.start("me", lease_duration=LONG)
    _leader(recorder, LONG + 2)
    assert recorder.intervals[0].start - t0 < LONG / 2  # at once, not after the lease's duration
    spec = raw_lease(server)["spec"]
    assert spec["acquireTime"] == "2020-01-01T00:00:00.000000Z" and spec["leaseTransitions"] == 2


def test_leader_stops_by_renew_deadline_when_the_api_stalls(server: LoopbackAPIServer,
                                                            candidates: Candidates,
                                                            recorder: Recorder) -> None:
    candidates.start("a", lease_duration=2 * LD)
    _leader(recorder)
    time.sleep(2 * RP)
    stalled_at = time.monotonic()
    server.faults.set(stall=30.0, resources=["leases"])
    try:
        ended = recorder.wait_for(lambda: recorder.intervals[0].end, 2 * LD + 2.0)
        assert ended
        lead_for = ended - stalled_at
        # Its last renew was before the stall, so it stops within RD + TIMEOUT of stalled_at (0.9 s): before
        # its lease (twice as long, so a loaded machine has a second to spare) could pass to another.
        assert lead_for < 2 * LD, lead_for
        assert recorder.wait_for(lambda: recorder.stopped, 2.0)
    finally:
        server.faults.clear()


def test_cut_off_leader_stops_in_time_and_fails_healthz(server: LoopbackAPIServer, candidates: Candidates,
                                                        recorder: Recorder) -> None:
    proxy = BlackholeProxy("127.0.0.1", server.port)
    try:
        # Its lease is twice the others': they honour the record's duration, and stopping by the renew
        # deadline (RD + TIMEOUT, 0.9 s) stands a second apart from the lease passing to another.
        a = candidates.start("a", api=candidates.client(proxy.url), lease_duration=2 * LD)
        _leader(recorder)
        health = HealthzAdaptor(0.3)
        health.set_leader_election(a.elector)  # attached after creation, as SetLeaderElection
        others = [candidates.start(f"b{i}") for i in range(3)]
        assert recorder.wait_for(lambda: len(recorder.new_leaders) == 4, 3.0)
        health.check()
        cut_at = time.monotonic()
        proxy.cut.set()
        ended = recorder.wait_for(lambda: recorder.intervals[0].end, 2 * LD + 2.0)
        assert ended
        stopped_after = ended - cut_at
        assert stopped_after < 2 * LD, stopped_after
        assert not a.elector.is_leading()
        health.check()  # not expired yet: the stop was at renew_deadline < lease_duration
        new = _leader(recorder, 2 * LD + 3 * RP + 2.0, exclude=("a",))
        assert new != "a" and recorder.max_overlap() == 0
        # The cut-off process still believes it leads (it cannot see the new record) ...
        assert a.elector.is_leader()
        deadline = cut_at + 2 * LD + health.timeout + SLACK
        time.sleep(max(0.0, deadline - time.monotonic()))
        message = f"failed election to renew leadership on lease {NAMESPACE}/{LEASE}"
        with pytest.raises(LeaderElectionHealthError, match=message):
            health.check()
        # ... while the new leader is healthy.
        new_health = HealthzAdaptor(0.3)
        new_health.set_leader_election(next(t.elector for t in others if t.elector.identity == new))
        new_health.check()
    finally:
        proxy.cut.clear()
        proxy.close()


def test_work_that_ignores_stop_keeps_the_lease_unreleased(server: LoopbackAPIServer, candidates: Candidates,
                                                           recorder: Recorder) -> None:
    release = threading.Event()
    t = candidates.start("stubborn", release_on_cancel=True, stop_grace=0.2, work=lambda stop: release.wait(5))
    _leader(recorder)
    t0 = time.monotonic()
    assert t.stop(5)
    assert time.monotonic() - t0 < 2.5  # the 0.2 s grace, not the work's 5 s
    assert raw_lease(server)["spec"]["holderIdentity"] == "stubborn"  # others must wait for expiry
    release.set()


def test_stop_while_campaigning_returns_promptly(candidates: Candidates, recorder: Recorder) -> None:
    candidates.start("a")
    _leader(recorder)
    b = candidates.start("b")
    assert recorder.wait_for(lambda: "b" in recorder.new_leaders, 2.0)
    t0 = time.monotonic()
    assert b.stop(5)
    assert time.monotonic() - t0 < 1.0  # a retry period and a request at most (0.42 s); a second is noticed
    assert recorder.stopped == ["b"] and [iv.identity for iv in recorder.intervals] == ["a"]


def test_run_twice_at_once_is_refused(candidates: Candidates) -> None:
    elector = LeaderElector(candidates.config("a"))
    t = elector.run_in_thread()
    try:
        time.sleep(0.05)
        with pytest.raises(RuntimeError, match="already running"):
            elector.run(threading.Event())
    finally:
        t.stop(5)
