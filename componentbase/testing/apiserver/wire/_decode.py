"""The type errors kube-apiserver's JSON decoder reports for a built-in kind's body, before any validation.

``replicas: "3"`` or ``containers: {}`` cannot be decoded into kube's Go types; kube answers 400 with Go's
encoding/json message, e.g. ``Deployment in version "v1" cannot be handled as a Deployment: json: cannot
unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32``. The field types come
from the official client's models (see ``_fields``); the Go names are derived from them. The client does
not record integer widths: fields counting seconds, generations and sizes read as int64, others as int32.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["fields_of", "first_type_error", "inner_type"]

_MODEL_PREFIX = re.compile(r"^(?:[A-Z][a-z]+)*?V\d+(?:alpha\d+|beta\d+)?(?=[A-Z])")
# string fields whose Go type is resource.Quantity, which also decodes a JSON number
_QUANTITIES = frozenset({"limits", "requests", "capacity", "allocatable", "hard", "used", "sizeLimit", "storage"})
_SCALARS = frozenset({str, int, float, bool, type(None)})
_INT64 = re.compile(r"(Seconds|Generation|generation|Bytes|Count|Limit|RevisionHistoryLimit)$")


@functools.cache
def _models() -> Any:
    # slow: importing the official client's models loads its ~1000 modules (seconds); only unknown-field
    # checks need them, and a test process has usually loaded them already
    from kubernetes.client import models

    return models


@functools.cache
def fields_of(model: str) -> dict[str, str] | None:
    """JSON field name -> the client's type string (``List[V1Container]``...) of a model; None if unknown."""
    cls = getattr(_models(), model, None)
    if cls is None or not hasattr(cls, "openapi_types"):
        return None
    return {cls.attribute_map[py]: kind for py, kind in cls.openapi_types.items()}


@functools.cache
def inner_type(kind: str) -> tuple[str, str]:
    """``List[X]`` -> ("list", "X"); ``Dict[str, X]`` -> ("dict", "X"); a model or scalar -> ("", kind)."""
    low = kind.lower()
    if low.startswith("list[") and kind.endswith("]"):
        return "list", kind[5:-1]
    if low.startswith("dict(") or low.startswith("dict["):
        return "dict", kind[kind.index(",") + 1:-1].strip()
    return "", kind


@functools.cache
def _go_type(kind: str, name: str) -> str:
    shape, inner = inner_type(kind)
    if shape == "list":
        return "[]" + _go_type(inner, name)
    if shape == "dict":
        return "map[string]" + _go_type(inner, name)
    scalar = {"str": "string", "bool": "bool", "float": "float64", "object": "interface {}"}.get(inner)
    if scalar is not None:
        return scalar
    if inner == "int":
        return "int64" if _INT64.search(name) else "int32"
    match = _MODEL_PREFIX.match(inner)
    version = match.group(0) if match else "V1"
    package = re.sub(r"^(?:[A-Z][a-z]+)*?(V\d)", r"\1", version).lower()
    return f"{package}.{inner[len(version):]}" if match else inner


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _fits(kind: str, value: Any, name: str) -> bool:
    shape, inner = inner_type(kind)
    if value is None or inner in ("object", "datetime", "date", "bytes"):
        return True
    got = _json_kind(value)
    if shape:
        return got == ("array" if shape == "list" else "object")
    if inner == "str":
        return got == "string" or (got == "number" and name in _QUANTITIES)
    if inner == "int":
        return got == "number" and float(value).is_integer()
    if inner == "float":
        return got == "number"
    if inner == "bool":
        return got == "bool"
    return got == "object"


def _walk(kind: str, value: Any, path: str, struct: str, name: str) -> str | None:
    if not _fits(kind, value, name):
        what = _json_kind(value)
        if what == "number" and not float(value).is_integer():
            what = f"number {value}"
        return (f"json: cannot unmarshal {what} into Go struct field {struct}.{path} of type "
                f"{_go_type(kind, name)}")
    shape, inner = inner_type(kind)
    if shape == "list":
        for item in value or ():
            found = _walk(inner, item, path, struct, name)
            if found:
                return found
    elif shape == "dict":
        for item in (value or {}).values():
            found = _walk(inner, item, path, struct, name)
            if found:
                return found
    elif isinstance(value, dict):
        fields = fields_of(inner)
        if fields is None:
            return None
        go_struct = _go_type(inner, "").rpartition(".")[2]
        for key, item in value.items():
            field = fields.get(key)
            if field is None or (type(item) in _SCALARS and _fits(field, item, key)):
                continue  # a field the type lacks, or a scalar it holds: nothing below to check
            found = _walk(field, item, f"{path}.{key}" if path else key, go_struct, key)
            if found:
                return found
    return None


def first_type_error(model: str, doc: dict[str, Any]) -> str | None:
    """Go's message for the first value in ``doc`` that kube's type ``model`` cannot hold, or None."""
    return _walk(model, doc, "", "", "")
