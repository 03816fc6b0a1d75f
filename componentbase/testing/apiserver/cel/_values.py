"""Objects as kube hands them to CEL (UnstructuredToVal): numbers of ``type: number`` as doubles, strings of
format date-time/date/duration/byte as timestamps, durations (protobuf's, the only ones cel-expr-python
takes in) and bytes, object properties under their escaped names (``namespace`` is ``__namespace__``, and
``namespace`` too, ``a-b`` is ``a__dash__b``), and at a resource's root only ``apiVersion``, ``kind`` and
``metadata.name``/``generateName`` of the metadata.

A node whose subtree needs none of this is handed over as is (``converter`` returns None for it), so most
rules cost no copy."""

from __future__ import annotations

import base64
import datetime
import json
import re
from collections.abc import Callable
from typing import Any

from google.protobuf import duration_pb2, timestamp_pb2  # type: ignore[import-untyped]

__all__ = ["cel_names", "converter", "escape", "unordered"]

Convert = Callable[[Any], Any]
_RESERVED = frozenset(("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
                       "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"))
_ESCAPABLE = re.compile(r"^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$")
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def escape(name: str) -> str | None:
    """A property name as CEL sees it (kube's cel.Escape); None if it cannot be named in CEL."""
    if name in _RESERVED:
        return f"__{name}__"
    if not _ESCAPABLE.match(name):
        return None
    return (name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__")
            .replace("/", "__slash__"))


def cel_names(name: str) -> tuple[str, ...]:
    """The names CEL reaches a property by: its escaped name, and a reserved word also as itself, as kube's
    type provider recognizes keywords as field names (``t.metadata.namespace`` as ``__namespace__``)."""
    key = escape(name)
    if key is None:
        return ()
    return (key, name) if name in _RESERVED else (key,)


def _timestamp(value: Any) -> Any:
    """A date or date-time as a protobuf Timestamp: cel-expr-python takes no Python datetime as input."""
    if not isinstance(value, str):
        return value
    try:
        if len(value) == 10:
            moment = datetime.datetime.fromisoformat(value).replace(tzinfo=datetime.UTC)
        else:
            moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(moment)
    return stamp


def _duration(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    text, sign = value, 1.0
    if text[:1] in "+-":
        sign, text = (-1.0 if text[0] == "-" else 1.0), text[1:]
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return value
    span = duration_pb2.Duration()
    span.FromTimedelta(datetime.timedelta(seconds=sign * sum(float(n) * _UNITS[u] for n, u in parts)))
    return span


def _bytes(value: Any) -> Any:
    try:
        return base64.b64decode(value) if isinstance(value, str) else value
    except ValueError:
        return value


def _scalar(node: dict[str, Any]) -> Convert | None:
    if node.get("x-kubernetes-int-or-string"):
        return None
    kind, fmt = node.get("type"), node.get("format")
    if kind == "number":
        return lambda v: float(v) if isinstance(v, int) and not isinstance(v, bool) else v
    if kind == "string" and fmt in ("date", "date-time"):
        return _timestamp
    if kind == "string" and fmt == "duration":
        return _duration
    if kind == "string" and fmt == "byte":
        return _bytes
    return None


def _object(node: dict[str, Any], root: bool, canonical: bool) -> Convert | None:
    props: dict[str, Any] = node.get("properties") or {}
    fields: dict[str, tuple[str | None, Convert | None]] = {}
    for name, child in props.items():
        key = escape(name)
        sub = converter(child, canonical=canonical) if isinstance(child, dict) else None
        if key != name or sub is not None:
            fields[name] = (key, sub)
    extra = node.get("additionalProperties")
    each = converter(extra, canonical=canonical) if isinstance(extra, dict) and not props else None
    if not fields and each is None and not root:
        return None

    def convert(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out = {}
        for name, item in value.items():
            if root and name == "metadata" and isinstance(item, dict):
                item = {k: item[k] for k in ("name", "generateName") if k in item}
            elif name in fields:
                key, sub = fields[name]
                if key is None:
                    continue
                if sub is not None and item is not None:
                    item = sub(item)
                if name in _RESERVED:
                    out[name] = item
                name = key
            elif each is not None and item is not None:
                item = each(item)
            out[name] = item
        return out
    return convert


def converter(node: dict[str, Any], root: bool = False, canonical: bool = False) -> Convert | None:
    """How a value of schema ``node`` becomes a CEL value; None when it is handed over unchanged.
    ``canonical``: lists of ``x-kubernetes-list-type`` set or map in a fixed order (see ``unordered``)."""
    kind = node.get("type")
    if kind == "object" or node.get("properties"):
        return _object(node, root or bool(node.get("x-kubernetes-embedded-resource")), canonical)
    if kind == "array" and isinstance(node.get("items"), dict):
        each = converter(node["items"], canonical=canonical)
        order = _order(node) if canonical else None
        if each is None and order is None:
            return None

        def convert(v: Any) -> Any:
            if not isinstance(v, list):
                return v
            items = sorted(v, key=order) if order is not None else v
            return [each(i) if each is not None and i is not None else i for i in items]
        return convert
    return _scalar(node)


def _order(node: dict[str, Any]) -> Callable[[Any], str] | None:
    """The sort key that makes a set (or map) list's order irrelevant: the item (or its keys) as JSON."""
    kind = node.get("x-kubernetes-list-type")
    if kind == "set":
        return lambda item: json.dumps(item, sort_keys=True, default=str)
    keys = node.get("x-kubernetes-list-map-keys") or ()
    if kind == "map" and keys:
        return lambda item: json.dumps([item.get(k) for k in keys] if isinstance(item, dict) else item,
                                       sort_keys=True, default=str)
    return None


def unordered(node: Any) -> bool:
    """Whether ``node`` holds a list kube compares regardless of order: ``x-kubernetes-list-type`` set (as
    sets) or map (by key), in CEL's ``==`` as in ``self == oldSelf``. cel-expr-python compares lists in order,
    so a transition rule sees such lists sorted, on both sides."""
    if not isinstance(node, dict):
        return False
    if node.get("type") == "array" and _order(node) is not None:
        return True
    children = [*(node.get("properties") or {}).values(), node.get("items"), node.get("additionalProperties")]
    return any(unordered(c) for c in children)
