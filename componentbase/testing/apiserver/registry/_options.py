"""A write's options, decoded and validated as kube-apiserver's handlers do before they read the object.

Create, update and patch read theirs from the query. DELETE and DELETECOLLECTION read DeleteOptions
from the body when there is one, and then from the body alone (apiserver's handlers/delete.go): the
query is not looked at, so ``?dryRun=All`` beside a body deletes for real there, and so here.
``dryRun`` may only hold ``All`` (apimachinery's ValidateDryRun); anything else is a 422 naming the
options kind, before any lookup, so a bogus value never reaches the store.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..apimachinery.errors import ApiError
from ..apimachinery.patch import patch_type
from ..wire._wire import Options, decode_object
from ._apply import check_patch_options

__all__ = ["options_of"]

_KINDS = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions",
          "delete": "DeleteOptions", "deletecollection": "DeleteOptions"}
_DRY_RUN_VALUES = ("All",)
_POLICIES = ("Foreground", "Background", "Orphan")
# Go's encoding/json escapes these inside strings; field errors render a bad []string with it.
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def options_of(verb: str, query: Sequence[tuple[str, str]], body: bytes, content_type: str) -> Options:
    """The options of ``verb``; reads carry no dryRun and get the defaults."""
    kind = _KINDS.get(verb)
    if kind is None:
        return Options()
    if verb == "patch":
        patch_type(content_type)  # an unknown patch type is refused before the options are read
        check_patch_options(content_type, query)
    grace: int | None = None
    preconditions: dict[str, Any] | None = None
    policy: Any = None
    orphan: Any = None
    if kind == "DeleteOptions" and body.strip():
        doc = decode_object(body)
        dry_run = _typed(doc, "dryRun", list, "[]string") or []
        bad = [v for v in dry_run if not isinstance(v, str)]
        if bad:
            raise _unmarshal("dryRun", "string", bad[0])
        grace = _typed(doc, "gracePeriodSeconds", int, "int64")
        preconditions = _typed(doc, "preconditions", dict, "v1.Preconditions")
        policy = _typed(doc, "propagationPolicy", str, "v1.DeletionPropagation")
        orphan = doc.get("orphanDependents")
        if orphan is not None and not isinstance(orphan, bool):
            raise _unmarshal("orphanDependents", "bool", orphan)
    else:
        dry_run = [v for k, v in query if k == "dryRun"]
        if kind == "DeleteOptions":
            grace = _grace(query)
            policy = _last(query, "propagationPolicy")
            orphan = _query_bool(query, "orphanDependents")
    if any(v not in _DRY_RUN_VALUES for v in dry_run):
        raise _unsupported_dry_run(kind, dry_run)
    return Options(bool(dry_run), grace, preconditions, _propagation(policy, orphan), orphan)


def _last(query: Sequence[tuple[str, str]], key: str) -> str | None:
    values = [v for k, v in query if k == key]
    return values[-1] if values else None


def _query_bool(query: Sequence[tuple[str, str]], key: str) -> bool | None:
    value = _last(query, key)
    if value is None:
        return None
    if value.lower() not in ("true", "false", "1", "0", "t", "f"):
        raise ApiError.bad_request(f'{key}: invalid value "{value}": must be a boolean')
    return value.lower() in ("true", "1", "t")


def _propagation(policy: str | None, orphan: bool | None) -> str | None:
    """One policy from DeleteOptions' two fields, checked as apimachinery's ValidateDeleteOptions does:
    the legacy ``orphanDependents`` means Orphan (true) or Background (false), as the registry reads it."""
    causes = []
    if orphan is not None and policy is not None:
        causes.append(("FieldValueInvalid", "propagationPolicy",
                       f'Invalid value: "{policy}": orphanDependents and deletionPropagation cannot be both set'))
    if policy is not None and policy not in _POLICIES:
        supported = ", ".join(f'"{p}"' for p in (*_POLICIES, "nil"))
        causes.append(("FieldValueNotSupported", "propagationPolicy",
                       f'Unsupported value: "{policy}": supported values: {supported}'))
    if causes:
        raise ApiError.invalid_fields("meta.k8s.io", "DeleteOptions", "", causes)
    if orphan is not None:
        return "Orphan" if orphan else "Background"
    return policy


def _grace(query: Sequence[tuple[str, str]]) -> int | None:
    values = [v for k, v in query if k == "gracePeriodSeconds"]
    if not values:
        return None
    try:
        return int(values[-1])
    except ValueError:
        raise ApiError.bad_request("gracePeriodSeconds must be an integer") from None


def _typed(doc: dict[str, Any], key: str, kind: type, go_type: str) -> Any:
    """``doc[key]`` when absent, null or of ``kind``; any other type is the 400 Go's decoder gives."""
    value = doc.get(key)
    if value is None or (isinstance(value, kind) and not isinstance(value, bool)):
        return value
    raise _unmarshal(key, go_type, value)


def _unmarshal(key: str, go_type: str, value: Any) -> ApiError:
    got = {str: "string", bool: "bool", int: "number", float: "number", list: "array", dict: "object"}
    what = got.get(type(value), "value")
    return ApiError.bad_request(
        f"json: cannot unmarshal {what} into Go struct field DeleteOptions.{key} of type {go_type}")


def _unsupported_dry_run(kind: str, values: Sequence[str]) -> ApiError:
    """field.NotSupported on ``dryRun``, its bad value rendered by encoding/json as upstream's is."""
    rendered = json.dumps(list(values), separators=(",", ":"), ensure_ascii=False)
    for char, escape in _GO_ESCAPES.items():
        rendered = rendered.replace(char, escape)
    supported = ", ".join(json.dumps(v) for v in _DRY_RUN_VALUES)
    why = f"Unsupported value: {rendered}: supported values: {supported}"
    return ApiError.invalid_fields("meta.k8s.io", kind, "", [("FieldValueNotSupported", "dryRun", why)])
