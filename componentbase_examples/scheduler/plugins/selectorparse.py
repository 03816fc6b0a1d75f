"""Node selector terms and label requirements checked as apimachinery's ``labels.NewRequirement`` and
component-helpers' ``nodeaffinity`` check them, with their field paths and words.

Apart from the plugins' helpers so that config validation (NodeAffinityArgs' ``addedAffinity``) reads the
same rules without loading the scheduling framework.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from componentbase import field
from componentbase.util import validation

__all__ = ["aggregate", "go_int", "requirement_errors", "term_errors"]


def aggregate(errs: list[str]) -> str:
    """apimachinery's ``NewAggregate(...).Error()``: one message as is, several in brackets."""
    return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"


# Selectors are parsed per pod and cycle (topology spread) and keys and values repeat: check each once.
_key_errors = functools.lru_cache(maxsize=4096)(validation.qualified_name)
_value_errors = functools.lru_cache(maxsize=4096)(validation.label_value)


def requirement_errors(key: str, op: str, values: list[str], path: field.Path) -> list[str]:
    """``labels.NewRequirement``'s errors at ``path``: the key a qualified name, the operator's rule on the
    values, each value a label value (apimachinery returns them all, aggregated)."""
    errs: list[str] = []
    key_errs = _key_errors(key)
    if key_errs:
        errs.append(str(field.invalid(path.child("key"), key, "; ".join(key_errs))))
    vpath = path.child("values")
    if op in ("In", "NotIn"):
        if not values:
            errs.append(str(field.invalid(vpath, values, "for 'in', 'notin' operators, values set can't be empty")))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(str(field.invalid(vpath, values, "values set must be empty for exists and does not exist")))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(str(field.invalid(vpath, values, "for 'Gt', 'Lt' operators, exactly one value is required")))
        errs += [str(field.invalid(vpath.index(i), v, "for 'Gt', 'Lt' operators, the value must be an integer"))
                 for i, v in enumerate(values) if go_int(v) is None]
    for i, value in enumerate(values):
        value_errs = _value_errors(value)
        if value_errs:
            errs.append(str(field.invalid(vpath.index(i).key(key), value, "; ".join(value_errs))))
    return errs


def go_int(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``: a sign and decimal digits in int64's range, else ``None``."""
    if not _INT.fullmatch(text):
        return None
    value = int(text)
    return value if -(1 << 63) <= value < (1 << 63) else None


_INT = re.compile(r"[+-]?[0-9]+")


def term_errors(term: Mapping[str, Any], path: field.Path) -> list[str]:
    """What component-helpers' ``newNodeSelectorTerm`` finds wrong in a ``NodeSelectorTerm``, each with its
    path under ``path``: a label requirement ``labels.NewRequirement`` refuses, an operator it does not know, a
    ``matchFields`` entry not ``In``/``NotIn`` of one value."""
    errs: list[str] = []
    for i, expr in enumerate(term.get("matchExpressions") or ()):
        epath = path.child("matchExpressions").index(i)
        op = str(expr.get("operator", ""))
        if op not in _LABEL_OPERATORS:
            errs.append(str(field.FieldError(field.ErrorType.NOT_SUPPORTED, epath.child("operator"), op)))
            continue
        errs += requirement_errors(str(expr.get("key", "")), op, [str(v) for v in expr.get("values") or ()],
                                    epath)
    for i, expr in enumerate(term.get("matchFields") or ()):
        fpath = path.child("matchFields").index(i)
        op = str(expr.get("operator", ""))
        values = list(expr.get("values") or ())
        if op not in ("In", "NotIn"):
            errs.append(str(field.not_supported(fpath.child("operator"), op, ("In", "NotIn"))))
        elif len(values) != 1:
            errs.append(str(field.invalid(fpath.child("values"), values, "must have one element")))
    return errs


_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


