"""Field errors print as apimachinery's do, and aggregate one per line."""

from __future__ import annotations

import pytest

from componentbase import (
    AggregateError,
    Duration,
    field,
)

pytestmark = pytest.mark.unit


def test_paths() -> None:
    p = field.Path("profiles").index(1).child("schedulerName")
    assert str(p) == "profiles[1].schedulerName"
    keyed = field.Path("spec").child("pluginConfig").key("NodeResourcesFit")
    assert str(keyed) == "spec.pluginConfig[NodeResourcesFit]"
    assert str(field.Path().child("a", "b")) == "a.b"


def test_messages() -> None:
    p = field.Path("leaderElection")
    assert str(field.invalid(p.child("renewDeadline"), Duration("20s"), "must be less than leaseDuration")) == \
        'leaderElection.renewDeadline: Invalid value: "20s": must be less than leaseDuration'
    assert str(field.required(p.child("resourceName"))) == "leaderElection.resourceName: Required value"
    assert str(field.required("profiles", "must have at least one profile")) == \
        "profiles: Required value: must have at least one profile"
    assert str(field.not_supported("resourceLock", "endpoints", ["leases"])) == \
        'resourceLock: Unsupported value: "endpoints": supported values: "leases"'
    assert str(field.duplicate("profiles[1].schedulerName", "default-scheduler")) == \
        'profiles[1].schedulerName: Duplicate value: "default-scheduler"'
    assert str(field.forbidden("vmodule", "only for text")) == "vmodule: Forbidden: only for text"
    assert str(field.too_many("profiles", 5, 3)) == "profiles: Too many: 5: must have at most 3 items"
    assert str(field.too_long("name", "x" * 4, 3)) == 'name: Too long: "xxxx": must have at most 3 bytes'
    assert str(field.not_found("plugins[0]", "Foo")) == 'plugins[0]: Not found: "Foo"'
    assert str(field.invalid("enabled", True, "needs profiling")) == "enabled: Invalid value: true: needs profiling"
    assert str(field.internal("x", ValueError("boom"))) == "x: Internal error: boom"


def test_aggregate_flattens_and_prints_one_per_line() -> None:
    inner = AggregateError([field.required("a"), field.required("b")])
    agg = field.aggregate([inner, ValueError("c is wrong")])
    assert agg is not None
    assert str(agg).splitlines() == ["a: Required value", "b: Required value", "c is wrong"]
    assert len(agg) == 3
    assert field.aggregate([]) is None
