"""Status conditions kept as apimachinery's meta.SetStatusCondition keeps them."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from componentbase.controller import (
    find_status_condition,
    is_status_condition_false,
    is_status_condition_true,
    remove_status_condition,
    set_condition,
    set_status_condition,
)
from componentbase.testing import FakeClock

pytestmark = pytest.mark.unit

START = dt.datetime(2026, 5, 1, 12, 0, 0, 250000, tzinfo=dt.UTC)


def test_the_transition_time_moves_only_when_the_status_does() -> None:
    clock = FakeClock(START)
    conditions: list[dict[str, Any]] = []
    assert set_status_condition(conditions, {"type": "Ready", "status": "False", "reason": "Pending"}, clock=clock)
    assert conditions == [{"type": "Ready", "status": "False", "reason": "Pending", "message": "",
                           "lastTransitionTime": "2026-05-01T12:00:00Z"}]
    clock.step(60)
    assert not set_status_condition(conditions, {"type": "Ready", "status": "False", "reason": "Pending"},
                                    clock=clock), "nothing changed"
    assert set_status_condition(conditions, {"type": "Ready", "status": "False", "reason": "Scaling",
                                             "message": "1/3", "observedGeneration": 2}, clock=clock)
    ready = find_status_condition(conditions, "Ready")
    assert ready is conditions[0] and ready["lastTransitionTime"] == "2026-05-01T12:00:00Z"
    assert ready["reason"] == "Scaling" and ready["observedGeneration"] == 2
    clock.step(60)
    assert set_status_condition(conditions, {"type": "Ready", "status": True, "reason": "Available"}, clock=clock)
    assert conditions == [{"type": "Ready", "status": "True", "reason": "Available", "message": "",
                           "lastTransitionTime": "2026-05-01T12:02:00Z"}], "observedGeneration 0 is omitted"
    assert is_status_condition_true(conditions, "Ready") and not is_status_condition_false(conditions, "Ready")


def test_a_given_transition_time_is_kept_and_conditions_are_found_and_removed() -> None:
    conditions: list[dict[str, Any]] = [{"type": "Ready", "status": "True", "reason": "Available", "message": "",
                                         "lastTransitionTime": "2026-01-01T00:00:00Z"}]
    given = {"type": "Degraded", "status": "False", "reason": "AsExpected",
             "lastTransitionTime": "2026-02-02T00:00:00Z"}
    assert set_status_condition(conditions, given)
    assert find_status_condition(conditions, "Degraded") == {**given, "message": ""}
    assert find_status_condition(conditions, "Missing") is None
    assert not is_status_condition_true(conditions, "Missing") and not is_status_condition_false(conditions, "Missing")
    assert remove_status_condition(conditions, "Ready") and not remove_status_condition(conditions, "Ready")
    assert [c["type"] for c in conditions] == ["Degraded"]


def test_a_condition_without_a_type_or_with_another_status_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^a condition needs a type"):
        set_status_condition([], {"status": "True"})
    with pytest.raises(ValueError, match=r"""^condition status must be "True", "False" or "Unknown", not 'yes'$"""):
        set_status_condition([], {"type": "Ready", "status": "yes"})


def test_set_condition_on_an_object_observes_its_generation() -> None:
    clock = FakeClock(START)
    site: dict[str, Any] = {"metadata": {"name": "site", "generation": 3}, "spec": {}}
    assert set_condition(site, "Ready", True, "Available", "3 replicas", clock=clock)
    assert site["status"] == {"conditions": [
        {"type": "Ready", "status": "True", "reason": "Available", "message": "3 replicas",
         "observedGeneration": 3, "lastTransitionTime": "2026-05-01T12:00:00Z"}]}
    assert not set_condition(site, "Ready", True, "Available", "3 replicas", clock=clock)
    site["metadata"]["generation"] = 4
    assert set_condition(site, "Ready", True, "Available", "3 replicas", clock=clock)
    assert site["status"]["conditions"][0]["observedGeneration"] == 4
