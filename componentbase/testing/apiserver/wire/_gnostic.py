"""A Swagger 2.0 document as gnostic's ``openapi_v2.Document`` protobuf message, as ``/openapi/v2`` serves it.

kubectl asks for this form only (``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``) when it
validates a kind client-side: a kind whose PATCH operation does not take ``fieldValidation`` (TokenReview,
SubjectAccessReview and the other create-only reviews) falls back from OpenAPI v3 to v2, whose definitions
kube-openapi's ``proto.NewOpenAPIData`` parses in full. kube-apiserver marshals the document gnostic
compiled from its JSON; this writes the same messages (field numbers from gnostic-models'
openapiv2/OpenAPIv2.proto) for what kube's documents hold: info, paths with their operations, parameters and
responses, and definitions with every schema keyword Swagger 2.0 has. A vendor extension's value is an
``Any`` whose ``yaml`` is the value as JSON, a subset of YAML that kubectl's yaml.Unmarshal reads.

A hand-written encoder of these few messages rather than the protobuf package: that would be a new
dependency and still need the .proto compiled into descriptors at run time.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any

__all__ = ["encode_document"]

Node = dict[str, Any]
# field number and kind of a JSON key: s string, b bool, i int64, d double, *s repeated string, a Any,
# *a repeated Any; anything else is a function encoding the value as a message
_Spec = dict[str, tuple[int, Any]]


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # a negative int64 is its two's complement, ten bytes
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _bytes(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _string(number: int, text: str) -> bytes:
    return _bytes(number, text.encode()) if text else b""


def _any(value: Any) -> bytes:
    """gnostic's ``Any``: the value's YAML text (field 2); JSON is YAML."""
    return _string(2, json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _named(number: int, items: dict[str, Any], value: Callable[[Any], bytes]) -> bytes:
    """A map as gnostic orders it: repeated (name = 1, value = 2) pairs."""
    return b"".join(_bytes(number, _string(1, str(k)) + _bytes(2, value(v))) for k, v in items.items())


def _fields(node: Node, spec: _Spec) -> bytes:
    """``node``'s keys ``spec`` knows, then its ``x-`` keys as vendor extensions (field ``spec['x-']``)."""
    out = bytearray()
    for key, value in node.items():
        got = spec.get(key)
        if got is None:
            continue
        number, kind = got
        if kind == "s" and isinstance(value, str):
            out += _string(number, value)
        elif kind == "b":
            out += _varint(number << 3) + _varint(1) if value is True else b""
        elif kind == "i" and isinstance(value, int) and not isinstance(value, bool):
            out += _varint(number << 3) + _varint(value)
        elif kind == "d" and isinstance(value, int | float) and not isinstance(value, bool):
            out += _varint(number << 3 | 1) + struct.pack("<d", float(value))
        elif kind == "*s" and isinstance(value, list):
            out += b"".join(_bytes(number, str(v).encode()) for v in value)
        elif kind == "a":
            out += _bytes(number, _any(value))
        elif kind == "*a" and isinstance(value, list):
            out += b"".join(_bytes(number, _any(v)) for v in value)
        elif callable(kind):
            out += kind(number, value)
    extensions = spec.get("x-")
    if extensions is not None:
        out += _named(extensions[0], {k: v for k, v in node.items() if k.startswith("x-")}, _any)
    return bytes(out)


def _message(spec: _Spec) -> Callable[[int, Any], bytes]:
    return lambda number, value: _bytes(number, _fields(value, spec)) if isinstance(value, dict) else b""


# --- Schema --------------------------------------------------------------------------------------


def _schema(value: Any) -> bytes:
    return _fields(value, _SCHEMA) if isinstance(value, dict) else b""


def _schemas(number: int, value: Any) -> bytes:
    return b"".join(_bytes(number, _schema(v)) for v in value) if isinstance(value, list) else b""


def _additional(number: int, value: Any) -> bytes:
    """AdditionalPropertiesItem: a schema (1) or a boolean (2), which is written even when false."""
    if isinstance(value, bool):
        return _bytes(number, _varint(2 << 3) + _varint(int(value)))
    return _bytes(number, _bytes(1, _schema(value))) if isinstance(value, dict) else b""


def _type(number: int, value: Any) -> bytes:
    """TypeItem: the type names (1); Swagger allows one or a list."""
    names = value if isinstance(value, list) else [value]
    return _bytes(number, b"".join(_string(1, str(n)) for n in names))


def _items(number: int, value: Any) -> bytes:
    """ItemsItem: its schemas (1); ``items`` is one schema or a list of them."""
    return _bytes(number, _schemas(1, value if isinstance(value, list) else [value]))


def _properties(number: int, value: Any) -> bytes:
    return _bytes(number, _named(1, value, _schema)) if isinstance(value, dict) else b""


_SCHEMA: _Spec = {
    "$ref": (1, "s"), "format": (2, "s"), "title": (3, "s"), "description": (4, "s"), "default": (5, "a"),
    "multipleOf": (6, "d"), "maximum": (7, "d"), "exclusiveMaximum": (8, "b"), "minimum": (9, "d"),
    "exclusiveMinimum": (10, "b"), "maxLength": (11, "i"), "minLength": (12, "i"), "pattern": (13, "s"),
    "maxItems": (14, "i"), "minItems": (15, "i"), "uniqueItems": (16, "b"), "maxProperties": (17, "i"),
    "minProperties": (18, "i"), "required": (19, "*s"), "enum": (20, "*a"), "additionalProperties": (21, _additional),
    "type": (22, _type), "items": (23, _items), "allOf": (24, _schemas), "properties": (25, _properties),
    "discriminator": (26, "s"), "readOnly": (27, "b"), "example": (30, "a"), "x-": (31, None),
}

# --- paths ---------------------------------------------------------------------------------------

# the simple keywords of a non-body parameter, numbered as in Query-/Path-/HeaderParameterSubSchema
_COMMON = ("required", "in", "description", "name")
_QUERY: _Spec = {**{k: (i, "b" if i == 1 else "s") for i, k in enumerate(_COMMON, 1)}, "allowEmptyValue": (5, "b"),
                 "type": (6, "s"), "format": (7, "s"), "uniqueItems": (20, "b"), "x-": (23, None)}
_PATH: _Spec = {**{k: (i, "b" if i == 1 else "s") for i, k in enumerate(_COMMON, 1)}, "type": (5, "s"),
                "format": (6, "s"), "uniqueItems": (19, "b"), "x-": (22, None)}
_BODY: _Spec = {"description": (1, "s"), "name": (2, "s"), "in": (3, "s"), "required": (4, "b"),
                "schema": (5, lambda n, v: _bytes(n, _schema(v))), "x-": (6, None)}
_SUB_SCHEMA = {"header": (1, _PATH), "formData": (2, _QUERY), "query": (3, _QUERY), "path": (4, _PATH)}


def _parameter(param: Node) -> bytes:
    """ParametersItem: a JsonReference (2) or a Parameter (1), itself a body (1) or non-body (2) one."""
    if "$ref" in param:
        return _bytes(2, _string(1, str(param["$ref"])))
    where = param.get("in")
    if where == "body":
        return _bytes(1, _bytes(1, _fields(param, _BODY)))
    number, spec = _SUB_SCHEMA.get(str(where), _SUB_SCHEMA["query"])
    return _bytes(1, _bytes(2, _bytes(number, _fields(param, spec))))


def _parameters(number: int, value: Any) -> bytes:
    if not isinstance(value, list):
        return b""
    return b"".join(_bytes(number, _parameter(p)) for p in value if isinstance(p, dict))


def _response(value: Any) -> bytes:
    """ResponseValue holding a Response (1): description (1), then its schema in a SchemaItem (2)."""
    body = _string(1, str(value.get("description", "")))
    if isinstance(value.get("schema"), dict):
        body += _bytes(2, _bytes(1, _schema(value["schema"])))
    return _bytes(1, body)


def _responses(number: int, value: Any) -> bytes:
    return _bytes(number, _named(1, value, _response)) if isinstance(value, dict) else b""


_OPERATION: _Spec = {
    "tags": (1, "*s"), "summary": (2, "s"), "description": (3, "s"), "operationId": (5, "s"),
    "produces": (6, "*s"), "consumes": (7, "*s"), "parameters": (8, _parameters), "responses": (9, _responses),
    "schemes": (10, "*s"), "deprecated": (11, "b"), "x-": (13, None),
}
_PATH_ITEM: _Spec = {
    "$ref": (1, "s"), **{m: (n, _message(_OPERATION)) for n, m in enumerate(
        ("get", "put", "post", "delete", "options", "head", "patch"), 2)},
    "parameters": (9, _parameters), "x-": (10, None),
}


def _paths(number: int, value: Any) -> bytes:
    """Paths: vendor extensions (1), then each path item (2)."""
    if not isinstance(value, dict):
        return b""
    return _bytes(number, _named(2, value, lambda item: _fields(item, _PATH_ITEM)))


_DOCUMENT: _Spec = {
    "swagger": (1, "s"), "info": (2, _message({"title": (1, "s"), "version": (2, "s"), "description": (3, "s"),
                                               "x-": (7, None)})),
    "host": (3, "s"), "basePath": (4, "s"), "schemes": (5, "*s"), "consumes": (6, "*s"), "produces": (7, "*s"),
    "paths": (8, _paths), "definitions": (9, _properties), "x-": (16, None),
}


def encode_document(doc: Node) -> bytes:
    """The ``openapi_v2.Document`` message of a Swagger 2.0 document (a JSON object)."""
    return _fields(doc, _DOCUMENT)
