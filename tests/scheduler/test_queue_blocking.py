"""The scheduling queue's ``pop`` against the real clock: it blocks until a pod comes or a backoff window ends."""

from __future__ import annotations

import threading
import time

import pytest

from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.queue import SchedulingQueue

from .builders import pod

pytestmark = pytest.mark.integration


def test_pop_blocks_until_a_pod_arrives_or_its_backoff_window_ends() -> None:
    q = SchedulingQueue(initial_backoff=0.05, max_backoff=0.05)
    start = time.monotonic()
    assert q.pop(timeout=0.05) is None and time.monotonic() - start >= 0.05
    threading.Timer(0.05, lambda: q.add(PodInfo(pod("late")))).start()
    qp = q.pop(timeout=5)
    assert qp is not None and qp.pod.name == "late"
    q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, error=True)
    start = time.monotonic()
    again = q.pop(timeout=5)  # wakes itself when the backoff's window ends
    assert again is qp and 0.04 <= time.monotonic() - start < 2.5
    q.close()
    assert q.pop() is None
