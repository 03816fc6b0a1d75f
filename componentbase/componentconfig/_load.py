"""Reading config text: YAML (or JSON) into ruamel's round-trip tree, which knows every value's line.

Syntax errors, unreadable files and duplicate keys become :class:`LocatedError`s here; the tree is then
turned into plain Python for conversion, and kept to look up the line of any field path a later problem
names. ruamel.yaml is imported on first use, so a component that reads no file never loads it.

A config file is untrusted input: it is refused unless it is a regular file (a FIFO would block the
read, a device never ends), and a pass over its events bounds nesting and alias expansion before
anything recursive or expanding (ruamel's composer, ``plain``, conversion) sees it.
"""

from __future__ import annotations

import datetime
import functools
import os
import re
import stat
from typing import Any

from componentbase.componentconfig._errors import DecodeError, LocatedError

__all__ = ["MAX_ALIASES", "MAX_DEPTH", "MAX_VALUES", "Segment", "line_of", "load_yaml", "plain", "read_file"]

#: Nesting deeper than this, aliases expanded, is refused: no config nests past ten, and conversion recurses, so
#: this stays far below Python's recursion limit (kube's go-yaml allows 10000: Go's stacks grow; ours do not).
MAX_DEPTH = 100
#: Alias references allowed in one document (a "billion laughs" needs many of them).
MAX_ALIASES = 1000
#: Values (scalars and containers) a document may hold once its aliases are expanded.
MAX_VALUES = 100_000
#: go-yaml's words for an alias bomb, which kube's components print; ours add which bound was passed.
_EXCESSIVE = "document contains excessive aliasing"

#: Where a value sits below the document root: ("field", wire name), ("key", map key) or ("index", i).
Segment = tuple[str, str | int]


def read_file(path: str) -> str:
    """The text of the regular file at ``path``; anything else (a FIFO, a directory, a device) is refused at once."""
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not wait for one; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        reason = (e.strerror or str(e))
        raise DecodeError([LocatedError(f"open {path}", None, reason[:1].lower() + reason[1:])]) from e
    try:
        kind = _file_kind(os.fstat(fd).st_mode)
        if kind:
            reason = "is a directory" if kind == "a directory" else f"is {kind}, not a regular file"
            raise DecodeError([LocatedError(f"open {path}", None, reason)])
        os.set_blocking(fd, True)
        with os.fdopen(fd, encoding="utf-8") as f:
            fd = -1
            return f.read()
    except OSError as e:
        reason = (e.strerror or str(e))
        raise DecodeError([LocatedError(f"read {path}", None, reason[:1].lower() + reason[1:])]) from e
    except UnicodeDecodeError as e:
        raise DecodeError([LocatedError(path, None, f"not UTF-8 text: {e.reason}")]) from e
    finally:
        if fd >= 0:
            os.close(fd)


def _file_kind(mode: int) -> str:
    """What a non-regular file is, for the message; ``""`` for a regular file."""
    if stat.S_ISREG(mode):
        return ""
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "a special file")


def load_yaml(text: str, source: str) -> tuple[Any, list[LocatedError]]:
    """The round-trip tree (it knows its line numbers) and the duplicate keys found on the way."""
    from ruamel.yaml.constructor import DuplicateKeyError  # slow import: only when a config is read or written

    try:
        return _parse(text, source, allow_duplicates=False), []
    except DuplicateKeyError:
        pass
    # ruamel stops at the first duplicate; find them all, then read on to report the other problems too.
    return _parse(text, source, allow_duplicates=True), _duplicate_keys(text, source)


_LINE_END = re.compile("[\n\0\r\x85\u2028\u2029]")  # where ruamel's scanner ends a comment


def _new_yaml() -> Any:
    """A round-trip YAML (it keeps line numbers) that reads in linear time and refuses a bomb as it reads."""
    from ruamel.yaml import YAML  # slow import: only when a config is read or written

    yaml = YAML(typ="rt")
    yaml.Scanner, yaml.Parser = _reader_classes()
    return yaml


@functools.cache
def _reader_classes() -> tuple[type, type]:
    """ruamel's round-trip scanner and parser, changed where config files need it.

    The scanner skips comments in one step instead of keeping them: ruamel builds a comment one character
    at a time, which is quadratic in the line's length (a 1 MB comment took minutes), and a config is never
    written back from what was read. With no comments to attach, its token methods are the plain
    scanner's, without the round-trip one's search for comments around every token (two thirds of reading
    a scheduler config).

    The parser checks the shape of the document as the composer takes each event (:class:`_Shape`), so
    deep nesting and alias bombs are refused before the composer recurses into them or anything expands
    them, in the same single pass that reads the document.
    """
    from ruamel.yaml.parser import RoundTripParser  # slow import: only when a config is read or written
    from ruamel.yaml.scanner import RoundTripScanner, Scanner

    class _Scanner(RoundTripScanner):
        check_token = Scanner.check_token
        peek_token = Scanner.peek_token
        get_token = Scanner.get_token

        def scan_to_next_token(self) -> None:
            reader = self.reader
            if reader.index == 0 and reader.peek() == "\uFEFF":
                reader.forward()
            blank = " \t" if self.flow_level > 0 else " "
            while True:
                while reader.peek() in blank:
                    reader.forward()
                if reader.peek() == "#":  # the buffer holds the whole text: a comment ends at the next line end
                    end = _LINE_END.search(reader.buffer, reader.pointer)
                    skipped = (len(reader.buffer) if end is None else end.start()) - reader.pointer
                    reader.pointer += skipped
                    reader.index += skipped
                    reader.column += skipped
                if not self.scan_line_break():
                    return
                if not self.flow_level:
                    self.allow_simple_key = True

    class _Parser(RoundTripParser):
        def reset_parser(self) -> None:
            super().reset_parser()
            self.shape = _Shape()

        def get_event(self) -> Any:
            event = super().get_event()
            if event is not None:
                self.shape.see(event)
            return event

    return _Scanner, _Parser


class _TooLarge(Exception):
    """A document past one of the limits, or holding itself, at ``event``."""

    def __init__(self, event: Any, message: str) -> None:
        super().__init__(message)
        self.event = event


class _Shape:
    """Nesting, aliases and values expanded so far, counted from the event stream, which is read without recursion.

    An alias counts as the values and levels of what it names, so depth and size are those of the expanded
    document, which is what conversion walks. An alias inside its own anchor would be an endless value:
    ruamel reads it as ``null``; go-yaml, kube's reader, refuses it, and so does this.
    """

    def __init__(self) -> None:
        from ruamel.yaml import events  # slow import: only when a config is read or written

        self.events = events
        self.depth = 0
        self.aliases = 0
        self.sizes: list[int] = [0]  # values inside each open collection, the document's at the bottom
        self.heights: list[int] = [0]  # levels below each open collection, likewise
        self.total = 0  # sum(sizes)
        self.anchored: dict[str, tuple[int, int]] = {}  # anchor: (values, levels) of what it names
        self.opened: list[str | None] = []

    def see(self, event: Any) -> None:
        events = self.events
        if isinstance(event, events.AliasEvent):
            if event.anchor in self.opened:
                raise _TooLarge(event, f"anchor '{event.anchor}' value contains itself")
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise _TooLarge(event, f"{_EXCESSIVE}: more than {MAX_ALIASES} aliases")
            size, height = self.anchored.get(event.anchor, (1, 0))
            if self.depth + height > MAX_DEPTH:
                raise _TooLarge(event, f"exceeded max depth of {MAX_DEPTH} once aliases are expanded")
            self._add(size)
            self.heights[-1] = max(self.heights[-1], height)
        elif isinstance(event, events.CollectionStartEvent):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise _TooLarge(event, f"exceeded max depth of {MAX_DEPTH}")
            self.sizes.append(0)
            self.heights.append(0)
            self.opened.append(event.anchor)
            self._add(1)
        elif isinstance(event, events.CollectionEndEvent):
            self.depth -= 1
            size, height, anchor = self.sizes.pop(), self.heights.pop() + 1, self.opened.pop()
            self.sizes[-1] += size
            self.heights[-1] = max(self.heights[-1], height)
            if anchor:
                self.anchored[anchor] = (size, height)
        elif isinstance(event, events.NodeEvent):  # a scalar
            self._add(1)
            if event.anchor:
                self.anchored[event.anchor] = (1, 0)
        if self.sizes[-1] > MAX_VALUES or self.total > MAX_VALUES:
            raise _TooLarge(event, f"{_EXCESSIVE}: more than {MAX_VALUES} values once aliases are expanded")

    def _add(self, n: int) -> None:
        self.sizes[-1] += n
        self.total += n


def _parse(text: str, source: str, allow_duplicates: bool) -> Any:
    from ruamel.yaml.constructor import DuplicateKeyError  # slow import: only when a config is read or written
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.reader import ReaderError

    yaml = _new_yaml()
    yaml.allow_duplicate_keys = allow_duplicates
    try:
        return yaml.load(text)
    except DuplicateKeyError:
        raise
    except _TooLarge as e:
        mark = getattr(e.event, "start_mark", None)
        raise DecodeError([LocatedError(source, None if mark is None else mark.line + 1, str(e))]) from None
    except MarkedYAMLError as e:
        raise DecodeError([_syntax_error(e, source)]) from e
    except ReaderError as e:
        line = text[: e.position].count("\n") + 1
        raise DecodeError([LocatedError(source, line, f"unacceptable character: {e.reason}")]) from e
    except YAMLError as e:
        raise DecodeError([LocatedError(source, None, str(e))]) from e
    except Exception as e:  # ruamel fails on some odd input itself ("%YAML 9.9" after content: KeyError((9, 9)))
        raise DecodeError([LocatedError(source, None, f"not valid YAML ({type(e).__name__}: {e})")]) from e


def _syntax_error(e: Any, source: str) -> LocatedError:
    """``file:line: problem``, with where the construct that failed began when that is elsewhere."""
    mark = e.problem_mark or e.context_mark
    line = None if mark is None else mark.line + 1
    context = str(e.context or "")
    if context and e.context_mark is not None and e.context_mark.line + 1 != line:
        context += f" at line {e.context_mark.line + 1}"
    message = ", ".join(part for part in (context, str(e.problem or "")) if part)
    return LocatedError(source, line, message)


def _duplicate_keys(text: str, source: str) -> list[LocatedError]:
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode  # slow import: only when a config is read

    problems: list[LocatedError] = []
    seen_nodes: set[int] = set()

    def walk(node: Any) -> None:
        if node is None or id(node) in seen_nodes:
            return
        seen_nodes.add(id(node))
        if isinstance(node, SequenceNode):
            for item in node.value:
                walk(item)
        elif isinstance(node, MappingNode):
            keys: set[tuple[str | None, str]] = set()
            for key, value in node.value:
                if isinstance(key, ScalarNode) and key.value != "<<":
                    if (key.tag, key.value) in keys:
                        line = key.start_mark.line + 1
                        problems.append(LocatedError(source, line, f'key "{key.value}" already set in map'))
                    keys.add((key.tag, key.value))
                walk(value)

    walk(_new_yaml().compose(text))
    return problems


def plain(value: Any) -> Any:
    """ruamel's scalar and container subclasses as plain Python, so equality and JSON just work."""
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if type(value) is int else _plain_int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, datetime.date):
        return value.isoformat()  # an unquoted 2024-01-01 is a string to every config field
    return value


def _plain_int(value: int) -> int | bool:
    from ruamel.yaml.scalarbool import ScalarBoolean  # an anchored ``true`` is an int subclass

    return bool(value) if isinstance(value, ScalarBoolean) else int(value)


def line_of(root: Any, segs: tuple[Segment, ...], at_key: bool = False) -> int | None:
    """The line of the value at ``segs`` (of its key with ``at_key``), else of the nearest parent."""
    node = root
    lc = getattr(node, "lc", None)
    # a tagged scalar document (``=`` is YAML's value tag) has an ``lc`` without a line
    line = None if lc is None or lc.line is None else lc.line + 1
    for i, (kind, name) in enumerate(segs):
        lc = getattr(node, "lc", None)
        if lc is None:
            return line
        if kind == "index" and isinstance(node, list) and isinstance(name, int) and name < len(node):
            pos = lc.item(name)
        elif kind != "index" and isinstance(node, dict) and name in node:
            # an empty value (``name:``) is placed by ruamel on the next line; name the key's line instead
            use_key = (at_key and i == len(segs) - 1) or node[name] is None
            pos = lc.key(name) if use_key else lc.value(name)
        else:
            return line
        line = pos[0] + 1
        node = node[name]
    return line
