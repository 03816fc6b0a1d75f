"""The scheduling queue: priority order, backoff timing, parking unschedulable pods and moving them back."""

from __future__ import annotations

import threading
import time

import pytest

from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.queue import NODE_ADD, POD_DELETE, UNSCHEDULABLE_TIMEOUT, SchedulingQueue

from .builders import pod


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def info(name: str, priority: int = 0) -> PodInfo:
    return PodInfo(pod(name, priority=priority))


def new_queue(clock: Clock, **kw: object) -> SchedulingQueue:
    return SchedulingQueue(initial_backoff=1.0, max_backoff=10.0, clock=clock, **kw)  # type: ignore[arg-type]


def popped(q: SchedulingQueue) -> str | None:
    qp = q.pop(timeout=0)
    return None if qp is None else qp.pod.name


@pytest.mark.unit
def test_active_queue_pops_by_priority_then_arrival() -> None:
    clock = Clock()
    q = new_queue(clock)
    for name, prio in (("low", 0), ("high", 100), ("low2", 0), ("mid", 50)):
        q.add(info(name, prio))
        clock.now += 1
    assert [popped(q) for _ in range(5)] == ["high", "mid", "low", "low2", None]


@pytest.mark.unit
def test_backoff_doubles_per_attempt_up_to_the_maximum() -> None:
    clock = Clock()
    q = new_queue(clock)
    q.add(info("p"))
    qp = q.pop(timeout=0)
    assert qp is not None
    waits = []
    for _ in range(6):
        q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, error=True)
        start = clock.now
        while (again := q.pop(timeout=0)) is None:
            clock.now += 0.25
        assert again is qp
        waits.append(clock.now - start)
    assert waits == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0] and qp.attempts == 7


@pytest.mark.unit
def test_unschedulable_pods_wait_for_an_event_their_plugins_care_about() -> None:
    clock = Clock()
    q = new_queue(clock)
    q.add(info("ports"))
    q.add(info("fit"))
    a, b = q.pop(timeout=0), q.pop(timeout=0)
    assert a is not None and b is not None
    q.add_unschedulable_if_not_present(a, q.scheduling_cycle - 1, ["NodePorts"])
    q.add_unschedulable_if_not_present(b, q.scheduling_cycle, ["NodeUnschedulable"])
    assert q.lengths() == (0, 0, 2)
    clock.now += 30  # backoff long over
    assert q.move_all_to_active_or_backoff(POD_DELETE) == 1  # NodeUnschedulable ignores pod deletes
    assert popped(q) == "ports" and q.lengths() == (0, 0, 1)
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 1
    assert popped(q) == "fit"


@pytest.mark.unit
def test_a_moved_pod_still_backing_off_goes_to_backoff_first() -> None:
    clock = Clock()
    q = new_queue(clock)
    q.add(info("p"))
    qp = q.pop(timeout=0)
    assert qp is not None
    q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, [])
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.lengths() == (0, 1, 0) and popped(q) is None
    clock.now += 1.0
    assert popped(q) == "p"


@pytest.mark.unit
def test_an_event_during_the_cycle_sends_the_pod_to_backoff_not_to_the_parking() -> None:
    clock = Clock()
    q = new_queue(clock)
    q.add(info("p"))
    qp = q.pop(timeout=0)
    assert qp is not None
    cycle = q.scheduling_cycle
    q.move_all_to_active_or_backoff(NODE_ADD)  # a node came while the pod was being scheduled
    q.add_unschedulable_if_not_present(qp, cycle, ["NodeResourcesFit"])
    assert q.lengths() == (0, 1, 0)


@pytest.mark.unit
def test_unschedulable_pods_are_retried_after_five_minutes_anyway() -> None:
    clock = Clock()
    q = new_queue(clock)
    q.add(info("p"))
    qp = q.pop(timeout=0)
    assert qp is not None
    q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, ["NodeAffinity"])
    clock.now += UNSCHEDULABLE_TIMEOUT - 1
    assert q.flush_unschedulable_leftover() == 0
    clock.now += 2
    assert q.flush_unschedulable_leftover() == 1 and popped(q) == "p"


@pytest.mark.unit
def test_update_and_delete() -> None:
    clock = Clock()
    q = new_queue(clock)
    q.add(info("a"))
    q.add(info("b"))
    q.update(info("b", priority=10))
    assert popped(q) == "b"
    qp = q.pop(timeout=0)
    assert qp is not None and qp.pod.name == "a"
    q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, ["NodeAffinity"])
    clock.now += 60
    q.update(info("a", priority=1))  # changed while parked: retried at once
    assert q.lengths() == (1, 0, 0)
    q.delete(info("a").key)
    assert q.lengths() == (0, 0, 0) and popped(q) is None
    q.add(info("c"))
    qp = q.pop(timeout=0)
    assert qp is not None
    q.done(qp.pod.key)
    q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, [])  # done: nothing to park
    assert q.lengths() == (0, 0, 0)


@pytest.mark.integration
def test_pop_blocks_until_a_pod_arrives_or_the_timeout() -> None:
    q = SchedulingQueue(initial_backoff=0.05, max_backoff=0.05)
    start = time.monotonic()
    assert q.pop(timeout=0.05) is None and time.monotonic() - start >= 0.05
    threading.Timer(0.05, lambda: q.add(info("late"))).start()
    qp = q.pop(timeout=5)
    assert qp is not None and qp.pod.name == "late"
    q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, error=True)
    start = time.monotonic()
    again = q.pop(timeout=5)  # wakes itself when the backoff ends
    assert again is qp and 0.04 <= time.monotonic() - start < 2
    q.close()
    assert q.pop() is None
