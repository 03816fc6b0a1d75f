"""The record, its wire form, expiry judged on the local clock, config validation and identity: no server."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
import threading
from typing import Any

import attrs
import pytest

from componentbase.client import format_micro_time, parse_micro_time
from componentbase.componentconfig import LeaderElectionConfiguration
from componentbase.leaderelection import (
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElectionConfigError,
    LeaderElectionRecord,
    LeaderElector,
    LeaseLock,
    LockNotFound,
    default_identity,
    record_from_spec,
    record_to_spec,
    wire_lease_duration,
)
from componentbase.testing import FakeClock
from componentbase.util import Duration

UTC = dt.UTC
NO_CLIENT: Any = object()  # these tests never reach a server
CALLBACKS = LeaderCallbacks(on_started_leading=lambda stop: None, on_stopped_leading=lambda: None)


@pytest.mark.unit
def test_micro_time_always_has_six_digits_and_z() -> None:
    assert format_micro_time(dt.datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)) == "2026-05-01T12:00:00.000000Z"
    assert format_micro_time(dt.datetime(2026, 5, 1, 12, 0, 0, 1200, tzinfo=UTC)) == "2026-05-01T12:00:00.001200Z"
    plus2 = dt.timezone(dt.timedelta(hours=2))
    assert format_micro_time(dt.datetime(2026, 5, 1, 14, 0, 0, tzinfo=plus2)) == "2026-05-01T12:00:00.000000Z"


@pytest.mark.unit
@pytest.mark.parametrize("text", ["2026-05-01T12:00:00.000000Z", "2026-05-01T12:00:00Z",
                                  "2026-05-01T14:00:00+02:00", "2026-05-01T12:00:00.000000+00:00"])
def test_micro_time_parses_rfc3339(text: str) -> None:
    assert parse_micro_time(text) == dt.datetime(2026, 5, 1, 12, tzinfo=UTC)


@pytest.mark.unit
@pytest.mark.parametrize(("seconds", "wire"), [(0.1, 1), (1.0, 1), (1.2, 2), (15, 15), (15.0000000001, 15)])
def test_wire_lease_duration_rounds_up_to_at_least_one(seconds: float, wire: int) -> None:
    assert wire_lease_duration(seconds) == wire


@pytest.mark.unit
def test_record_round_trips_through_spec() -> None:
    t = dt.datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
    rec = LeaderElectionRecord(holder_identity="a", lease_duration_seconds=15, acquire_time=t,
                               renew_time=t + dt.timedelta(microseconds=5), leader_transitions=3)
    spec = record_to_spec(rec)
    assert spec == {"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 3,
                    "acquireTime": "2026-05-01T12:00:00.000000Z", "renewTime": "2026-05-01T12:00:00.000005Z"}
    assert record_from_spec(spec) == rec
    assert record_from_spec({}) == LeaderElectionRecord()
    assert record_from_spec(None) == LeaderElectionRecord()


def _config(**kw: object) -> LeaderElectionConfig:
    base: dict[str, object] = {"lock": LeaseLock("ns", "name", NO_CLIENT), "identity": "me", "callbacks": CALLBACKS,
                               "lease_duration": 1.0, "renew_deadline": 0.6, "retry_period": 0.1}
    base.update(kw)
    return LeaderElectionConfig(**base)  # type: ignore[arg-type]


@pytest.mark.unit
@pytest.mark.parametrize(("kw", "message"), [
    ({"lease_duration": 0.6}, "lease_duration must be greater than renew_deadline"),
    ({"retry_period": 0.5}, "renew_deadline must be greater than retry_period*1.2"),
    ({"retry_period": 0.0}, "retry_period must be greater than zero"),
    ({"renew_deadline": -1.0}, "renew_deadline must be greater than zero"),
    ({"identity": ""}, "identity must not be empty"),
    ({"callbacks": LeaderCallbacks(on_started_leading=None, on_stopped_leading=lambda: None)},  # type: ignore[arg-type]
     "on_started_leading callback must not be None"),
    ({"request_timeout": 0.0}, "request_timeout must be greater than zero"),
])
def test_config_validation_matches_client_go(kw: dict[str, object], message: str) -> None:
    with pytest.raises(LeaderElectionConfigError, match=re.escape(message)):
        LeaderElector(_config(**kw))


@pytest.mark.unit
def test_default_request_timeout_fits_the_slack() -> None:
    cfg = _config()
    assert cfg.effective_request_timeout == pytest.approx(0.3)  # min(1.0 - 0.6, 0.6 / 2)
    assert _config(lease_duration=0.7).effective_request_timeout == pytest.approx(0.1)
    assert _config().effective_stop_grace == pytest.approx(0.6)


@pytest.mark.unit
def test_from_configuration() -> None:
    cfg = LeaderElectionConfiguration(lease_duration=Duration(1.5), renew_deadline=Duration(1.0),
                                      retry_period=Duration(0.2),
                                      resource_name="kube-scheduler", resource_namespace="kube-system")
    le = LeaderElectionConfig.from_configuration(cfg, NO_CLIENT, CALLBACKS, identity="x", release_on_cancel=True)
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (1.5, 1.0, 0.2)
    assert le.lock.describe() == "kube-system/kube-scheduler" and le.identity == "x" and le.release_on_cancel
    assert le.lease_name == "kube-scheduler"
    generated = LeaderElectionConfig.from_configuration(cfg, NO_CLIENT, CALLBACKS).identity
    assert re.fullmatch(r".+_[0-9a-f-]{36}", generated)
    with pytest.raises(LeaderElectionConfigError, match="not supported"):
        LeaderElectionConfig.from_configuration(
            LeaderElectionConfiguration(resource_lock="endpoints", resource_name="a", resource_namespace="b"),
            NO_CLIENT, CALLBACKS)
    with pytest.raises(LeaderElectionConfigError, match="renew_deadline"):
        LeaderElectionConfig.from_configuration(
            LeaderElectionConfiguration(renew_deadline=Duration(20), resource_name="a", resource_namespace="b"),
            NO_CLIENT, CALLBACKS)


@pytest.mark.unit
def test_default_identity_is_hostname_and_uuid() -> None:
    import socket

    a, b = default_identity(), default_identity()
    assert a != b
    host, _, uid = a.rpartition("_")
    assert host == socket.gethostname()
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", uid)


@pytest.mark.process
def test_importing_the_package_does_not_import_the_client() -> None:
    code = "import sys, componentbase.leaderelection; print('kubernetes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.unit
def test_healthz_adaptor_without_elector_passes() -> None:
    from componentbase.leaderelection import HealthzAdaptor

    h = HealthzAdaptor(0.5)
    assert h.name == "leaderElection"
    h.check()


class MemoryLock:
    """A lock in memory; another holder renews (changes the record) on every read until ``stops_renewing_at``."""

    def __init__(self, clock: FakeClock, holder: LeaderElectionRecord | None, stops_renewing_at: float = 0.0) -> None:
        self.clock = clock
        self.record = holder
        self.stops_renewing_at = stops_renewing_at

    def get(self, timeout: float) -> LeaderElectionRecord:
        if self.record is None:
            raise LockNotFound("missing", 404)
        if self.record.holder_identity == "other" and self.clock.monotonic() < self.stops_renewing_at:
            self.record = attrs.evolve(self.record, renew_time=self.clock.now())
        return self.record

    def create(self, record: LeaderElectionRecord, timeout: float) -> None:
        self.record = record

    def update(self, record: LeaderElectionRecord, timeout: float) -> None:
        self.record = record

    def describe(self) -> str:
        return "memory/lease"


def _campaign(lock: MemoryLock, clock: FakeClock) -> float:
    """Run a candidate until it leads; the fake time at which it did."""
    stop = threading.Event()
    acquired: list[float] = []

    def observe(name: str, leading: bool) -> None:
        if leading:
            acquired.append(clock.monotonic())
            stop.set()

    config = LeaderElectionConfig(lock=lock, identity="me", callbacks=CALLBACKS, lease_duration=15.0,
                                  renew_deadline=10.0, retry_period=2.0, status_observer=observe, clock=clock)
    LeaderElector(config).run(stop)
    assert acquired, "never led"
    return acquired[0]


def _held_by_other(renewed: dt.datetime) -> LeaderElectionRecord:
    return LeaderElectionRecord(holder_identity="other", lease_duration_seconds=15, acquire_time=renewed,
                                renew_time=renewed)


@pytest.mark.unit
def test_an_unchanged_record_expires_lease_duration_after_it_was_first_seen() -> None:
    clock = FakeClock()
    start = clock.monotonic()
    # Renewed "in the future" by the other host's wall clock: the timestamps are never trusted.
    lock = MemoryLock(clock, _held_by_other(clock.now() + dt.timedelta(hours=1)))
    took = _campaign(lock, clock) - start
    assert 15.0 <= took <= 15.0 + 2.0 * 2.2  # the lease, then at most one jittered retry period
    assert lock.record is not None and lock.record.holder_identity == "me"
    assert lock.record.leader_transitions == 1


@pytest.mark.unit
def test_each_change_of_the_record_restarts_the_expiry() -> None:
    clock = FakeClock()
    start = clock.monotonic()
    # Renewed an hour ago by its wall clock, yet alive: it keeps changing the record for 30 s.
    lock = MemoryLock(clock, _held_by_other(clock.now() - dt.timedelta(hours=1)), stops_renewing_at=start + 30.0)
    took = _campaign(lock, clock) - start
    assert 30.0 + 15.0 - 2.0 * 2.2 <= took <= 30.0 + 15.0 + 2.0 * 2.2


@pytest.mark.unit
def test_a_free_lease_is_taken_at_once_with_times_from_the_clock() -> None:
    clock = FakeClock()
    start = clock.monotonic()
    lock = MemoryLock(clock, None)
    assert _campaign(lock, clock) == start  # no wait at all
    assert lock.record is not None
    assert lock.record.acquire_time == lock.record.renew_time
    assert format_micro_time(lock.record.acquire_time) == "2026-05-01T12:00:00.000000Z"  # FakeClock's wall start
    assert record_to_spec(lock.record)["leaseDurationSeconds"] == 15
