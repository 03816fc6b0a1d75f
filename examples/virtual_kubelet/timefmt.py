"""Kubernetes timestamps: RFC 3339 in UTC with whole seconds (``metav1.Time``), as the API server writes them."""

from __future__ import annotations

import datetime as dt

__all__ = ["now", "parse_time", "rfc3339"]


def rfc3339(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now() -> str:
    return rfc3339(dt.datetime.now(dt.UTC))


def parse_time(text: str) -> dt.datetime | None:
    """The time a ``metav1.Time`` string names, or None when it is empty or malformed."""
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
