"""Go durations: ``15s``, ``1m0s``, ``500ms``, parsed and printed as Go's ``time.Duration`` does.

Kubernetes docs, flags and config files all speak Go's duration syntax, so a component built on this
library accepts it everywhere and prints it back the same way. A :class:`Duration` is Go's value, an
int64 of nanoseconds (:attr:`Duration.nanoseconds`), which parsing, ``str()``, equality and config files
use; it is also a ``float`` of seconds, so the many places that wait on one (``Event.wait(d)``,
``time.sleep(d)``, ``deadline = now + d``) keep working without a conversion at each.
"""

from __future__ import annotations

import math

__all__ = [
    "Duration", "DurationError", "format_duration", "format_duration_ns", "parse_duration", "parse_duration_ns",
]

_NANOS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_DIGITS = "0123456789"
_U64 = (1 << 64) - 1
_LIMIT = 1 << 63  # magnitudes are uint64 up to 2**63 while parsing, as in Go; int64 at the end


class DurationError(ValueError):
    """A string that is not a Go duration."""


def _quote(text: str) -> str:
    """Go's ``time.quote``: control and non-ASCII bytes as ``\\xNN``, ``"`` and ``\\`` escaped."""
    try:
        raw = text.encode("utf-8", "surrogateescape")  # the bytes a command line gave us
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogatepass")
    out = ['"']
    for byte in raw:
        if byte >= 0x80 or byte < 0x20:
            out.append(f"\\x{byte:02x}")
        else:
            out.append(("\\" if byte in b'"\\' else "") + chr(byte))
    out.append('"')
    return "".join(out)


def _leading_int(s: str, pos: int) -> tuple[int | None, int]:
    """ASCII digits from ``pos`` as an integer (``None`` past 2**63, Go's overflow), and where they end."""
    x = 0
    while pos < len(s) and s[pos] in _DIGITS:
        if x > _LIMIT // 10:
            return None, pos
        x = x * 10 + ord(s[pos]) - 48
        if x > _LIMIT:
            return None, pos
        pos += 1
    return x, pos


def _leading_fraction(s: str, pos: int) -> tuple[int, float, int]:
    """Fraction digits: their value while it fits in int64, the matching power of ten, and where they end."""
    x, scale = 0, 1.0
    overflow = False
    while pos < len(s) and s[pos] in _DIGITS:
        if not overflow:
            y = x * 10 + ord(s[pos]) - 48
            if x > (_LIMIT - 1) // 10 or y > _LIMIT:
                overflow = True  # later digits are below a nanosecond: Go stops accumulating, as here
            else:
                x, scale = y, scale * 10
        pos += 1
    return x, scale, pos


def parse_duration_ns(text: str) -> int:
    """Parse a Go duration into integer nanoseconds, exactly as Go's ``time.ParseDuration`` does.

    Same grammar (``[-+]?([0-9]*(\\.[0-9]*)?unit)+`` or a bare ``0``; ASCII digits only, no spaces), the
    same fraction arithmetic (float64, truncated to the nanosecond), the same int64 range and the same
    error messages, so a value means here what it means to a Go component reading the same file.
    """
    orig = text
    s = text
    neg = False
    if s[:1] in ("-", "+") and s:
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    invalid = DurationError(f"time: invalid duration {_quote(orig)}")
    if not s:
        raise invalid
    d = 0
    pos = 0
    while pos < len(s):
        if s[pos] != "." and s[pos] not in _DIGITS:
            raise invalid
        start = pos
        v, pos = _leading_int(s, pos)
        if v is None:
            raise invalid
        pre = pos != start
        f, scale, post = 0, 1.0, False
        if pos < len(s) and s[pos] == ".":
            f, scale, end = _leading_fraction(s, pos + 1)
            post = end != pos + 1
            pos = end
        if not pre and not post:
            raise invalid
        end = pos
        while end < len(s) and s[end] != "." and s[end] not in _DIGITS:
            end += 1
        if end == pos:
            raise DurationError(f"time: missing unit in duration {_quote(orig)}")
        unit_name = s[pos:end]
        pos = end
        unit = _NANOS.get(unit_name)
        if unit is None:
            raise DurationError(f"time: unknown unit {_quote(unit_name)} in duration {_quote(orig)}")
        if v > _LIMIT // unit:
            raise invalid
        v *= unit
        if f > 0:
            v += int(float(f) * (float(unit) / scale))
            if v > _LIMIT:
                raise invalid
        d = (d + v) & _U64  # uint64 addition, wrapping as Go's does
        if d > _LIMIT:
            raise invalid
    if neg:
        return -d
    if d > _LIMIT - 1:
        raise invalid
    return d


def parse_duration(text: str) -> Duration:
    """Parse a Go duration string, with Go's rules (a unit is required except for ``0``), exactly."""
    return Duration.from_nanoseconds(parse_duration_ns(text))


def _fmt_frac(value: int, digits: int) -> str:
    """``value`` split at ``digits`` decimal places, trailing zeros dropped (Go's fmtFrac)."""
    whole, frac = divmod(value, 10**digits)
    text = str(frac).rjust(digits, "0").rstrip("0")
    return f"{whole}.{text}" if text else str(whole)


def format_duration(seconds: float) -> str:
    """Format seconds as Go's ``time.Duration.String()`` does: ``1h2m3.5s``, ``1m0s``, ``500ms``, ``0s``."""
    if not math.isfinite(seconds):
        raise DurationError(f"a duration must be finite, got {seconds}")
    return format_duration_ns(round(seconds * 1e9))


def format_duration_ns(nanos: int) -> str:
    """Format integer nanoseconds as Go's ``time.Duration.String()`` does."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    n = abs(nanos)
    if n < 1_000:
        return f"{sign}{n}ns"
    if n < 1_000_000:
        return f"{sign}{_fmt_frac(n, 3)}µs"
    if n < 1_000_000_000:
        return f"{sign}{_fmt_frac(n, 6)}ms"
    hours, rest = divmod(n, 3600 * 1_000_000_000)
    minutes, rest = divmod(rest, 60 * 1_000_000_000)
    secs = _fmt_frac(rest, 9) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{secs}"
    if minutes:
        return f"{sign}{minutes}m{secs}"
    return f"{sign}{secs}"


class Duration(float):
    """A Go ``time.Duration``: int64 nanoseconds, usable as a ``float`` of seconds.

    ``Duration("1m30s")``, ``Duration(90)`` and ``Duration(1.5)`` (seconds, as Python's waits take them) or
    :meth:`from_nanoseconds`. The nanoseconds are the value: two durations compare and hash by them, and
    ``str()`` prints them as Go does, so ``2562047h47m16.854775807s`` comes back exactly. Arithmetic is a
    float's and gives a plain ``float`` of seconds, except negation, which is exact as in Go.
    """

    __slots__ = ("_ns",)
    _ns: int

    def __new__(cls, value: float | str = 0) -> Duration:
        if isinstance(value, bool):
            raise TypeError("a duration is not a bool")
        if isinstance(value, Duration):
            return cls.from_nanoseconds(value._ns)
        if isinstance(value, str):
            return cls.from_nanoseconds(parse_duration_ns(value))
        if isinstance(value, int):
            return cls.from_nanoseconds(value * 1_000_000_000)
        if not math.isfinite(value):
            raise DurationError(f"a duration must be finite, got {value}")
        return cls.from_nanoseconds(round(value * 1e9))

    @classmethod
    def from_nanoseconds(cls, nanos: int) -> Duration:
        """Go's ``time.Duration(n)``: exactly ``n`` nanoseconds, which must fit in an int64."""
        if not -_LIMIT <= nanos < _LIMIT:
            raise DurationError(f"a duration must be within ±{format_duration_ns(_LIMIT - 1)}, got {nanos}ns")
        self = super().__new__(cls, nanos / 1e9)
        self._ns = nanos
        return self

    @property
    def nanoseconds(self) -> int:
        """The exact value, Go's ``d.Nanoseconds()``."""
        return self._ns

    @property
    def seconds(self) -> float:
        """The value as a plain ``float`` of seconds (Go's ``d.Seconds()``), for waits and arithmetic."""
        return float(self)

    def __reduce__(self) -> tuple[type[Duration], tuple[str]]:
        return type(self), (format_duration_ns(self._ns),)  # copies and pickles keep every nanosecond

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Duration):
            return self._ns == other._ns
        return float(self) == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return float.__hash__(self)  # equal durations have equal floats; a float equal to one hashes alike

    def __lt__(self, other: float) -> bool:
        return self._ns < other._ns if isinstance(other, Duration) else float(self) < other

    def __le__(self, other: float) -> bool:
        return self._ns <= other._ns if isinstance(other, Duration) else float(self) <= other

    def __gt__(self, other: float) -> bool:
        return self._ns > other._ns if isinstance(other, Duration) else float(self) > other

    def __ge__(self, other: float) -> bool:
        return self._ns >= other._ns if isinstance(other, Duration) else float(self) >= other

    def __neg__(self) -> Duration:
        return Duration.from_nanoseconds(-self._ns if self._ns != -_LIMIT else self._ns)  # Go: -MinInt64 wraps

    def __str__(self) -> str:
        return format_duration_ns(self._ns)

    def __repr__(self) -> str:
        return f"Duration({format_duration_ns(self._ns)!r})"
