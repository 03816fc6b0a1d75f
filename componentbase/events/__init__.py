"""Kubernetes Events, as client-go's ``tools/record``: a recorder that aggregates and rate-limits, and a
broadcaster that writes them, in a thread or a child process.
"""

from __future__ import annotations

from componentbase.events._broadcaster import (
    NORMAL,
    WARNING,
    EventBroadcaster,
    EventRecorder,
    object_reference,
)

__all__ = [
    "NORMAL",
    "WARNING",
    "EventBroadcaster",
    "EventRecorder",
    "object_reference",
]
