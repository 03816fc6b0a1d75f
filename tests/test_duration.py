"""Go durations in and out, as users paste them from Kubernetes docs."""

from __future__ import annotations

import pytest

from componentbase import Duration
from componentbase.util import (
    DurationError,
    format_duration,
    parse_duration,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("text", "seconds", "printed"), [
    ("15s", 15.0, "15s"),
    ("1m0s", 60.0, "1m0s"),
    ("1m", 60.0, "1m0s"),
    ("500ms", 0.5, "500ms"),
    ("1h2m3s", 3723.0, "1h2m3s"),
    ("1.5s", 1.5, "1.5s"),
    ("2h45m", 9900.0, "2h45m0s"),
    ("0", 0.0, "0s"),
    ("1us", 1e-6, "1µs"),
    ("1µs", 1e-6, "1µs"),
    ("100ns", 1e-7, "100ns"),
    ("-1.5h", -5400.0, "-1h30m0s"),
    ("1h0m0.5s", 3600.5, "1h0m0.5s"),
    ("+10s", 10.0, "10s"),
])
def test_parse_and_format_like_go(text: str, seconds: float, printed: str) -> None:
    assert parse_duration(text) == pytest.approx(seconds)
    assert format_duration(parse_duration(text)) == printed
    assert str(Duration(text)) == printed


@pytest.mark.parametrize(("text", "message"), [
    ("", 'time: invalid duration ""'),
    ("10", 'time: missing unit in duration "10"'),
    ("abc", 'time: invalid duration "abc"'),
    ("1x", 'time: unknown unit "x" in duration "1x"'),
    (" 1s", 'time: invalid duration " 1s"'),
    ("1s ", 'time: unknown unit "s " in duration "1s "'),
    ("\u0661s", 'time: invalid duration "\\xd9\\xa1s"'),  # ARABIC-INDIC DIGIT ONE is not an ASCII digit
    ("99999999999999999999h", 'time: invalid duration "99999999999999999999h"'),
    ("1s2", 'time: missing unit in duration "1s2"'),
])
def test_bad_durations_are_named(text: str, message: str) -> None:
    with pytest.raises(DurationError) as err:
        parse_duration(text)
    assert str(err.value) == message


def test_duration_is_a_float_of_seconds() -> None:
    d = Duration("1m30s")
    assert d == 90.0 and d * 2 == 180.0 and repr(d) == "Duration('1m30s')"
    with pytest.raises(TypeError):
        Duration(True)  # type: ignore[arg-type]
