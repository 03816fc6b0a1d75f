"""LeaseLock against the loopback server: CRUD semantics, the wire format, and bounded calls."""

from __future__ import annotations

import datetime as dt
import re
import time

import pytest

from componentbase.leaderelection import (
    LeaderElectionRecord,
    LeaseLock,
    LockConflict,
    LockNotFound,
    LockTimeout,
)
from componentbase.testing import LoopbackAPIServer

from .conftest import LEASE, NAMESPACE, Candidates, raw_lease

pytestmark = pytest.mark.integration

MICRO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def _record(holder: str, **kw: object) -> LeaderElectionRecord:
    t = dt.datetime(2026, 5, 1, 12, 0, 0, tzinfo=dt.UTC)  # zero microseconds: the case isoformat gets wrong
    base: dict[str, object] = {"holder_identity": holder, "lease_duration_seconds": 1, "acquire_time": t,
                               "renew_time": t, "leader_transitions": 0}
    base.update(kw)
    return LeaderElectionRecord(**base)  # type: ignore[arg-type]


def test_get_create_update_conflict(server: LoopbackAPIServer, candidates: Candidates) -> None:
    a = LeaseLock(NAMESPACE, LEASE, candidates.client())
    b = LeaseLock(NAMESPACE, LEASE, candidates.client())
    with pytest.raises(LockNotFound):
        a.get(2.0)
    a.create(_record("a"), 2.0)
    with pytest.raises(LockConflict):
        b.create(_record("b"), 2.0)
    assert b.get(2.0) == _record("a")
    a.update(_record("a", leader_transitions=1), 2.0)
    with pytest.raises(LockConflict):  # b's resourceVersion is stale: someone else won
        b.update(_record("b", leader_transitions=2), 2.0)
    assert b.get(2.0).leader_transitions == 1
    b.update(_record("b", leader_transitions=2), 2.0)
    assert a.get(2.0).holder_identity == "b"


def test_micro_time_and_duration_on_the_wire(server: LoopbackAPIServer, candidates: Candidates) -> None:
    lock = LeaseLock(NAMESPACE, LEASE, candidates.client())
    lock.create(_record("a", lease_duration_seconds=0), 2.0)
    spec = raw_lease(server)["spec"]
    assert spec["acquireTime"] == "2026-05-01T12:00:00.000000Z"
    assert spec["renewTime"] == "2026-05-01T12:00:00.000000Z"
    assert spec["leaseDurationSeconds"] == 1  # never 0: the API requires a positive duration
    t = dt.datetime(2026, 5, 1, 12, 0, 0, 450, tzinfo=dt.UTC)
    lock.update(_record("a", renew_time=t, leader_transitions=4), 2.0)
    spec = raw_lease(server)["spec"]
    assert spec["renewTime"] == "2026-05-01T12:00:00.000450Z" and MICRO.fullmatch(spec["acquireTime"])
    assert spec["leaseTransitions"] == 4 and spec["holderIdentity"] == "a"


def test_a_stalled_call_is_abandoned_at_its_timeout(server: LoopbackAPIServer, candidates: Candidates) -> None:
    lock = LeaseLock(NAMESPACE, LEASE, candidates.client())
    lock.create(_record("a"), 2.0)
    server.faults.set(stall=10.0, resources=["leases"])
    try:
        for call in (lambda: lock.get(0.25), lambda: lock.update(_record("a"), 0.25)):
            t0 = time.monotonic()
            with pytest.raises(LockTimeout):
                call()
            assert time.monotonic() - t0 < 5  # abandoned at its 0.25 s timeout, not held for the 10 s stall
    finally:
        server.faults.clear()
    assert lock.get(2.0).holder_identity == "a"
