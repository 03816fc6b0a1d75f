"""PrioritySort: higher ``spec.priority`` first, then the pod that entered the queue first."""

from __future__ import annotations

from typing import Any

import componentbase
from componentbase_examples.scheduler.framework import Plugin


class PrioritySort(Plugin):
    name = "PrioritySort"

    @componentbase.hookimpl
    def scheduler_less(self, a: Any, b: Any) -> bool:
        """``a`` and ``b`` are queued pods (``queue.QueuedPodInfo``)."""
        pa: int = a.pod.priority
        pb: int = b.pod.priority
        return pa > pb or (pa == pb and bool(a.timestamp < b.timestamp))
