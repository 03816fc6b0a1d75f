"""Pods waiting at Permit: kube's waitingPod semantics (allow by every plugin, first rejection wins, one outcome)."""

from __future__ import annotations

import pytest

from componentbase_examples.scheduler.framework import Code, Framework, Status
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.waitingpods import MAX_WAIT, WaitingPods
from tests.scheduler.builders import pod

pytestmark = pytest.mark.unit


def _pod(name: str) -> PodInfo:
    p = pod(name)
    p["metadata"]["uid"] = f"uid-{name}"
    return PodInfo(p)


def test_the_binding_starts_once_every_plugin_it_waits_on_allowed_it() -> None:
    waiting, outcomes = WaitingPods(), []
    w = waiting.add(_pod("a"), {"Gang": 30.0, "Quota": 10.0}, outcomes.append)
    assert waiting.get("uid-a") is w and w.pending_plugins() == ["Gang", "Quota"]
    w.allow("Gang")
    assert outcomes == [] and w.pending_plugins() == ["Quota"]
    w.allow("Quota")
    assert outcomes == [None] and waiting.get("uid-a") is None and len(waiting) == 0
    w.reject("Gang", "too late")  # decided: nothing more happens
    assert outcomes == [None]


def test_the_first_rejection_decides_and_names_its_plugin() -> None:
    waiting, outcomes = WaitingPods(), []
    w = waiting.add(_pod("a"), {"Gang": 30.0}, outcomes.append)
    w.reject("Gang", "gang g broke up")
    w.reject("Other", "second")
    w.allow("Gang")
    (status,) = outcomes
    assert status is not None and status.code == Code.UNSCHEDULABLE
    assert (status.plugin, status.message()) == ("Gang", "gang g broke up")


def test_a_deleted_pod_is_rejected_as_removed_and_waits_are_capped_at_kubes_fifteen_minutes() -> None:
    waiting, outcomes = WaitingPods(), []
    w = waiting.add(_pod("a"), {"Gang": 3600.0}, outcomes.append)
    assert w.waits == {"Gang": MAX_WAIT} == {"Gang": 900.0}
    assert [x.pod.name for x in waiting] == ["a"]
    assert waiting.reject("uid-a") and not waiting.reject("uid-a")
    (status,) = outcomes
    assert status is not None and status.message() == "removed"


def test_run_permit_collects_waits_and_a_rejection_overrides_them() -> None:
    fw = Framework("p")
    fw.permit = [("Wait1", lambda **_: Status(Code.WAIT, timeout=5.0)), ("Allow", lambda **_: None),
                 ("Wait2", lambda **_: Status(Code.WAIT, timeout=7.0))]
    assert fw.run_permit({}, _pod("a"), "n1") == (None, {"Wait1": 5.0, "Wait2": 7.0})
    fw.permit.append(("Deny", lambda **_: Status(Code.UNSCHEDULABLE, "no")))
    status, waits = fw.run_permit({}, _pod("a"), "n1")
    assert waits == {} and status is not None and (status.plugin, status.message()) == ("Deny", "no")
