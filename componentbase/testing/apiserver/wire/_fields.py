"""``fieldValidation``: what kube-apiserver does with fields a kind does not have.

``Strict`` refuses them (a create or update: 400 ``Pod in version "v1" cannot be handled as a Pod: strict
decoding error: unknown field "spec.foo"``; a patch: kube's 422 on ``patch``), ``Warn`` (the default) answers
with a ``Warning: 299 - "unknown field \\"spec.foo\\""`` header, ``Ignore`` drops them silently. Built-in
kinds know their fields from the official client's models (``openapi_types`` and ``attribute_map``, walked
generically); custom resources from their CRD version's structural schema. Kinds the client has no model
for are not checked.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from ..apimachinery.errors import ApiError
from ..apimachinery.resources import Resource
from ._decode import fields_of, first_type_error, inner_type
from ._json import loads

__all__ = ["FIELD_VALIDATION_VALUES", "check_fields", "field_validation", "model_of", "unknown_fields"]

FIELD_VALIDATION_VALUES = ("", "Ignore", "Strict", "Warn")
_OPTIONS_KINDS = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions"}
_JSON_TYPES = ("application/json", "application/merge-patch+json", "application/strategic-merge-patch+json",
               "application/json-patch+json")
_PRESERVE = "x-kubernetes-preserve-unknown-fields"
_TOP = ("apiVersion", "kind")


def field_validation(verb: str, query: dict[str, str]) -> str:
    """The request's directive (Warn when unset, as kube's default); 422 on the options for a bad one."""
    value = query.get("fieldValidation", "")
    if value not in FIELD_VALIDATION_VALUES:
        supported = ", ".join(json.dumps(v) for v in FIELD_VALIDATION_VALUES)
        why = f"Unsupported value: {json.dumps(value)}: supported values: {supported}"
        raise ApiError.invalid_fields("meta.k8s.io", _OPTIONS_KINDS[verb], "",
                                      [("FieldValueNotSupported", "fieldValidation", why)])
    return value or "Warn"


# --- the known fields of a kind ---------------------------------------------------------------


def model_of(res: Resource, sub: str) -> str | None:
    """The official client's model of ``res`` (``V1Pod``, ``CoreV1Event``, ``V2HorizontalPodAutoscaler``)."""
    if sub == "scale":
        return "V1Scale"
    return _model_named(res.group, res.version, res.kind)


@functools.lru_cache(maxsize=1024)
def _model_named(group: str, version: str, kind: str) -> str | None:
    version = version[:1].upper() + version[1:]
    prefix = (group.split(".")[0] or "core").capitalize()
    for name in (f"{prefix}{version}{kind}", f"{version}{kind}"):
        if fields_of(name) is not None:
            return name
    return None


def _walk_model(kind: str, value: Any, path: str, out: list[str], prune: bool = False) -> None:
    """Collect the unknown fields under ``value`` of the client's type ``kind``; ``prune`` drops them,
    as decoding into kube's Go types does."""
    shape, inner = inner_type(kind)
    if shape == "list" and isinstance(value, list):
        for i, item in enumerate(value):
            _walk_model(inner, item, f"{path}[{i}]", out, prune)
    elif shape == "dict" and isinstance(value, dict):
        for key, item in value.items():
            _walk_model(inner, item, f"{path}.{key}", out, prune)
    elif shape == "" and isinstance(value, dict):
        fields = fields_of(inner)
        if fields is None:
            return  # a scalar, ``object`` (IntOrString, RawExtension) or a type the client lacks
        for key, item in list(value.items()):
            if key not in fields:
                if not key.startswith("$"):  # strategic merge patch directives
                    out.append(f"{path}.{key}" if path else key)
                    if prune:
                        del value[key]
            elif isinstance(item, dict | list):  # a scalar has no fields to check
                _walk_model(fields[key], item, f"{path}.{key}" if path else key, out, prune)


def _walk_schema(node: Any, value: Any, path: str, out: list[str], root: bool = False) -> None:
    if not isinstance(node, dict):
        return
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        for i, item in enumerate(value):
            _walk_schema(node["items"], item, f"{path}[{i}]", out)
        return
    if not isinstance(value, dict):
        return
    props = node.get("properties") or {}
    extra = node.get("additionalProperties")
    embedded = root or node.get("x-kubernetes-embedded-resource")
    for key, item in value.items():
        where = f"{path}.{key}" if path else key
        if embedded and key == "metadata":
            _walk_model("V1ObjectMeta", item, where, out)
        elif key in props:
            _walk_schema(props[key], item, where, out)
        elif isinstance(extra, dict):
            _walk_schema(extra, item, where, out)
        elif not (extra is True or node.get(_PRESERVE) or (embedded and key in _TOP) or key.startswith("$")):
            out.append(where)


def unknown_fields(res: Resource, sub: str, doc: Any, prune: bool = False) -> list[str]:
    """The paths in ``doc`` (an object, or a merge patch of one) that ``res`` has no field for; ``prune``
    drops them from a built-in kind's ``doc`` (a custom resource's schema prunes its own)."""
    out: list[str] = []
    if res.schema is not None and sub != "scale":
        _walk_schema(res.schema, doc, "", out, root=True)
        return sorted(out)
    model = model_of(res, sub)
    if model is not None:
        _walk_model(model, doc, "", out, prune)
    return out


def _json_patch_unknown(res: Resource, sub: str, ops: Any) -> list[str]:
    """Unknown fields a JSON patch adds: each added value rebuilt as the sparse document it makes."""
    out: list[str] = []
    for op in ops if isinstance(ops, list) else ():
        if not isinstance(op, dict) or op.get("op") not in ("add", "replace") or not isinstance(op.get("path"), str):
            continue
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        doc: Any = op.get("value")
        for part in reversed(parts):
            doc = [doc] if part.isdigit() or part == "-" else {part: doc}
        out += unknown_fields(res, sub, doc)
    return out


# --- the check --------------------------------------------------------------------------------


def _go_plus_v(value: Any) -> str:
    """A decoded patch as Go's ``%+v`` prints a ``map[string]interface{}``."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_plus_v(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_plus_v(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _undecodable(res: Resource, sub: str, why: str) -> ApiError:
    """kube's 400 for a body its decoder refuses (transformDecodeError)."""
    kind, version = ("Scale", "v1") if sub == "scale" else (res.kind, res.version)
    return ApiError.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: {why}')


def _warning(paths: list[str]) -> str:
    """One ``Warning`` header carrying a 299 warning per field, comma-separated as RFC 7234 allows."""
    return ", ".join("299 - " + json.dumps(f'unknown field "{p}"') for p in paths)


def check_fields(verb: str, res: Resource, sub: str, query: dict[str, str], body: bytes,
                 content_type: str) -> tuple[dict[str, str], bytes]:
    """Apply the request's fieldValidation to its body: the headers to answer with (a Warning) and the
    body without unknown fields, or an ApiError for Strict. Bodies that are not JSON are left to the
    handler, which refuses them. Other verbs pass untouched."""
    if verb not in _OPTIONS_KINDS:
        return {}, body
    directive = field_validation(verb, query)
    media = content_type.split(";", 1)[0].strip().lower()
    if media not in _JSON_TYPES or sub not in ("", "status", "scale"):
        return {}, body
    try:
        doc = loads(body)
    except (ValueError, UnicodeDecodeError):
        return {}, body
    if verb != "patch" and res.schema is None and isinstance(doc, dict):
        model = model_of(res, sub)
        wrong = first_type_error(model, doc) if model is not None else None
        if wrong:
            raise _undecodable(res, sub, wrong)
    if media == "application/json-patch+json":
        paths = _json_patch_unknown(res, sub, doc)
    else:
        paths = unknown_fields(res, sub, doc, prune=directive != "Strict") if isinstance(doc, dict) else []
    if not paths:
        return {}, body
    pruned = body if media == "application/json-patch+json" else json.dumps(doc).encode()
    if directive == "Ignore":
        return {}, pruned
    if directive == "Warn":
        return {"Warning": _warning(paths)}, pruned
    why = "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in paths)
    if verb != "patch":
        raise _undecodable(res, sub, why)
    shown = _go_plus_v(doc) if media == "application/strategic-merge-patch+json" else json.dumps(
        doc, separators=(",", ":"))
    raise ApiError.invalid_fields("", "", "", [("FieldValueInvalid", "patch",
                                                f"Invalid value: {json.dumps(shown)}: {why}")])
