"""Reading config text: YAML (or JSON) into ruamel's round-trip tree, which knows every value's line.

Syntax errors, unreadable files and duplicate keys become :class:`LocatedError`s here; the tree is then
turned into plain Python for conversion, and kept to look up the line of any field path a later problem
names. ruamel.yaml is imported on first use, so a component that reads no file never loads it.
"""

from __future__ import annotations

import datetime
from typing import Any

from componentbase.componentconfig._errors import DecodeError, LocatedError

__all__ = ["Segment", "line_of", "load_yaml", "plain", "read_file"]

#: Where a value sits below the document root: ("field", wire name), ("key", map key) or ("index", i).
Segment = tuple[str, str | int]


def read_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        reason = (e.strerror or str(e))
        raise DecodeError([LocatedError(f"open {path}", None, reason[:1].lower() + reason[1:])]) from e
    except UnicodeDecodeError as e:
        raise DecodeError([LocatedError(path, None, f"not UTF-8 text: {e.reason}")]) from e


def load_yaml(text: str, source: str) -> tuple[Any, list[LocatedError]]:
    """The round-trip tree (it knows its line numbers) and the duplicate keys found on the way."""
    from ruamel.yaml.constructor import DuplicateKeyError  # slow import: only when a config is read or written

    try:
        return _parse(text, source, allow_duplicates=False), []
    except DuplicateKeyError:
        pass
    # ruamel stops at the first duplicate; find them all, then read on to report the other problems too.
    return _parse(text, source, allow_duplicates=True), _duplicate_keys(text, source)


def _parse(text: str, source: str, allow_duplicates: bool) -> Any:
    from ruamel.yaml import YAML  # slow import: only when a config is read or written
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.reader import ReaderError

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = allow_duplicates
    try:
        return yaml.load(text)
    except DuplicateKeyError:
        raise
    except MarkedYAMLError as e:
        raise DecodeError([_syntax_error(e, source)]) from e
    except ReaderError as e:
        line = text[: e.position].count("\n") + 1
        raise DecodeError([LocatedError(source, line, f"unacceptable character: {e.reason}")]) from e
    except YAMLError as e:
        raise DecodeError([LocatedError(source, None, str(e))]) from e


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
    from ruamel.yaml import YAML  # slow import: only when a config is read or written
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

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

    walk(YAML(typ="rt").compose(text))
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
    line = None if lc is None else lc.line + 1
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
