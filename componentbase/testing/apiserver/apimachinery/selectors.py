"""Label and field selectors in kube's string syntax, compiled once per request to a predicate."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ._labelselector import parse_label_selector
from .errors import ApiError

__all__ = ["Predicate", "compile_selectors", "field_value", "selector_string"]

Predicate = Callable[[dict[str, Any]], bool]

def _labels(obj: dict[str, Any]) -> dict[str, str]:
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def field_value(obj: dict[str, Any], path: str) -> str:
    """A dotted field as the string a field selector compares; missing fields read as ""."""
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, dict):
            return ""
        value = value.get(part)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def _field_requirement(req: str, path_of: Callable[[str], str], selector: str) -> Callable[[dict[str, Any]], bool]:
    """One term, split at the first operator as apimachinery's ``fields.ParseSelector`` splits it."""
    m = re.match(r"^(.*?)(!=|==|=)(.*)$", req, re.DOTALL)
    if not m:
        raise ApiError.bad_request(f"invalid selector: '{selector}'; can't understand '{req}'")
    label, op, raw = m.groups()
    path = path_of(label)
    value = _unescape(raw)
    if op == "!=":
        return lambda obj: field_value(obj, path) != value
    return lambda obj: field_value(obj, path) == value


def _split_fields(text: str) -> list[str]:
    """Split a field selector on unescaped commas."""
    return [p for p in re.split(r"(?<!\\),", text) if p]


def compile_selectors(label_selector: str | None, field_selector: str | None,
                      path_of: Callable[[str], str] = str) -> Predicate | None:
    """One predicate for both selectors, or None when neither restricts anything.

    ``path_of`` turns a field label into the JSON path it reads, refusing one the kind does not support.
    """
    labels = parse_label_selector(label_selector or "")
    fields = [_field_requirement(r, path_of, field_selector or "") for r in _split_fields(field_selector or "")]
    if not labels and not fields:
        return None

    if not fields and len(labels) == 1:  # the common informer selector (``shard=a``): one call per object
        only = labels[0]
        return lambda obj: only(_labels(obj))

    def match(obj: dict[str, Any]) -> bool:
        if labels:
            ls = _labels(obj)
            for req in labels:
                if not req(ls):
                    return False
        for field_req in fields:
            if not field_req(obj):
                return False
        return True

    return match


def selector_string(selector: Any) -> str:
    """A LabelSelector (or a ReplicationController's plain map, or a CRD's string) as kube prints it."""
    if isinstance(selector, str) or selector is None:
        return selector or ""
    if not isinstance(selector, dict):
        return ""
    if not ({"matchLabels", "matchExpressions"} & set(selector)):
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or ():
        key, op, values = expr.get("key"), expr.get("operator"), sorted(expr.get("values") or ())
        if op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
        else:
            parts.append(f"{key} {op.lower()} ({','.join(values)})")
    return ",".join(sorted(parts))
