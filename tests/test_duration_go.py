"""Durations exactly as Go's ``time.ParseDuration``: Go's own test table and a property test of its grammar.

The tables are Go's ``parseDurationTests``, ``parseDurationErrorTests`` and ``durationTests``
(src/time/time_test.go), written here as data and checked against Go's ``ParseDuration`` in src/time/format.go;
the property test generates strings from the grammar Go documents, ``[-+]?([0-9]*(\\.[0-9]*)?unit)+``,
and checks the value against exact decimal arithmetic.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from componentbase.util import Duration, DurationError, format_duration_ns, parse_duration, parse_duration_ns

pytestmark = pytest.mark.unit

S = 1_000_000_000
UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": S, "m": 60 * S, "h": 3600 * S}
MAX = (1 << 63) - 1
MIN = -(1 << 63)

# Go's parseDurationTests: (input, nanoseconds) for the accepted ones.
GO_ACCEPTED = [
    ("0", 0), ("5s", 5 * S), ("30s", 30 * S), ("1478s", 1478 * S),
    ("-5s", -5 * S), ("+5s", 5 * S), ("-0", 0), ("+0", 0),
    ("5.0s", 5 * S), ("5.6s", 5_600_000_000), ("5.s", 5 * S), (".5s", S // 2), ("1.0s", S), ("1.00s", S),
    ("1.004s", 1_004_000_000), ("1.0040s", 1_004_000_000), ("100.00100s", 100_001_000_000),
    ("10ns", 10), ("11us", 11_000), ("12µs", 12_000), ("12μs", 12_000), ("13ms", 13_000_000),
    ("14s", 14 * S), ("15m", 15 * 60 * S), ("16h", 16 * 3600 * S),
    ("3h30m", 12_600 * S), ("10.5s4m", 250_500_000_000), ("-2m3.4s", -123_400_000_000),
    ("1h2m3s4ms5us6ns", 3723 * S + 4_005_006), ("39h9m14.425s", 140_954_425_000_000),
    ("52763797000ns", 52_763_797_000),
    ("0.3333333333333333333h", 20 * 60 * S),  # more than 9 fraction digits (Go issue 6617)
    ("9007199254740993ns", (1 << 53) + 1),  # not representable in a float64
    ("9223372036854775807ns", MAX), ("9223372036854775.807us", MAX), ("9223372036s854ms775us807ns", MAX),
    ("-9223372036854775807ns", MIN + 1),
    ("-9223372036854775.808us", MIN), ("-9223372036s854ms775us808ns", MIN),
    ("0.100000000000000000000h", 6 * 60 * S),  # a long fraction (Go issue 15011)
    ("0.830103483285477580700h", 2_988_372_539_827),  # the first overflow check of leadingFraction
    # Go accepts the most negative int64 since 1.17 (format.go: the magnitude may reach 1<<63 when negative)
    ("-9223372036854775808ns", MIN), ("-2562047h47m16.854775808s", MIN),
]

# Go's rejected inputs, with the message Go gives for each.
GO_REJECTED = [
    ("", 'time: invalid duration ""'), ("3", 'time: missing unit in duration "3"'),
    ("-", 'time: invalid duration "-"'), ("s", 'time: invalid duration "s"'), (".", 'time: invalid duration "."'),
    ("-.", 'time: invalid duration "-."'), (".s", 'time: invalid duration ".s"'),
    ("+.s", 'time: invalid duration "+.s"'),
    ("3000000h", 'time: invalid duration "3000000h"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
    ("9223372036854775.808us", 'time: invalid duration "9223372036854775.808us"'),
    ("9223372036854ms775us808ns", 'time: invalid duration "9223372036854ms775us808ns"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
    ('1"s', 'time: unknown unit "\\"s" in duration "1\\"s"'),
    ("1\ts", 'time: unknown unit "\\x09s" in duration "1\\x09s"'),
    ("--1s", 'time: invalid duration "--1s"'),
    # bytes that are not UTF-8 reach us from a command line as surrogate escapes; Go quotes the bytes
    (b"\x85\x85".decode("utf-8", "surrogateescape"), 'time: invalid duration "\\x85\\x85"'),
    (b"\xffff".decode("utf-8", "surrogateescape"), 'time: invalid duration "\\xffff"'),
    (b"hello \xffff world".decode("utf-8", "surrogateescape"), 'time: invalid duration "hello \\xffff world"'),
    ("\ufffd", 'time: invalid duration "\\xef\\xbf\\xbd"'),
    ("\ufffd hello \ufffd world", 'time: invalid duration "\\xef\\xbf\\xbd hello \\xef\\xbf\\xbd world"'),
    ("9223372036854775810ns", 'time: invalid duration "9223372036854775810ns"'),
    ("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'),
    ("9223372036854776us", 'time: invalid duration "9223372036854776us"'),
]

# Go's durationTests: what Duration.String() prints for each value (and "-" before it for its negation).
GO_STRINGS = [
    ("0s", 0), ("1ns", 1), ("1.1µs", 1_100), ("2.2ms", 2_200_000), ("3.3s", 3_300_000_000),
    ("4m5s", 245 * S), ("4m5.001s", 245_001_000_000), ("5h6m7.001s", 18_367_001_000_000),
    ("8m0.000000001s", 480 * S + 1), ("2562047h47m16.854775807s", MAX), ("-2562047h47m16.854775808s", MIN),
]


@pytest.mark.parametrize(("text", "nanos"), GO_ACCEPTED)
def test_go_accepted_inputs(text: str, nanos: int) -> None:
    """Every form a duration arrives in keeps every nanosecond: the parser, Duration and parse_duration."""
    assert parse_duration_ns(text) == nanos
    assert Duration(text).nanoseconds == parse_duration(text).nanoseconds == nanos
    assert Duration(str(Duration(text))).nanoseconds == nanos  # String() reads back exactly


@pytest.mark.parametrize(("printed", "nanos"), GO_STRINGS)
def test_go_duration_strings(printed: str, nanos: int) -> None:
    d = Duration.from_nanoseconds(nanos)
    assert str(d) == format_duration_ns(nanos) == printed
    assert Duration(printed) == d and Duration(printed).nanoseconds == nanos
    if nanos > 0:
        assert str(-d) == "-" + printed


@pytest.mark.parametrize(("text", "message"), GO_REJECTED)
def test_go_rejected_inputs_with_go_messages(text: str, message: str) -> None:
    with pytest.raises(DurationError) as err:
        parse_duration_ns(text)
    assert str(err.value) == message
    with pytest.raises(DurationError) as err:
        Duration(text)
    assert str(err.value) == message


def test_uint64_wraparound_as_go() -> None:
    """Go adds the parts as uint64: two parts of exactly 1<<63 wrap to 0, which Go accepts; so do we."""
    assert parse_duration_ns("9223372036854775808ns9223372036854775808ns") == 0


# ------------------------------------------------------------------------------------------------------
# The property test: strings of Go's grammar, valued with exact decimal arithmetic.

digits = st.text(alphabet="0123456789", max_size=22)
# A part has digits or a point; without either, its unit would run into the previous one ("1hh").
part = st.tuples(digits, st.none() | digits, st.sampled_from(sorted(UNITS))).filter(lambda p: p[0] or p[1] is not None)


def render(sign: str, parts: list[tuple[str, str | None, str]]) -> str:
    return sign + "".join(whole + ("" if frac is None else "." + frac) + unit for whole, frac, unit in parts)


def exact(parts: list[tuple[str, str | None, str]]) -> tuple[int, int]:
    """The floor of each part's exact value in ns, summed, and how many parts had a fraction (each may be 1 off:
    Go computes a fraction in float64 and drops digits beyond int64's precision, both below a nanosecond)."""
    total, fuzzy = 0, 0
    for whole, frac, unit in parts:
        value = Fraction(int(whole or "0") * UNITS[unit])
        if frac and int(frac):
            value += Fraction(int(frac) * UNITS[unit], 10 ** len(frac))
            fuzzy += 1
        total += int(value)
    return total, fuzzy


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["", "+", "-"]), st.lists(part, min_size=1, max_size=4))
@example("", [("9223372036854775807", None, "ns")])
@example("-", [("9223372036854775808", None, "ns")])
@example("", [("2562047", None, "h"), ("47", None, "m"), ("16", "854775807", "s")])
def test_grammar_strings_parse_to_their_exact_value(sign: str, parts: list[tuple[str, str | None, str]]) -> None:
    text = render(sign, parts)
    if any(not whole and not frac for whole, frac, _ in parts):
        with pytest.raises(DurationError, match=r"^time: invalid duration "):
            parse_duration_ns(text)  # a part without digits (".s", "s")
        return
    magnitude, fuzzy = exact(parts)
    limit = -MIN if sign == "-" else MAX
    if any(int(whole or "0") * UNITS[unit] > 1 << 63 for whole, _, unit in parts) or magnitude > limit + fuzzy:
        with pytest.raises(DurationError) as err:
            parse_duration_ns(text)
        quoted = text.encode().decode("ascii", "backslashreplace")  # Go quotes non-ASCII bytes as \\xNN
        assert str(err.value) == f'time: invalid duration "{quoted}"'
        return
    if magnitude + fuzzy < limit:
        got = parse_duration_ns(text)
        assert abs(abs(got) - magnitude) <= fuzzy and (got <= 0 if sign == "-" else got >= 0)
        if not fuzzy:
            assert abs(got) == magnitude


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=MIN, max_value=MAX))
@example(MIN)
@example(MAX)
def test_every_int64_prints_and_parses_back(nanos: int) -> None:
    """Duration.String() output is Go syntax and reads back to the same nanosecond."""
    assert parse_duration_ns(format_duration_ns(nanos)) == nanos


GRAMMAR = re.compile(r"[-+]?(0|([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+)")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("0123456789.+-nsuµμmh \t\u0661\uff11xd"), max_size=12) | st.text(max_size=8))
def test_anything_else_is_refused_with_a_go_message(text: str) -> None:
    """Outside the grammar (spaces, other digits, other units) the parser refuses with one of Go's messages."""
    try:
        parse_duration_ns(text)
    except DurationError as e:
        assert re.fullmatch(r'time: (invalid duration|missing unit in duration|unknown unit ".*" in duration) ".*"',
                            str(e), re.S)
        return
    assert GRAMMAR.fullmatch(text), text
