"""The informer handlers' routing, driven through the library's filtering handler registrations (no server)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from componentbase import informers
from componentbase_examples.scheduler.handlers import SchedulerHandlers
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.queue import SchedulingQueue
from componentbase_examples.scheduler.queueing import QueueingHints
from componentbase_examples.scheduler.snapshot import Snapshot
from tests.scheduler.builders import Cluster, node, pod

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


class Registrations:
    """Stands in for a ``SharedInformer``: keeps the registrations and delivers notes as its dispatcher does."""

    def __init__(self) -> None:
        self.regs: list[informers.HandlerRegistration] = []

    def add_event_handler(self, on_add: Any = None, on_update: Any = None, on_delete: Any = None, *,
                          filter: Any = None) -> informers.HandlerRegistration:
        reg = informers.HandlerRegistration(on_add, on_update, on_delete, filter, 0)
        self.regs.append(reg)
        return reg

    def deliver(self, kind: str, old: Any, new: Any) -> None:
        for reg in self.regs:
            reg.deliver(kind, old, new)


def _setup() -> tuple[Snapshot, SchedulingQueue, Registrations, Registrations]:
    hints = QueueingHints.from_frameworks(Cluster([]).frameworks)
    snapshot, queue = Snapshot(), SchedulingQueue(initial_backoff=1, max_backoff=1, hints=hints)
    pods, nodes = Registrations(), Registrations()
    SchedulerHandlers(snapshot, queue, {"default-scheduler"}).register(pods, nodes)  # type: ignore[arg-type]
    return snapshot, queue, pods, nodes


def _pod(name: str, **spec: Any) -> Obj:
    p = pod(name, cpu="1", **spec)
    p["metadata"]["uid"] = f"uid-{name}"
    p["metadata"]["resourceVersion"] = "1"
    p["status"] = {"phase": "Pending"}
    return p


def _park(queue: SchedulingQueue, key: str, plugin: str = "NodeResourcesFit") -> None:
    qp = queue.pop(timeout=0)
    assert qp is not None and qp.pod.key == key
    queue.add_unschedulable_if_not_present(qp, queue.scheduling_cycle, {plugin})


def test_other_schedulers_and_finished_pods_are_ignored_and_bound_ones_counted() -> None:
    snapshot, queue, pods, nodes = _setup()
    nodes.deliver("add", None, node("n1", cpu="4"))
    pods.deliver("add", None, _pod("mine"))
    pods.deliver("add", None, _pod("theirs", schedulerName="other"))
    done = _pod("done")
    done["status"]["phase"] = "Succeeded"
    pods.deliver("add", None, done)
    running = _pod("running", nodeName="n1")
    pods.deliver("add", None, running)
    assert set(queue.pending()) == {"uid-mine"}
    info = snapshot.get("n1")
    assert info is not None and info.req_cpu == 1000
    finished = copy.deepcopy(running)
    finished["status"]["phase"] = "Succeeded"
    pods.deliver("update", running, finished)  # a finished pod frees its node
    assert info.req_cpu == 0


def test_status_only_updates_leave_a_parked_pod_parked_but_a_spec_change_its_hint_accepts_retries_it() -> None:
    _, queue, pods, _ = _setup()
    p = _pod("p")
    pods.deliver("add", None, p)
    _park(queue, "uid-p", "TaintToleration")
    patched = copy.deepcopy(p)
    patched["metadata"]["resourceVersion"] = "2"
    patched["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    pods.deliver("update", p, patched)  # the scheduler's own condition patch
    assert queue.pending() == {"uid-p": "unschedulable"}
    relabelled = copy.deepcopy(patched)
    relabelled["metadata"]["labels"] = {"app": "x"}
    pods.deliver("update", patched, relabelled)  # a label TaintToleration does not care about
    assert queue.pending() == {"uid-p": "unschedulable"}
    tolerating = copy.deepcopy(relabelled)
    tolerating["spec"]["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    pods.deliver("update", relabelled, tolerating)
    assert queue.pending()["uid-p"] in ("active", "backoff")


def test_node_heartbeats_do_not_move_parked_pods_but_capacity_changes_do() -> None:
    _, queue, pods, nodes = _setup()
    n = node("n1", cpu="1")
    nodes.deliver("add", None, n)
    pods.deliver("add", None, _pod("p"))
    _park(queue, "uid-p")
    beat = copy.deepcopy(n)
    beat["status"]["conditions"] = [{"type": "Ready", "status": "True", "lastHeartbeatTime": "now"}]
    nodes.deliver("update", n, beat)
    assert queue.pending() == {"uid-p": "unschedulable"}
    bigger = copy.deepcopy(beat)
    bigger["status"]["allocatable"]["cpu"] = "8"
    nodes.deliver("update", beat, bigger)
    assert queue.pending()["uid-p"] in ("active", "backoff")


def test_a_pending_pod_deleted_while_assumed_frees_its_node() -> None:
    snapshot, queue, pods, nodes = _setup()
    nodes.deliver("add", None, node("n1", cpu="1"))
    p = _pod("p")
    pods.deliver("add", None, p)
    qp = queue.pop(timeout=0)
    assert qp is not None
    snapshot.assume_pod(qp.pod, "n1")  # its binding is in flight...
    pods.deliver("delete", informers.DeletedFinalStateUnknown("default/p", p), None)  # ...and a relist says it is gone
    info = snapshot.get("n1")
    assert info is not None and info.req_cpu == 0 and not snapshot.is_assumed("uid-p")


def test_a_bound_pod_is_confirmed_where_the_api_says_and_leaves_the_queue() -> None:
    snapshot, queue, pods, nodes = _setup()
    for name in ("n1", "n2"):
        nodes.deliver("add", None, node(name, cpu="1"))
    p = _pod("p")
    pods.deliver("add", None, p)
    qp = queue.pop(timeout=0)
    assert qp is not None
    snapshot.assume_pod(PodInfo(p), "n1")
    bound = copy.deepcopy(p)
    bound["spec"]["nodeName"] = "n2"  # someone else bound it elsewhere
    pods.deliver("update", p, bound)
    assert not snapshot.is_assumed("uid-p") and snapshot.node_of("uid-p") == "n2"
    assert snapshot.get("n1").req_cpu == 0 and snapshot.get("n2").req_cpu == 1000  # type: ignore[union-attr]
    assert queue.pending() == {}
