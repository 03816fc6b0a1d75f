"""Go durations: ``15s``, ``1m0s``, ``500ms``, parsed and printed as Go's ``time.Duration`` does.

Kubernetes docs, flags and config files all speak Go's duration syntax, so a component built on this
library accepts it everywhere and prints it back the same way. A :class:`Duration` is a ``float`` of
seconds (sub-second values are fine, which tests rely on) that knows how to print itself.
"""

from __future__ import annotations

import re

__all__ = ["Duration", "DurationError", "format_duration", "parse_duration"]

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
_PART = re.compile(r"(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)")


class DurationError(ValueError):
    """A string that is not a Go duration."""


def parse_duration(text: str) -> float:
    """Parse a Go duration string into seconds, with Go's rules (a unit is required except for ``0``)."""
    s = text.strip()
    orig = text
    sign = 1
    if s[:1] in "+-" and s:
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise DurationError(f'time: invalid duration "{orig}"')
    total = 0
    pos = 0
    while pos < len(s):
        m = _PART.match(s, pos)
        if m is None or (m.group(1) == "" and not m.group(2)):
            if m is None and re.match(r"[\d.]+$", s[pos:]):
                raise DurationError(f'time: missing unit in duration "{orig}"')
            raise DurationError(f'time: invalid duration "{orig}"')
        whole, frac, unit = m.group(1) or "0", m.group(2) or "", m.group(3)
        scale = _NANOS[unit]
        total += int(whole) * scale
        if frac:
            total += int(frac) * scale // 10 ** len(frac)
        pos = m.end()
    return sign * total / 1e9


def _fmt_frac(value: int, digits: int) -> str:
    """``value`` split at ``digits`` decimal places, trailing zeros dropped (Go's fmtFrac)."""
    whole, frac = divmod(value, 10**digits)
    text = str(frac).rjust(digits, "0").rstrip("0")
    return f"{whole}.{text}" if text else str(whole)


def format_duration(seconds: float) -> str:
    """Format seconds as Go's ``time.Duration.String()`` does: ``1h2m3.5s``, ``1m0s``, ``500ms``, ``0s``."""
    nanos = round(seconds * 1e9)
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
    """Seconds as a ``float`` that prints as a Go duration; ``Duration("1m30s") == 90.0``."""

    def __new__(cls, value: float | str = 0.0) -> Duration:
        if isinstance(value, str):
            value = parse_duration(value)
        if isinstance(value, bool):
            raise TypeError("a duration is not a bool")
        return super().__new__(cls, value)

    def __str__(self) -> str:
        return format_duration(self)

    def __repr__(self) -> str:
        return f"Duration({format_duration(self)!r})"
