"""The scheduling queue as kube's PriorityQueue with queueing hints: order, backoff windows, parking pods until
a cluster event their rejecting plugins' hints accept, in-flight events, gated pods, the leftover flush."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from componentbase.testing import FakeClock
from componentbase_examples.scheduler import events as ev
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.queue import UNSCHEDULABLE_TIMEOUT, QueuedPodInfo, SchedulingQueue
from componentbase_examples.scheduler.queueing import QueueingHints

from .builders import Cluster, node, pod, taint

pytestmark = pytest.mark.unit

HINTS = QueueingHints.from_frameworks(Cluster([]).frameworks)


def info(name: str, priority: int = 0, **spec: Any) -> PodInfo:
    p = pod(name, priority=priority, **spec)
    p["metadata"]["uid"] = f"uid-{name}"
    return PodInfo(p)


def new_queue(clock: FakeClock, hints: QueueingHints | None = HINTS) -> SchedulingQueue:
    return SchedulingQueue(initial_backoff=1.0, max_backoff=10.0, clock=clock.monotonic, hints=hints)


def popped(q: SchedulingQueue) -> str | None:
    qp = q.pop(timeout=0)
    return None if qp is None else qp.pod.name


def park(q: SchedulingQueue, name: str, *plugins: str) -> QueuedPodInfo:
    qp = q.pop(timeout=0)
    assert qp is not None and qp.pod.name == name
    q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, plugins)
    return qp


def test_active_queue_pops_by_priority_then_arrival() -> None:
    clock = FakeClock()
    q = new_queue(clock)
    for name, prio in (("low", 0), ("high", 100), ("low2", 0), ("mid", 50)):
        q.add(info(name, prio))
        clock.step(1)
    assert [popped(q) for _ in range(5)] == ["high", "mid", "low", "low2", None]


def test_error_backoff_doubles_per_attempt_and_ends_in_the_next_whole_second() -> None:
    clock = FakeClock()
    q = new_queue(clock)
    q.add(info("p"))
    qp = q.pop(timeout=0)
    assert qp is not None
    waits = []
    for _ in range(6):
        q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, error=True)
        start = clock.monotonic()
        while (again := q.pop(timeout=0)) is None:
            clock.step(0.25)
        assert again is qp
        waits.append(clock.monotonic() - start)
    # 1, 2, 4, 8, 10, 10 s, each ending at the start of the one-second window after it (kube's ordering windows)
    assert waits == [2.0, 3.0, 5.0, 9.0, 11.0, 11.0] and qp.attempts == 7


def test_a_node_too_small_leaves_a_pod_rejected_for_resources_parked_a_big_one_retries_it() -> None:
    clock = FakeClock()
    q = new_queue(clock)
    q.add(info("big", cpu="4"))
    park(q, "big", "NodeResourcesFit")
    clock.step(30)
    assert q.move_all_to_active_or_backoff(ev.EVENT_NODE_ADD, None, node("small", cpu="2")) == 0
    relabelled = node("small", cpu="2", labels={"disk": "ssd"})
    for event in ev.node_events(node("small", cpu="2"), relabelled):
        assert q.move_all_to_active_or_backoff(event, node("small", cpu="2"), relabelled) == 0
    assert q.pending() == {"uid-big": "unschedulable"}
    assert q.move_all_to_active_or_backoff(ev.EVENT_NODE_ADD, None, node("large", cpu="8")) == 1
    assert popped(q) == "big"


def test_each_parked_pod_is_asked_through_the_plugins_that_rejected_it() -> None:
    clock = FakeClock()
    q = new_queue(clock)
    q.add(info("ports"))
    q.add(info("cordoned"))
    bound = pod("holder", nodeName="n1", ports=[{"containerPort": 80, "hostPort": 8080}])
    park(q, "ports", "NodePorts")
    park(q, "cordoned", "NodeUnschedulable")
    clock.step(30)
    assert q.move_all_to_active_or_backoff(ev.EVENT_ASSIGNED_POD_DELETE, bound, None) == 0  # held no wanted port
    uncordoned = node("n1")
    assert q.move_all_to_active_or_backoff(ev.ClusterEvent(ev.NODE, ev.ActionType.UPDATE_NODE_TAINT),
                                           node("n1", unschedulable=True), uncordoned) == 1
    assert popped(q) == "cordoned" and q.pending() == {"uid-ports": "unschedulable"}


def test_a_pod_retried_by_an_event_while_backing_off_is_popped_at_once_when_nothing_else_waits() -> None:
    clock = FakeClock()
    q = new_queue(clock)
    q.add(info("p"))
    park(q, "p", "TaintToleration")
    tainted = node("n1", taints=[taint("dedicated")])
    q.move_all_to_active_or_backoff(ev.ClusterEvent(ev.NODE, ev.ActionType.UPDATE_NODE_TAINT), tainted, node("n1"))
    assert q.lengths() == (0, 1, 0)
    q.add(info("fresh"))
    assert popped(q) == "fresh"  # activeQ first...
    assert popped(q) == "p"  # ...then backoffQ without waiting (kube's SchedulerPopFromBackoffQ)


def test_an_event_during_the_cycle_is_asked_when_the_pod_fails() -> None:
    clock = FakeClock()
    q = new_queue(clock)
    q.add(info("helped", cpu="4"))
    q.add(info("not-helped", cpu="16"))
    for name in ("helped", "not-helped"):
        qp = q.pop(timeout=0)
        assert qp is not None and qp.pod.name == name
        q.move_all_to_active_or_backoff(ev.EVENT_NODE_ADD, None, node("n8", cpu="8"))  # came mid-cycle
        q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, ["NodeResourcesFit"])
    assert q.pending() == {"uid-helped": "backoff", "uid-not-helped": "unschedulable"}


def test_events_before_the_pods_cycle_are_not_replayed() -> None:
    clock = FakeClock()
    q = new_queue(clock)
    q.add(info("first", cpu="4"))
    q.add(info("second", cpu="4"))
    first = q.pop(timeout=0)
    q.move_all_to_active_or_backoff(ev.EVENT_NODE_ADD, None, node("n8", cpu="8"))  # during first's cycle only
    assert first is not None
    q.done(first.pod.key)
    park(q, "second", "NodeResourcesFit")
    assert q.pending()["uid-second"] == "unschedulable"


def test_unschedulable_pods_are_retried_after_the_maximum_stay() -> None:
    clock = FakeClock()
    q = new_queue(clock)
    q.add(info("p"))
    park(q, "p", "NodeAffinity")
    clock.step(UNSCHEDULABLE_TIMEOUT - 1)
    assert q.flush_unschedulable_leftover() == 0
    clock.step(2)
    assert q.flush_unschedulable_leftover() == 1 and popped(q) == "p"


def test_a_pod_that_failed_with_an_error_is_retried_by_any_event_but_waits_its_backoff() -> None:
    clock = FakeClock()
    q = new_queue(clock)
    q.add(info("p"))
    qp = q.pop(timeout=0)
    assert qp is not None
    q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, error=True)
    assert q.lengths() == (0, 1, 0) and popped(q) is None  # error backoff is never cut short
    clock.step(2)
    assert popped(q) == "p"


def gated(name: str, *gates: str) -> PodInfo:
    return info(name, schedulingGates=[{"name": g} for g in gates])


def test_a_gated_pod_waits_outside_the_active_queue_until_its_last_gate_is_removed() -> None:
    clock = FakeClock()
    q = new_queue(clock)
    p = gated("g", "example.com/a", "example.com/b")
    q.add(p)
    assert popped(q) is None and q.pending_counts() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    one_left = gated("g", "example.com/b")
    q.update(one_left, p.pod)
    relabelled = copy.deepcopy(one_left.pod)
    relabelled["metadata"]["labels"] = {"app": "x"}
    q.update(PodInfo(relabelled), one_left.pod)
    q.move_all_to_active_or_backoff(ev.EVENT_NODE_ADD, None, node("n1"))
    clock.step(UNSCHEDULABLE_TIMEOUT + 1)
    assert q.flush_unschedulable_leftover() == 0 and popped(q) is None
    open_pod = copy.deepcopy(relabelled)
    del open_pod["spec"]["schedulingGates"]
    q.update(PodInfo(open_pod), relabelled)
    assert q.pending_counts()["gated"] == 0
    qp = q.pop(timeout=0)
    assert qp is not None and qp.pod.name == "g" and qp.attempts == 1


def test_the_gating_plugin_message_is_kubes() -> None:
    from componentbase_examples.scheduler.plugins.schedulinggates import SchedulingGates

    status = SchedulingGates(None, None).scheduler_pre_enqueue(gated("g", "foo", "bar"))
    assert status is not None and status.message() == "waiting for scheduling gates: [foo bar]"
    assert SchedulingGates(None, None).scheduler_pre_enqueue(info("open")) is None


def test_without_hints_every_event_retries_every_parked_pod() -> None:
    clock = FakeClock()
    q = new_queue(clock, hints=None)
    q.add(info("p"))
    park(q, "p", "SomePlugin")
    clock.step(5)
    assert q.move_all_to_active_or_backoff(ev.EVENT_NODE_DELETE, node("n1"), None) == 1


def test_update_and_delete() -> None:
    clock = FakeClock()
    q = new_queue(clock)
    q.add(info("a"))
    q.add(info("b"))
    q.update(info("b", priority=10))
    assert popped(q) == "b"
    park(q, "a", "NodeAffinity")
    clock.step(60)
    q.update(info("a", priority=1), info("a").pod)  # no change a hint cares about: stays parked
    assert q.lengths() == (0, 0, 1)
    q.delete(info("a").key)
    assert q.lengths() == (0, 0, 0) and popped(q) is None
    q.add(info("c"))
    qp = q.pop(timeout=0)
    assert qp is not None
    q.done(qp.pod.key)
    q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, [])  # done: nothing to park
    assert q.lengths() == (0, 0, 0)


def test_each_pod_entering_a_queue_is_counted_by_queue_and_event_as_kubes_incoming_pods_metric() -> None:
    clock = FakeClock()
    seen: list[tuple[str, str]] = []
    q = SchedulingQueue(initial_backoff=1.0, max_backoff=10.0, clock=clock.monotonic, hints=HINTS,
                        incoming=lambda queue, event: seen.append((queue, event)))
    q.add(info("p"))
    park(q, "p", "NodeResourcesFit")
    q.move_all_to_active_or_backoff(ev.EVENT_NODE_ADD, None, node("n2"))
    clock.step(10)
    qp = q.pop(timeout=0)  # its backoff over
    assert qp is not None
    q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, (), error=True)  # an error: to backoff
    assert seen == [("active", "PodAdd"), ("unschedulable", "ScheduleAttemptFailure"), ("backoff", "NodeAdd"),
                    ("active", "BackoffComplete"), ("backoff", "ScheduleAttemptFailure")]
    clock.step(100)
    assert popped(q) == "p" and seen[-1] == ("active", "BackoffComplete")
