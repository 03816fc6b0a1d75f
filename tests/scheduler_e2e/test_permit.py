"""A Permit plugin that makes pods wait: gang scheduling as a plugin author writes it, against the loopback server."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

import componentbase
from componentbase.testing import eventually, free_port
from componentbase_examples.scheduler.framework import Code, Plugin, Status
from componentbase_examples.scheduler.podinfo import PodInfo
from tests.scheduler.builders import node, pod

from .conftest import Cluster, Running

pytestmark = pytest.mark.process  # the scheduler's events come from a child process

ENABLE_GANG = """parallelism: 1
profiles:
- plugins:
    permit:
      enabled:
      - name: Gang
"""


class Gang(Plugin):
    """Holds the pods labelled ``gang=NAME`` until ``gang-size`` of them wait, then lets them all bind."""

    name = "Gang"
    waited: ClassVar[list[str]] = []  # what each test saw wait, reset by a fixture
    lock = threading.Lock()

    @componentbase.hookimpl
    def scheduler_permit(self, pod: PodInfo) -> Status | None:
        labels = pod.pod["metadata"].get("labels") or {}
        if "gang" not in labels:
            return None
        assert self.handle.waiting_pods is not None
        mates = [w for w in self.handle.waiting_pods
                 if (w.pod.pod["metadata"].get("labels") or {}).get("gang") == labels["gang"]]
        if len(mates) + 1 >= int(labels["gang-size"]):
            for mate in mates:
                mate.allow(self.name)
            return None
        with self.lock:
            self.waited.append(pod.name)
        return Status(Code.WAIT, timeout=float(labels.get("gang-timeout", "30")))


def _member(name: str, gang: str, size: int, timeout: str = "30", **spec: Any) -> dict[str, Any]:
    p = pod(name, **spec)
    p["metadata"]["labels"] = {"gang": gang, "gang-size": str(size), "gang-timeout": timeout}
    return p


@pytest.fixture(autouse=True)
def _fresh_gang() -> None:
    Gang.waited = []


def test_a_gang_binds_only_once_all_its_pods_are_placed_and_waiting_holds_no_binder(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    cluster.create(node("n1"))
    start_scheduler(ENABLE_GANG, plugins=(Gang,))
    cluster.create(_member("a", "g", 3))
    cluster.create(_member("b", "g", 3))
    eventually(lambda: sorted(Gang.waited) == ["a", "b"], what="a and b waiting at Permit")
    cluster.create(pod("solo"))  # parallelism 1: a waiting pod must not hold the one binder
    eventually(lambda: cluster.node_of("solo") == "n1", what="solo bound while the gang waits")
    assert cluster.bound().keys() == {"solo"}
    cluster.create(_member("c", "g", 3))
    eventually(lambda: cluster.bound() == {"a": "n1", "b": "n1", "c": "n1", "solo": "n1"}, what="the gang bound")
    assert not cluster.events_for("a", "FailedScheduling")


def test_a_wait_that_runs_out_is_kubes_rejection_and_frees_the_node(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    cluster.create(node("small", cpu="1", memory="2Gi"))
    start_scheduler(ENABLE_GANG, plugins=(Gang,))
    cluster.create(_member("lonely", "g", 2, timeout="1", cpu="800m"))
    (event, *_) = cluster.wait_events("lonely", "FailedScheduling")
    assert event["message"] == "0/1 nodes are available: 1 rejected due to timeout after waiting 1s at plugin Gang."
    condition = cluster.condition("lonely")
    assert condition is not None and (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    assert cluster.node_of("lonely") == ""
    # Parked, as in kube, until an event Gang may help with (it registers none: any event) or the 5-minute flush;
    # meanwhile the cpu it was assumed to use is free again.
    cluster.create(pod("next", cpu="800m"))
    eventually(lambda: cluster.node_of("next") == "small", what="next bound on the cpu lonely gave back")


def test_a_waiting_pod_deleted_gives_its_node_back_at_once(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    cluster.create(node("small", cpu="1", memory="2Gi"))
    start_scheduler(ENABLE_GANG, plugins=(Gang,))
    cluster.create(_member("held", "g", 2, timeout="600", cpu="800m"))
    eventually(lambda: Gang.waited == ["held"], what="held waiting at Permit")
    cluster.create(pod("next", cpu="800m"))
    cluster.wait_events("next", "FailedScheduling")  # the waiting pod holds the node's cpu
    cluster.delete_pod("held")
    eventually(lambda: cluster.node_of("next") == "small", what="next bound once the waiting pod is deleted")


def test_preempting_a_waiting_pod_rejects_it_at_permit_instead_of_deleting_it(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    from .test_preemption import _classes
    from .test_queueing import scrape

    _classes(cluster, low=10, high=1000)
    cluster.create(node("small", cpu="1", memory="2Gi"))
    port = free_port()
    start_scheduler(ENABLE_GANG, f"--secure-port={port}", "--authorization-always-allow-paths=/metrics",
                    plugins=(Gang,))
    cluster.create(_member("held", "g", 2, timeout="600", cpu="800m", priorityClassName="low"))
    eventually(lambda: Gang.waited == ["held"], what="held waiting at Permit")
    cluster.create(pod("urgent", cpu="800m", priorityClassName="high"))
    eventually(lambda: cluster.node_of("urgent") == "small", what="urgent bound in held's place")
    (preempted,) = cluster.wait_events("held", "Preempted")
    assert preempted["message"].startswith("Preempted by pod ") and preempted["message"].endswith(" on node small")
    failed = [e["message"] for e in cluster.wait_events("held", "FailedScheduling")]
    assert "0/1 nodes are available: 1 preempted." in failed  # its first failure: later ones say why it waits
    held = cluster.pods()["held"]  # rejected at Permit, not deleted: it is pending again
    assert "deletionTimestamp" not in held["metadata"] and not held["spec"].get("nodeName")
    text = scrape(port)
    assert "scheduler_preemption_attempts_total 1.0" in text.splitlines()
    assert "scheduler_preemption_victims_count 1.0" in text.splitlines()
    assert 'scheduler_permit_wait_duration_seconds_count{result="Unschedulable"} 1.0' in text.splitlines()
    assert 'scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"} 2.0' in text.splitlines()
