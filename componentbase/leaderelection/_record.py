"""The leader election record and its mapping onto a ``coordination.k8s.io/v1`` LeaseSpec.

The record is what candidates compare to notice that a holder is alive: any change restarts the
observer's local expiry clock. It never judges expiry from the timestamps themselves, because
those come from another host's wall clock.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import attrs

from componentbase.client import format_micro_time, parse_micro_time

__all__ = [
    "LeaderElectionRecord",
    "record_from_spec",
    "record_to_spec",
    "wire_lease_duration",
]

_UTC = dt.UTC


def wire_lease_duration(seconds: float) -> int:
    """Whole seconds for ``leaseDurationSeconds``: rounded up, so a reader never waits less than we hold."""
    return max(1, math.ceil(seconds - 1e-9))


@attrs.frozen(kw_only=True)
class LeaderElectionRecord:
    """client-go's LeaderElectionRecord; equality is how a candidate notices the holder renewed."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: dt.datetime | None = None
    renew_time: dt.datetime | None = None
    leader_transitions: int = 0


def _as_time(value: Any) -> dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=_UTC)).astimezone(_UTC)
    return parse_micro_time(str(value))


def _get(spec: Any, wire: str, attr: str) -> Any:
    """Read a LeaseSpec field from either a client model or a decoded JSON dict."""
    if isinstance(spec, dict):
        return spec.get(wire)
    return getattr(spec, attr, None)


def record_from_spec(spec: Any) -> LeaderElectionRecord:
    """A LeaseSpec (model or wire dict) as a record; absent fields read as zero values, like client-go."""
    if spec is None:
        return LeaderElectionRecord()
    return LeaderElectionRecord(
        holder_identity=_get(spec, "holderIdentity", "holder_identity") or "",
        lease_duration_seconds=int(_get(spec, "leaseDurationSeconds", "lease_duration_seconds") or 0),
        acquire_time=_as_time(_get(spec, "acquireTime", "acquire_time")),
        renew_time=_as_time(_get(spec, "renewTime", "renew_time")),
        leader_transitions=int(_get(spec, "leaseTransitions", "lease_transitions") or 0),
    )


def record_to_spec(record: LeaderElectionRecord) -> dict[str, Any]:
    """The record as a LeaseSpec wire dict (MicroTimes already formatted)."""
    spec: dict[str, Any] = {
        "holderIdentity": record.holder_identity,
        "leaseDurationSeconds": max(1, record.lease_duration_seconds),
        "leaseTransitions": record.leader_transitions,
    }
    if record.acquire_time is not None:
        spec["acquireTime"] = format_micro_time(record.acquire_time)
    if record.renew_time is not None:
        spec["renewTime"] = format_micro_time(record.renew_time)
    return spec
