"""Feature gates as a user sets them with ``--feature-gates`` and as the component reads them."""

from __future__ import annotations

import logging
import threading

import pytest

from componentbase.componentconfig import (
    FeatureGate,
    FeatureGateError,
    FeatureSpec,
    Stage,
    UnknownFeatureError,
)
from componentbase.util.field import AggregateError

pytestmark = pytest.mark.unit

SPECS = {
    "AlphaOne": FeatureSpec(False, Stage.ALPHA),
    "AlphaTwo": FeatureSpec(False, Stage.ALPHA),
    "BetaOn": FeatureSpec(True, Stage.BETA),
    "BetaOff": FeatureSpec(False, Stage.BETA),
    "Stable": FeatureSpec(True, Stage.GA, locked_to_default=True),
    "StableOpen": FeatureSpec(True, Stage.GA),
    "Old": FeatureSpec(False, Stage.DEPRECATED),
}


@pytest.fixture
def gate() -> FeatureGate:
    g = FeatureGate()
    g.add(SPECS)
    return g


def test_defaults(gate: FeatureGate) -> None:
    assert [gate.enabled(n) for n in ("AlphaOne", "BetaOn", "BetaOff", "Stable", "Old")] == [
        False, True, False, True, False]
    assert gate.enabled("AllAlpha") is False and gate.enabled("AllBeta") is False
    assert str(gate) == ""
    assert gate.to_map() == {}


def test_set_parses_go_bools_and_whitespace(gate: FeatureGate) -> None:
    gate.set(" AlphaOne = true ,BetaOn=False,, Old=0 ,")
    assert gate.enabled("AlphaOne") is True
    assert gate.enabled("BetaOn") is False
    assert gate.enabled("Old") is False
    assert str(gate) == "AlphaOne=true,BetaOn=false,Old=false"
    gate.set("AlphaTwo=T")
    assert str(gate) == "AlphaOne=true,AlphaTwo=true,BetaOn=false,Old=false"


def test_every_problem_is_reported_and_nothing_changes(gate: FeatureGate) -> None:
    with pytest.raises(FeatureGateError) as info:
        gate.set("AlphaOne=true,Foo=true,BetaOn=maybe,Stable=false,Lonely")
    assert str(info.value).splitlines() == [
        "unrecognized feature gate: Foo",
        "invalid value of BetaOn=maybe, err: must be true or false",
        "cannot set feature gate Stable to false, feature is locked to true",
        "missing bool value for Lonely",
    ]
    assert isinstance(info.value, ValueError) and isinstance(info.value, AggregateError)
    assert len(info.value) == 4
    assert gate.enabled("AlphaOne") is False  # the valid entry was not applied either


def test_locked_feature_may_be_set_to_its_default(gate: FeatureGate) -> None:
    gate.set("Stable=true")
    assert gate.enabled("Stable") is True


def test_all_alpha_and_all_beta_fill_in_features_not_set_by_name(gate: FeatureGate) -> None:
    gate.set("AllAlpha=true,AlphaTwo=false")
    assert gate.enabled("AlphaOne") is True and gate.enabled("AlphaTwo") is False
    assert gate.enabled("BetaOff") is False
    assert str(gate) == "AllAlpha=true,AlphaOne=true,AlphaTwo=false"
    gate.set("AllBeta=false")
    assert gate.enabled("BetaOn") is False
    assert gate.to_map() == {"AllAlpha": True, "AllBeta": False, "AlphaOne": True, "AlphaTwo": False,
                             "BetaOff": False, "BetaOn": False}
    assert gate.enabled_features() == ["AlphaOne", "Stable", "StableOpen"]


def test_all_alpha_order_does_not_matter(gate: FeatureGate) -> None:
    gate.set("AlphaTwo=false,AllAlpha=true")
    assert gate.enabled("AlphaOne") is True and gate.enabled("AlphaTwo") is False


def test_set_from_map(gate: FeatureGate) -> None:
    gate.set_from_map({"BetaOff": True})
    assert gate.enabled("BetaOff") is True
    with pytest.raises(FeatureGateError, match=r"^unrecognized feature gate: Nope$"):
        gate.set_from_map({"Nope": True})


def test_known_features_are_the_flag_help_lines(gate: FeatureGate) -> None:
    assert gate.known_features() == [
        "AllAlpha=true|false (ALPHA - default=false)",
        "AllBeta=true|false (BETA - default=false)",
        "AlphaOne=true|false (ALPHA - default=false)",
        "AlphaTwo=true|false (ALPHA - default=false)",
        "BetaOff=true|false (BETA - default=false)",
        "BetaOn=true|false (BETA - default=true)",
    ]


def test_setting_ga_or_deprecated_features_warns(gate: FeatureGate, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="componentbase.componentconfig._featuregate"):
        gate.set("StableOpen=true,Old=true,AlphaOne=true")
    assert [r.getMessage() for r in caplog.records] == [
        "Setting GA feature gate StableOpen=true. It will be removed in a future release.",
        "Setting deprecated feature gate Old=true. It will be removed in a future release.",
    ]


def test_add_rules(gate: FeatureGate) -> None:
    gate.add({"AlphaOne": FeatureSpec(False, Stage.ALPHA)})  # the same spec again is fine
    with pytest.raises(FeatureGateError, match='feature gate "AlphaOne" with different spec already exists'):
        gate.add({"AlphaOne": FeatureSpec(True, Stage.BETA)})
    gate.close()
    with pytest.raises(FeatureGateError, match="cannot add a feature gate after adding it to the flag set"):
        gate.add({"New": FeatureSpec(False, Stage.ALPHA)})


def test_unknown_feature_is_a_key_error(gate: FeatureGate) -> None:
    with pytest.raises(KeyError) as info:
        gate.enabled("Missing")
    assert isinstance(info.value, UnknownFeatureError)
    assert str(info.value) == 'feature "Missing" is not registered in the feature gate'


def test_deep_copy_is_independent(gate: FeatureGate) -> None:
    gate.set("AlphaOne=true")
    copy = gate.deep_copy()
    copy.set("AlphaOne=false")
    copy.add({"Extra": FeatureSpec(True, Stage.BETA)})
    assert gate.enabled("AlphaOne") is True and copy.enabled("AlphaOne") is False
    assert "Extra" not in gate.specs() and copy.enabled("Extra") is True


def test_stage_prints_upstream_names() -> None:
    assert [str(s) for s in Stage] == ["ALPHA", "BETA", "GA", "DEPRECATED"]


def test_concurrent_sets_and_reads(gate: FeatureGate) -> None:
    def flip(value: str) -> None:
        for _ in range(200):
            gate.set(f"AlphaOne={value}")
            gate.enabled("AlphaOne")
            str(gate)

    threads = [threading.Thread(target=flip, args=(v,)) for v in ("true", "false")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert str(gate) in ("AlphaOne=true", "AlphaOne=false")
