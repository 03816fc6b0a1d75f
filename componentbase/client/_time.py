"""Kubernetes timestamps as apimachinery writes and reads them.

``metav1.Time`` is RFC 3339 in UTC with whole seconds (``2026-05-01T12:00:00Z``); ``metav1.MicroTime``
(leases, events.k8s.io) always has six fractional digits (``2026-05-01T12:00:00.000000Z``); the CRI log
format uses nine (RFC3339Nano, written here at fixed width). Reading accepts any RFC 3339 time: a
fraction of any length, ``Z`` or an offset, and returns an aware UTC datetime.
"""

from __future__ import annotations

import datetime as dt
import re

__all__ = ["format_micro_time", "format_time", "parse_micro_time", "parse_time"]

_RFC3339 = re.compile(r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})")


def _utc(t: dt.datetime | float | None) -> dt.datetime:
    if t is None:
        return dt.datetime.now(dt.UTC)
    if isinstance(t, int | float):
        return dt.datetime.fromtimestamp(t, dt.UTC)
    return (t if t.tzinfo else t.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)


def format_time(t: dt.datetime | float | None = None, *, digits: int = 0) -> str:
    """``t`` (a datetime, naive meaning UTC; seconds since the epoch; None: now) as RFC 3339 in UTC.

    ``digits`` fractional digits, always that many (0: ``metav1.Time``, 6: ``MicroTime``, 9: CRI logs;
    Python keeps microseconds, so digits past six are zeros). A fraction is cut, never rounded, as Go does.
    """
    if not 0 <= digits <= 9:
        raise ValueError(f"a timestamp has 0 to 9 fractional digits, not {digits}")
    u = _utc(t)
    stamp = f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}"
    if digits:
        stamp += "." + f"{u.microsecond:06d}000"[:digits]
    return stamp + "Z"


def format_micro_time(t: dt.datetime | float | None = None) -> str:
    """A ``metav1.MicroTime``: UTC, six fractional digits and ``Z``."""
    return format_time(t, digits=6)


def parse_time(text: str) -> dt.datetime:
    """The aware UTC datetime an RFC 3339 string names; ValueError naming the text if it is not one."""
    found = _RFC3339.fullmatch(text.strip()) if isinstance(text, str) else None
    if found is None:
        raise ValueError(f'parsing time "{text}": not an RFC 3339 time such as 2006-01-02T15:04:05Z')
    date, clock, fraction, zone = found.groups()
    micro = ((fraction or "") + "000000")[:6]
    offset = "+00:00" if zone in ("Z", "z") else zone
    try:
        t = dt.datetime.fromisoformat(f"{date}T{clock}.{micro}{offset}")
    except ValueError as err:
        raise ValueError(f'parsing time "{text}": {err}') from None
    return t.astimezone(dt.UTC)


def parse_micro_time(text: str) -> dt.datetime:
    """A ``metav1.MicroTime`` (any RFC 3339 time is accepted, as for ``metav1.Time``)."""
    return parse_time(text)
