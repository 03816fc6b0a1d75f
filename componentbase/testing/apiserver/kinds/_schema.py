"""Structural schemas as kube-apiserver applies them to custom resources: defaulting, pruning, validation.

``structural_errors`` refuses what apiextensions-apiserver calls a non-structural schema, naming the
field. ``admit`` then does to an object what the CR handler does to a request body, in its order:
nulls of non-nullable fields are dropped (or defaulted), ``default``s filled in, unknown fields pruned
(unless ``x-kubernetes-preserve-unknown-fields``), and the result validated, with the messages
kube-openapi's validator and apimachinery's field errors give
(``spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"``).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from ..admission._celhook import rule_errors

__all__ = ["Cause", "admit", "go_value", "structural_errors"]

Cause = tuple[str, str, str]  # (reason, field, message) as a StatusCause has them
_PRESERVE = "x-kubernetes-preserve-unknown-fields"
_INT_OR_STRING = "x-kubernetes-int-or-string"
_EMBEDDED = "x-kubernetes-embedded-resource"
_TYPES = ("object", "array", "string", "integer", "number", "boolean")


def go_value(value: Any) -> str:
    """A bad value as apimachinery's field errors print it: numbers and booleans bare, strings quoted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_number(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _go_number(x: float | int) -> str:
    """Go's ``%v`` of a float64: whole numbers without a fraction."""
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    return repr(x)


# --- is the schema structural? ----------------------------------------------------------------


def structural_errors(schema: Any, path: str) -> list[Cause]:
    """What makes ``schema`` non-structural, as (reason, field, message) at ``path``; [] when fine."""
    if not isinstance(schema, dict):
        return [("FieldValueRequired", path, "Required value: schemas are required")]
    errors: list[Cause] = []
    kind = schema.get("type")
    if not kind:
        errors.append(("FieldValueRequired", f"{path}.type", "Required value: must not be empty at the root"))
    elif kind != "object":
        errors.append(("FieldValueInvalid", f"{path}.type",
                       f"Invalid value: {go_value(kind)}: must be object at the root"))
    _check_node(schema, path, errors, root=True)
    return errors


def _check_node(node: dict[str, Any], path: str, errors: list[Cause], root: bool = False) -> None:
    kind = node.get("type")
    if kind and kind not in _TYPES:
        errors.append(("FieldValueNotSupported", f"{path}.type", f"Unsupported value: {go_value(kind)}: "
                       "supported values: " + ", ".join(json.dumps(t) for t in _TYPES)))
    if node.get(_PRESERVE) is False:
        errors.append(("FieldValueInvalid", f"{path}.{_PRESERVE}", "Invalid value: false: must be true or undefined"))
    if "$ref" in node:
        errors.append(("FieldValueForbidden", f"{path}.$ref", "Forbidden: $ref is not supported"))
    if "properties" in node and isinstance(node.get("additionalProperties"), dict):
        errors.append(("FieldValueForbidden", f"{path}.additionalProperties",
                       "Forbidden: additionalProperties and properties are mutual exclusive"))
    if kind == "array" and not isinstance(node.get("items"), dict):
        errors.append(("FieldValueRequired", f"{path}.items", "Required value: must be specified"))
    for name, child in (node.get("properties") or {}).items():
        _check_child(child, f"{path}.properties[{name}]", "object fields", errors)
    if isinstance(node.get("items"), dict):
        _check_child(node["items"], f"{path}.items", "array items", errors)
    if isinstance(node.get("additionalProperties"), dict):
        _check_child(node["additionalProperties"], f"{path}.additionalProperties", "object fields", errors)


def _check_child(child: Any, path: str, what: str, errors: list[Cause]) -> None:
    if not isinstance(child, dict):
        errors.append(("FieldValueInvalid", path, "Invalid value: must be a schema object"))
        return
    if not child.get("type") and not child.get(_INT_OR_STRING) and not child.get(_PRESERVE):
        errors.append(("FieldValueRequired", f"{path}.type", f"Required value: must not be empty for specified {what}"))
    _check_node(child, path, errors)


# --- defaulting and pruning -------------------------------------------------------------------


def _default(node: dict[str, Any], value: Any) -> Any:
    """Fill ``default``s into ``value`` (already a private copy) and drop nulls nothing allows."""
    if isinstance(value, dict):
        props = node.get("properties") or {}
        for name, child in props.items():
            if value.get(name) is None and isinstance(child, dict):
                if "default" in child:
                    value[name] = copy.deepcopy(child["default"])
                elif name in value and not child.get("nullable"):
                    del value[name]
        extra = node.get("additionalProperties")
        for name in list(value):
            child = props.get(name, extra if isinstance(extra, dict) else None)
            if isinstance(child, dict):
                value[name] = _default(child, value[name])
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        value[:] = [_default(node["items"], v) for v in value]
    return value


def _prune(node: dict[str, Any], value: Any, root: bool = False) -> None:
    if isinstance(value, dict):
        if node.get(_PRESERVE):
            known = None
        else:
            known = set(node.get("properties") or ())
            if root or node.get(_EMBEDDED):
                known |= {"apiVersion", "kind", "metadata"}
        extra = node.get("additionalProperties")
        for name in list(value):
            child = (node.get("properties") or {}).get(name)
            if child is None and isinstance(extra, dict):
                child = extra
            elif child is None and known is not None and name not in known and extra is not True:
                del value[name]
                continue
            if isinstance(child, dict) and not (root and name == "metadata"):
                _prune(child, value[name])
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for item in value:
            _prune(node["items"], item)


# --- validation -------------------------------------------------------------------------------


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _type_ok(node: dict[str, Any], value: Any) -> bool:
    got = _json_type(value)
    if node.get(_INT_OR_STRING):
        return got in ("integer", "string")
    want = node.get("type")
    return not want or got == want or (want == "number" and got == "integer") or (
        value is None and bool(node.get("nullable")))


def _invalid(path: str, value: Any, detail: str, reason: str = "FieldValueInvalid") -> Cause:
    return (reason, path, f"Invalid value: {go_value(value)}: {path} in body {detail}")


def _validate(node: dict[str, Any], value: Any, path: str, errors: list[Cause]) -> None:
    if not _type_ok(node, value):
        got = _json_type(value)
        errors.append(_invalid(path, got, f"must be of type {node.get('type')}: {json.dumps(got)}",
                               "FieldValueTypeInvalid"))
        return
    if value is None:
        return
    if "enum" in node and value not in node["enum"]:
        allowed = ", ".join(json.dumps(v if isinstance(v, str) else json.dumps(v)) for v in node["enum"])
        errors.append(("FieldValueNotSupported", path,
                       f"Unsupported value: {go_value(value)}: supported values: {allowed}"))
    if isinstance(value, str):
        _validate_string(node, value, path, errors)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _validate_number(node, value, path, errors)
    elif isinstance(value, list):
        _validate_array(node, value, path, errors)
    elif isinstance(value, dict):
        _validate_object(node, value, path, errors)


def _validate_string(node: dict[str, Any], value: str, path: str, errors: list[Cause]) -> None:
    if isinstance(node.get("maxLength"), int) and len(value) > node["maxLength"]:
        limit = node["maxLength"]
        errors.append(("FieldValueTooLong", path,
                       f"Too long: may not be more than {limit} byte{'' if limit == 1 else 's'}"))
    if isinstance(node.get("minLength"), int) and len(value) < node["minLength"]:
        errors.append(_invalid(path, value, f"should be at least {node['minLength']} chars long"))
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:
            matched = True  # a pattern Python cannot compile is not the object's fault
        if not matched:
            errors.append(_invalid(path, value, f"should match '{pattern}'"))


def _validate_number(node: dict[str, Any], value: float, path: str, errors: list[Cause]) -> None:
    low, high = node.get("minimum"), node.get("maximum")
    if isinstance(low, (int, float)):
        if node.get("exclusiveMinimum") and value <= low:
            errors.append(_invalid(path, value, f"should be greater than {_go_number(low)}"))
        elif value < low:
            errors.append(_invalid(path, value, f"should be greater than or equal to {_go_number(low)}"))
    if isinstance(high, (int, float)):
        if node.get("exclusiveMaximum") and value >= high:
            errors.append(_invalid(path, value, f"should be less than {_go_number(high)}"))
        elif value > high:
            errors.append(_invalid(path, value, f"should be less than or equal to {_go_number(high)}"))
    step = node.get("multipleOf")
    if isinstance(step, (int, float)) and step and (value / step) != int(value / step):
        errors.append(_invalid(path, value, f"should be a multiple of {_go_number(step)}"))


def _validate_array(node: dict[str, Any], value: list[Any], path: str, errors: list[Cause]) -> None:
    if isinstance(node.get("maxItems"), int) and len(value) > node["maxItems"]:
        limit = node["maxItems"]
        errors.append(("FieldValueTooMany", path,
                       f"Too many: {len(value)}: must have at most {limit} item{'' if limit == 1 else 's'}"))
    if isinstance(node.get("minItems"), int) and len(value) < node["minItems"]:
        errors.append(_invalid(path, len(value), f"should have at least {node['minItems']} items"))
    if node.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
        errors.append(_invalid(path, value, "shouldn't contain duplicates"))
    items = node.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _validate(items, item, f"{path}[{i}]", errors)


def _duplicates(node: dict[str, Any], value: list[Any], path: str, errors: list[Cause]) -> None:
    """A set list's repeated item, or a map list's repeated key, as kube's ValidateListSetsAndMaps refuses
    them (field.Duplicate: the item, or the keys as Go prints a map[string]interface{})."""
    kind, keys = node.get("x-kubernetes-list-type"), node.get("x-kubernetes-list-map-keys") or ()
    seen: set[str] = set()
    for i, item in enumerate(value):
        if kind == "map" and keys and isinstance(item, dict):
            key = {k: item.get(k) for k in sorted(keys) if k in item}
            pairs = ", ".join(f"{json.dumps(k)}:{go_value(v)}" for k, v in key.items())
            shown = f"map[string]interface {{}}{{{pairs}}}"
        elif kind == "set":
            key, shown = item, go_value(item)
        else:
            return
        token = json.dumps(key, sort_keys=True)
        if token in seen:
            errors.append(("FieldValueDuplicate", f"{path}[{i}]", f"Duplicate value: {shown}"))
        seen.add(token)


def _lists(node: dict[str, Any], value: Any, path: str, errors: list[Cause]) -> None:
    """Every set and map list under ``node`` checked for repeats, after the schema's other checks and before
    the rules, kube's order (structurallisttype.ValidateListSetsAndMaps)."""
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        _duplicates(node, value, path, errors)
        for i, item in enumerate(value):
            _lists(node["items"], item, f"{path}[{i}]", errors)
    elif isinstance(value, dict):
        props, extra = node.get("properties") or {}, node.get("additionalProperties")
        for name, item in value.items():
            child = props.get(name, extra if isinstance(extra, dict) else None)
            if isinstance(child, dict):
                _lists(child, item, f"{path}.{name}" if path else name, errors)


def _validate_object(node: dict[str, Any], value: dict[str, Any], path: str, errors: list[Cause]) -> None:
    prefix = f"{path}." if path else ""
    for name in node.get("required") or ():
        if name not in value:
            errors.append(("FieldValueRequired", prefix + name, "Required value"))
    if isinstance(node.get("maxProperties"), int) and len(value) > node["maxProperties"]:
        errors.append(("FieldValueTooMany", path,
                       f"Too many: {len(value)}: must have at most {node['maxProperties']} items"))
    if isinstance(node.get("minProperties"), int) and len(value) < node["minProperties"]:
        errors.append(_invalid(path, len(value), f"should have at least {node['minProperties']} properties"))
    props = node.get("properties") or {}
    extra = node.get("additionalProperties")
    for name, item in value.items():
        child = props.get(name, extra if isinstance(extra, dict) else None)
        if isinstance(child, dict) and not (not path and name == "metadata"):
            _validate(child, item, prefix + name, errors)


def admit(schema: dict[str, Any], obj: dict[str, Any], old: dict[str, Any] | None = None,
          warnings: list[str] | None = None) -> tuple[dict[str, Any], list[Cause]]:
    """``obj`` defaulted and pruned by ``schema``, and what is still invalid about it, its CEL rules
    (``x-kubernetes-validations``) included; ``old``, the stored object on update, for transition rules
    and ratcheting, whose let-through failures go to ``warnings``."""
    out = _default(schema, copy.deepcopy(obj))
    _prune(schema, out, root=True)
    errors: list[Cause] = []
    meta_schema = (schema.get("properties") or {}).get("metadata")
    if isinstance(meta_schema, dict) and isinstance(out.get("metadata"), dict):
        for name in ("name", "generateName"):
            sub = (meta_schema.get("properties") or {}).get(name)
            if isinstance(sub, dict) and name in out["metadata"]:
                _validate(sub, out["metadata"][name], f"metadata.{name}", errors)
    _validate(schema, out, "", errors)
    _lists(schema, out, "", errors)
    errors += rule_errors(schema, out, old, errors, warnings)
    return out, errors
