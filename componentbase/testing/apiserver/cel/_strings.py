"""cel-go's strings extension (version 2, as kube's base environment declares it) and kube's list
library, in Python: cel-expr-python ships the strings extension too, but its ``indexOf`` cannot be
overloaded for lists afterwards, and kube's rules call ``indexOf`` on both."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

__all__ = ["LIST_FUNCTIONS", "STRING_FUNCTIONS", "format_string"]


class CelError(ValueError):
    """A runtime error with cel-go's wording (``index out of range: 5``)."""


def _char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise CelError(f"index out of range: {i}")
    return s[i:i + 1]


def _index_of(s: str, sub: str, start: int = 0) -> int:
    if start < 0 or start > len(s):
        raise CelError(f"index out of range: {start}")
    return s.find(sub, start)


def _last_index_of(s: str, sub: str, end: int | None = None) -> int:
    if end is None:
        return s.rfind(sub)
    if end < 0 or end > len(s):
        raise CelError(f"index out of range: {end}")
    return s.rfind(sub, 0, end + len(sub))


def _substring(s: str, start: int, end: int | None = None) -> str:
    end = len(s) if end is None else end
    if start < 0 or start > len(s):
        raise CelError(f"index out of range: {start}")
    if end < 0 or end > len(s):
        raise CelError(f"index out of range: {end}")
    if start > end:
        raise CelError(f"invalid substring range. start: {start}, end: {end}")
    return s[start:end]


def _ascii(s: str, upper: bool) -> str:
    return "".join(c.upper() if upper and "a" <= c <= "z" else c.lower() if not upper and "A" <= c <= "Z" else c
                   for c in s)


def _split(s: str, sep: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        return chars if n < 0 or n >= len(chars) else [*chars[:n - 1], "".join(chars[n - 1:])]
    return s.split(sep) if n < 0 else s.split(sep, n - 1)


def _replace(s: str, old: str, new: str, n: int = -1) -> str:
    return s.replace(old, new) if n < 0 else s.replace(old, new, n)


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        return repr(value) if not value.is_integer() else str(int(value)) if abs(value) < 1e21 else repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_as_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_as_text(k)}: {_as_text(v)}" for k, v in value.items()) + "}"
    return str(value)


def format_string(fmt: str, args: list[Any]) -> str:
    """The strings extension's ``format``: %s %d %f %e %x %X %o %b with an optional precision."""
    out, i, n = [], 0, 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        j = i + 1
        precision = None
        if j < len(fmt) and fmt[j] == ".":
            k = j + 1
            while k < len(fmt) and fmt[k].isdigit():
                k += 1
            precision, j = int(fmt[j + 1:k] or 0), k
        if j >= len(fmt):
            raise CelError("unexpected end of format string")
        verb = fmt[j]
        if verb == "%":
            out.append("%")
        else:
            if n >= len(args):
                raise CelError(f"index {n} out of range")
            out.append(_verb(verb, args[n], precision))
            n += 1
        i = j + 1
    return "".join(out)


def _verb(verb: str, arg: Any, precision: int | None) -> str:
    if verb == "s":
        return _as_text(arg)
    if verb == "d" and isinstance(arg, (int, float)) and not isinstance(arg, bool):
        return str(int(arg))
    if verb in "fe" and isinstance(arg, (int, float)) and not isinstance(arg, bool):
        return f"{float(arg):.{6 if precision is None else precision}{verb}}"
    if verb in "xXob" and isinstance(arg, (int, str, bytes)) and not isinstance(arg, bool):
        if isinstance(arg, (str, bytes)):
            data = arg.encode() if isinstance(arg, str) else arg
            text = data.hex()
            return text.upper() if verb == "X" else text
        return format(arg, verb)
    raise CelError(f"error during formatting: unrecognized formatting clause \"{verb}\"")


def _sorted(values: list[Any]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(values))


def _need_items(values: list[Any], what: str) -> list[Any]:
    if not values:
        raise CelError(f"{what} called on empty list")
    return values


def _index(values: list[Any], item: Any) -> int:
    return next((i for i, v in enumerate(values) if v == item), -1)


def _last_index(values: list[Any], item: Any) -> int:
    return next((i for i in range(len(values) - 1, -1, -1) if values[i] == item), -1)


#: name -> [(overload id, parameter kinds, member, impl)]; kinds: s string, i int, l list, m map, * any
Overloads = list[tuple[str, str, bool, Callable[..., Any]]]
STRING_FUNCTIONS: dict[str, Overloads] = {
    "charAt": [("string_char_at_int", "si", True, _char_at)],
    "indexOf": [("string_index_of_string", "ss", True, _index_of),
                ("string_index_of_string_int", "ssi", True, _index_of),
                ("list_index_of", "l*", True, _index)],
    "lastIndexOf": [("string_last_index_of_string", "ss", True, _last_index_of),
                    ("string_last_index_of_string_int", "ssi", True, _last_index_of),
                    ("list_last_index_of", "l*", True, _last_index)],
    "lowerAscii": [("string_lower_ascii", "s", True, lambda s: _ascii(s, False))],
    "upperAscii": [("string_upper_ascii", "s", True, lambda s: _ascii(s, True))],
    "replace": [("string_replace_string_string", "sss", True, _replace),
                ("string_replace_string_string_int", "sssi", True, _replace)],
    "split": [("string_split_string", "ss", True, _split), ("string_split_string_int", "ssi", True, _split)],
    "substring": [("string_substring_int", "si", True, _substring),
                  ("string_substring_int_int", "sii", True, _substring)],
    "trim": [("string_trim", "s", True, lambda s: s.strip(" \t\n\r\v\f\u0085\u00a0"))],
    "join": [("list_join", "l", True, lambda xs: "".join(xs)),
             ("list_join_string", "ls", True, lambda xs, sep: sep.join(xs))],
    "reverse": [("string_reverse", "s", True, lambda s: s[::-1])],
    "format": [("string_format", "sl", True, format_string)],
    "strings.quote": [("strings_quote", "s", False, lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"')],
}
LIST_FUNCTIONS: dict[str, Overloads] = {
    "isSorted": [("list_is_sorted", "l", True, _sorted)],
    "sum": [("list_sum", "l", True, lambda xs: sum(xs) if xs else 0)],
    "min": [("list_min", "l", True, lambda xs: min(_need_items(xs, "min")))],
    "max": [("list_max", "l", True, lambda xs: max(_need_items(xs, "max")))],
    "sets.contains": [("list_sets_contains_list", "ll", False, lambda a, b: all(x in a for x in b))],
    "sets.equivalent": [("list_sets_equivalent_list", "ll", False,
                         lambda a, b: all(x in b for x in a) and all(x in a for x in b))],
    "sets.intersects": [("list_sets_intersects_list", "ll", False, lambda a, b: any(x in a for x in b))],
}
