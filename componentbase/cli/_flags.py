"""Command-line flags with pflag's rules, grouped in named sections as component-base prints them.

argparse cannot express pflag's semantics (a bool flag that takes ``--x=false`` but never eats the
next word, shorthand ``-v=2``, ``_`` and ``-`` as one separator, deprecation warnings on use, help with
Go type names and ``(default 15s)``), and Kubernetes users type their flags from Kubernetes docs; so the
parser here is a small one of our own, bound to attributes of option objects the way ``pflag.StringVar``
binds to a Go field.
"""

from __future__ import annotations

import builtins
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TextIO

import attrs

from componentbase.util._duration import (
    Duration,
    DurationError,
)

__all__ = [
    "BOOL",
    "DURATION",
    "FLOAT",
    "INT",
    "STRING",
    "STRINGS",
    "Flag",
    "FlagError",
    "FlagSet",
    "FlagType",
    "NamedFlagSets",
]


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def _escape(ch: str) -> str:
    """A character that is not printable, spelled as Go's strconv.Quote spells it."""
    code = ord(ch)
    if ch in _GO_ESCAPES:
        return _GO_ESCAPES[ch]
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte of the command line (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x80:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` on one line, what is not printable spelled as Go's ``%q`` does: errors quote what users typed."""
    return "".join(ch if ch.isprintable() or ch == " " else _escape(ch) for ch in text)


def go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` (pflag's ``%q``): a value with a newline or a control character stays on one line."""
    return '"' + printable(text.replace("\\", "\\\\").replace('"', '\\"')) + '"'


class FlagError(ValueError):
    """A command line that does not parse; the message is pflag's, on one line whatever the arguments hold."""

    def __init__(self, message: str) -> None:
        super().__init__(printable(message))


@attrs.frozen
class FlagType:
    """How one kind of value is parsed from and printed to the command line."""

    name: str
    parse: Callable[[str], Any]
    format: Callable[[Any], str] = str
    #: The zero value: defaults equal to it are not printed in help, as pflag does.
    zero: Any = None


def _parse_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "t", "true"):
        return True
    if value in ("0", "f", "false"):
        return False
    raise ValueError(f"strconv.ParseBool: parsing {go_quote(text)}: invalid syntax")


def _parse_int(text: str) -> int:
    try:
        return int(text.strip(), 0)
    except ValueError:
        raise ValueError(f"strconv.ParseInt: parsing {go_quote(text)}: invalid syntax") from None


def _parse_float(text: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise ValueError(f"strconv.ParseFloat: parsing {go_quote(text)}: invalid syntax") from None


def _parse_duration(text: str) -> Duration:
    try:
        return Duration(text)
    except DurationError as err:
        raise ValueError(str(err)) from None


def _parse_strings(text: str) -> list[str]:
    return [part.strip() for part in text.split(",")] if text.strip() else []


def _format_bool(value: Any) -> str:
    return "true" if value else "false"


def _format_strings(value: Any) -> str:
    return "[" + ",".join(value or []) + "]"


def _parse_map_string_bool(text: str) -> dict[str, bool]:
    result: dict[str, bool] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"{part} must be formatted as key=value")
        result[key.strip()] = _parse_bool(value)
    return result


def _format_map_string_bool(value: Any) -> str:
    return ",".join(f"{k}={_format_bool(v)}" for k, v in sorted((value or {}).items()))


STRING = FlagType("string", str, str, "")
BOOL = FlagType("bool", _parse_bool, _format_bool, False)
INT = FlagType("int", _parse_int, str, 0)
FLOAT = FlagType("float", _parse_float, lambda v: format(float(v), "g"), 0.0)
DURATION = FlagType("duration", _parse_duration, lambda v: str(Duration(v)), 0.0)
STRINGS = FlagType("strings", _parse_strings, _format_strings, [])
MAP_STRING_BOOL = FlagType("mapStringBool", _parse_map_string_bool, _format_map_string_bool, {})


def normalize(name: str) -> str:
    """component-base's WordSepNormalizeFunc: ``--leader_elect`` is ``--leader-elect``."""
    return name.replace("_", "-")


@attrs.define(eq=False)
class Flag:
    """One flag, bound to ``setattr(target, attr, value)`` as pflag binds a variable."""

    name: str
    type: FlagType
    target: Any
    attr: str
    usage: str
    shorthand: str = ""
    #: Set when the flag is deprecated: the reason printed on use.
    deprecated: str = ""
    #: Set when the flag is accepted but does nothing here: why, printed once when it is set.
    inert: str = ""
    #: Never shown in help. pflag's MarkDeprecated hides the flag too; kube-scheduler's style shows it.
    hidden: bool = False
    #: The value a bare ``--flag`` means (``true`` for bools), as pflag's NoOptDefVal.
    no_opt_default: str | None = None
    #: A custom setter for values that are more than one attribute (feature gates, say).
    setter: Callable[[Any], None] | None = None
    #: Text shown as the type in help, when not the type's name (``Level`` for ``-v``).
    type_label: str = ""
    #: Holds a secret (a token, a password): logged as ``<redacted>``, never as its value.
    secret: bool = False
    changed: bool = False
    default_text: str = attrs.field(init=False, default="")

    def __attrs_post_init__(self) -> None:
        self.default_text = self.value_text()

    def value(self) -> Any:
        return getattr(self.target, self.attr)

    def value_text(self) -> str:
        return self.type.format(self.value())

    def _invalid(self, text: str, err: ValueError) -> FlagError:
        """pflag's message, the value quoted as its ``%q`` quotes it."""
        return FlagError(f'invalid argument {go_quote(text)} for "{self.display_name()}" flag: {err}')

    def set(self, text: str) -> None:
        try:
            value = self.type.parse(text)
        except ValueError as err:
            raise self._invalid(text, err) from None
        if self.setter is not None:
            try:
                self.setter(value)
            except ValueError as err:
                raise self._invalid(text, err) from None
        else:
            setattr(self.target, self.attr, [*self.value(), *value] if self.changed and isinstance(value, list)
                    else value)  # pflag's slices: a flag given again appends
        self.changed = True

    def display_name(self) -> str:
        return f"-{self.shorthand}, --{self.name}" if self.shorthand else f"--{self.name}"

    def default_is_zero(self) -> bool:
        return self.default_text in ("", self.type.format(self.type.zero))


class FlagSet:
    """An ordered set of flags: one section of help."""

    def __init__(self, name: str, owner: NamedFlagSets | None = None) -> None:
        self.name = name
        self._owner = owner
        self._flags: dict[str, Flag] = {}

    def add(self, flag: Flag) -> Flag:
        flag.name = normalize(flag.name)
        taken = self._owner.lookup(flag.name) if self._owner is not None else self._flags.get(flag.name)
        if taken is not None:
            raise ValueError(f"flag redefined: {flag.name}")
        self._flags[flag.name] = flag
        return flag

    def var(self, name: str, target: Any, attr: str, type: FlagType, usage: str, **kw: Any) -> Flag:
        """Bind ``--name`` to ``target.attr``; the attribute's current value is the default."""
        if type is BOOL:
            kw.setdefault("no_opt_default", "true")
        return self.add(Flag(name=name, type=type, target=target, attr=attr, usage=usage, **kw))

    def string(self, name: str, target: Any, attr: str, usage: str, **kw: Any) -> Flag:
        return self.var(name, target, attr, STRING, usage, **kw)

    def bool(self, name: str, target: Any, attr: str, usage: str, **kw: Any) -> Flag:
        return self.var(name, target, attr, BOOL, usage, **kw)

    def int(self, name: str, target: Any, attr: str, usage: str, **kw: Any) -> Flag:
        return self.var(name, target, attr, INT, usage, **kw)

    def float(self, name: str, target: Any, attr: str, usage: str, **kw: Any) -> Flag:
        return self.var(name, target, attr, FLOAT, usage, **kw)

    def duration(self, name: str, target: Any, attr: str, usage: str, **kw: Any) -> Flag:
        return self.var(name, target, attr, DURATION, usage, **kw)

    def strings(self, name: str, target: Any, attr: str, usage: str, **kw: Any) -> Flag:
        return self.var(name, target, attr, STRINGS, usage, **kw)

    def mark_deprecated(self, name: str, reason: str, *, hidden: builtins.bool = True) -> None:
        """pflag's MarkDeprecated (hidden); ``hidden=False`` keeps it in help as kube-scheduler's section does."""
        flag = self._flags[normalize(name)]
        flag.deprecated = reason
        flag.hidden = hidden

    def mark_hidden(self, name: str) -> None:
        self._flags[normalize(name)].hidden = True

    def lookup(self, name: str) -> Flag | None:
        return self._flags.get(normalize(name))

    def __iter__(self) -> Iterator[Flag]:
        return iter(self._flags.values())

    def __len__(self) -> builtins.int:
        return len(self._flags)


class NamedFlagSets:
    """Sections of flags in the order they were first asked for, as component-base's ``NamedFlagSets``."""

    def __init__(self) -> None:
        self._sets: dict[str, FlagSet] = {}

    def flag_set(self, name: str) -> FlagSet:
        if name not in self._sets:
            self._sets[name] = FlagSet(name, self)
        return self._sets[name]

    def sets(self) -> list[FlagSet]:
        return list(self._sets.values())

    def flags(self) -> Iterator[Flag]:
        for fs in self._sets.values():
            yield from fs

    def lookup(self, name: str) -> Flag | None:
        for fs in self._sets.values():
            found = fs.lookup(name)
            if found is not None:
                return found
        return None

    def _shorthand(self, letter: str) -> Flag | None:
        return next((f for f in self.flags() if f.shorthand == letter), None)

    def parse(self, argv: Sequence[str], warn: TextIO | None = None) -> list[str]:
        """Set the flags named in ``argv``; return the positional arguments left over.

        A deprecated flag prints ``Flag --NAME has been deprecated, REASON`` to ``warn`` (stderr).
        """
        out = sys.stderr if warn is None else warn
        positional: list[str] = []
        args = list(argv)
        i = 0
        while i < len(args):
            arg = args[i]
            i += 1
            if arg == "--":
                positional.extend(args[i:])
                break
            if not arg.startswith("-") or arg == "-":
                positional.append(arg)
                continue
            if arg.startswith("--"):
                name, sep, value = arg[2:].partition("=")
                flag = self.lookup(name)
                if flag is None:
                    raise FlagError(f"unknown flag: --{name}")
            else:
                letter, rest = arg[1], arg[2:]
                flag = self._shorthand(letter)
                if flag is None:
                    raise FlagError(f"unknown shorthand flag: '{letter}' in {arg}")
                sep, value = ("=", rest[1:]) if rest.startswith("=") else ("=" if rest else "", rest)
            if not sep:
                if flag.no_opt_default is not None:
                    value = flag.no_opt_default
                elif i < len(args):
                    value = args[i]
                    i += 1
                else:
                    raise FlagError(f"flag needs an argument: {flag.display_name().split(', ')[-1]}")
            if flag.deprecated:
                out.write(f"Flag --{flag.name} has been deprecated, {flag.deprecated}\n")
            if flag.inert and not flag.changed:
                out.write(f"Flag --{flag.name} has no effect here: {flag.inert}\n")
            flag.set(value)
        return positional

    def changed(self, name: str) -> bool:
        flag = self.lookup(name)
        return flag is not None and flag.changed

    def help_sections(self, width: int | None = None) -> str:
        """Every section with its visible flags, pflag's column layout, wrapped at ``width`` when given."""
        parts = []
        for fs in self._sets.values():
            body = flag_usages(fs, width)
            if body:
                parts.append(f"{fs.name}:\n\n{body}")
        return "\n".join(parts)


def _usage_line(flag: Flag) -> tuple[str, str]:
    left = f"  -{flag.shorthand}, --{flag.name}" if flag.shorthand else f"      --{flag.name}"
    type_name = flag.type_label or ("" if flag.type is BOOL else flag.type.name)
    if type_name:
        left += " " + type_name
    if flag.no_opt_default is not None and flag.type is not BOOL:
        left += f"[={flag.no_opt_default}]"
    usage = flag.usage
    if flag.deprecated and not usage.startswith("DEPRECATED"):
        usage = f"DEPRECATED: {usage}" if usage else f"DEPRECATED: {flag.deprecated}"
    if not flag.default_is_zero():
        default = f'"{flag.default_text}"' if flag.type is STRING else flag.default_text
        usage += f" (default {default})"
    return left, usage


def flag_usages(flags: Iterable[Flag], width: int | None = None) -> str:
    """pflag's ``FlagUsagesWrapped``: sorted by name, padded to one column, usage after, optionally wrapped."""
    rows = [_usage_line(f) for f in sorted(flags, key=lambda f: f.name) if not f.hidden]
    if not rows:
        return ""
    column = max(len(left) for left, _ in rows) + 3
    lines = []
    for left, usage in rows:
        wrapped: list[str] = []
        for paragraph in usage.split("\n"):
            if width and width > column + 20:
                wrapped.extend(textwrap.wrap(paragraph, width - column) or [""])
            else:
                wrapped.append(paragraph)
        lines.append(left.ljust(column) + wrapped[0])
        lines.extend((" " * column + more).rstrip() for more in wrapped[1:])
    return "\n".join(lines) + "\n"


def terminal_width() -> int | None:
    """The terminal's width when stdout is one; ``None`` (no wrapping) otherwise, as kube-scheduler does."""
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns
