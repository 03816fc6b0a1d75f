"""Resource quantities parse exactly and round up the way kube-scheduler reads them."""

from __future__ import annotations

from fractions import Fraction

import pytest

import componentbase
from componentbase.util import (
    quantity_milli_value as milli_value,
)
from componentbase.util import (
    quantity_value as value,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("text", "exact"), [
    ("100m", Fraction(1, 10)), ("0.5", Fraction(1, 2)), ("1Gi", 2**30), ("1G", 10**9), ("1e3", 1000),
    ("128974848", 128974848), ("129M", 129 * 10**6), ("123Mi", 123 * 2**20), ("1k", 1000), ("1Ki", 1024),
    (".5", Fraction(1, 2)), ("1.", 1), ("2E-3", Fraction(2, 1000)), ("1E", 10**18), ("-1", -1), ("+2", 2),
    ("250u", Fraction(250, 10**6)), ("5n", Fraction(5, 10**9)), (3, 3), (1.5, Fraction(3, 2)),
])
def test_parses_exactly(text: str, exact: Fraction) -> None:
    assert componentbase.util.parse_quantity(text) == exact


def test_canonical_units_round_up_like_apimachinery() -> None:
    assert milli_value("100m") == 100 and milli_value("0.5") == 500 and milli_value("2") == 2000
    assert milli_value("0.0001") == 1  # MilliValue rounds up
    assert value("1Gi") == 1073741824 and value("129M") == 129000000 and value("123Mi") == 128974848
    assert value("100m") == 1 and value("1.5") == 2
    assert value("1e3") == 1000 and value("1k") == 1000


@pytest.mark.parametrize("text", ["", "abc", "1 Gi", "1Gb", ".", "1..2", "+", "e3", "1Gi ", "Mi", True])
def test_invalid_quantities_say_why(text: object) -> None:
    with pytest.raises(componentbase.util.QuantityError) as info:
        componentbase.util.parse_quantity(text)  # type: ignore[arg-type]
    message = str(info.value)
    assert "quantities must match the regular expression" in message or "unable to parse quantity's suffix" \
        in message
    assert "\n" not in message
