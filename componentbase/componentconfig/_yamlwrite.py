"""Writing a config's plain data as YAML text without ruamel's emitter, in ruamel's exact layout.

ruamel's representer, serializer and emitter spend about 15 ms on a scheduler config of 350 values, and
``--write-config-to``, the CLI tests and every user's config round trip pay it. A written config is
plain data (maps with string keys, lists, strings, numbers, booleans, null) laid out in block style, so
this module writes that layout directly. It takes only scalars whose text it knows ruamel writes the same
way (plain words, numbers, ``''``); for anything else :func:`block_yaml` returns ``None`` and the caller
lets ruamel write the whole document. tests/config/test_yaml_write.py holds the two to the same text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

__all__ = ["block_yaml"]

#: Words that ruamel writes unquoted when the YAML resolver reads them back as strings: no character that
#: starts or ends a YAML construct, single spaces between words, short enough never to be folded or to make
#: a key complex (ruamel's simple keys are under 128 characters).
_WORDS = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./-]*(?: [A-Za-z0-9_./-]+)*\Z")
_MAX_WORDS = 120


def block_yaml(data: dict[Any, Any], reads_as_string: Callable[[str], bool]) -> str | None:
    """``data`` as ruamel's round-trip dumper writes it (block style, indent 2, ``null``), or ``None``.

    ``reads_as_string(text)`` says whether an unquoted ``text`` reads back as a string (ruamel's resolver
    decides: ``true``, ``1.5`` or ``null`` do not).
    """
    out: list[str] = []

    def scalar(value: Any) -> str:
        if value is None:
            return "null"
        if value is True or value is False:
            return "true" if value else "false"
        if type(value) is int:
            return str(value)
        if type(value) is float:
            if math.isnan(value):
                return ".nan"
            if math.isinf(value):
                return ".inf" if value > 0 else "-.inf"
            return repr(value).lower()
        if type(value) is str:
            if value == "":
                return "''"
            if len(value) <= _MAX_WORDS and _WORDS.match(value) and reads_as_string(value):
                return value
        if value == {} and type(value) is dict:
            return "{}"
        if value == [] and type(value) is list:
            return "[]"
        raise _Unknown

    def mapping(node: dict[Any, Any], indent: int, lead: str) -> None:
        for i, (key, value) in enumerate(node.items()):
            if type(key) is not str:
                raise _Unknown
            head = (lead if i == 0 else " " * indent) + scalar(key) + ":"
            if value and type(value) is dict:
                out.append(head)
                mapping(value, indent + 2, " " * (indent + 2))
            elif value and type(value) is list:
                out.append(head)
                sequence(value, indent, " " * indent)
            else:
                out.append(f"{head} {scalar(value)}")

    def sequence(node: list[Any], indent: int, lead: str) -> None:
        for i, item in enumerate(node):
            prefix = (lead if i == 0 else " " * indent) + "- "
            if item and type(item) is dict:
                mapping(item, indent + 2, prefix)
            elif item and type(item) is list:
                sequence(item, indent + 2, prefix)
            else:
                out.append(prefix + scalar(item))

    if not data or type(data) is not dict:
        return None
    try:
        mapping(data, 0, "")
    except _Unknown:
        return None
    return "\n".join(out) + "\n"


class _Unknown(Exception):
    """A value this writer does not know how ruamel would write."""
