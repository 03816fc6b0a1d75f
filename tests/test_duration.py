"""Go durations in and out, as users paste them from Kubernetes docs."""

from __future__ import annotations

import copy
import pickle

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
    assert d.seconds == 90.0 and type(d.seconds) is float and d.nanoseconds == 90 * 10**9
    with pytest.raises(TypeError):
        Duration(True)  # type: ignore[arg-type]


def test_duration_is_exact_nanoseconds() -> None:
    """Two durations a nanosecond apart past 2**53 are one float, yet differ, print and copy as Go's."""
    a, b = Duration("9007199254740993ns"), Duration("9007199254740992ns")
    assert float(a) == float(b) and a != b and a > b and len({a, b}) == 2
    assert str(a) == "2501h59m59.254740993s" and Duration(a).nanoseconds == a.nanoseconds
    assert copy.deepcopy(a).nanoseconds == pickle.loads(pickle.dumps(a)).nanoseconds == (1 << 53) + 1
    assert Duration(15).nanoseconds == 15 * 10**9 and Duration(0.1).nanoseconds == 100_000_000
    assert Duration.from_nanoseconds(-(1 << 63)) == parse_duration("-2562047h47m16.854775808s")
    with pytest.raises(DurationError, match=r"^a duration must be within ±2562047h47m16.854775807s, got "):
        Duration.from_nanoseconds(1 << 63)
    with pytest.raises(DurationError):
        Duration(1e10)  # seconds: past int64 nanoseconds
    with pytest.raises(DurationError):
        Duration(float("nan"))
