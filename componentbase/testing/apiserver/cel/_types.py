"""A rule type-checked against its schema's declared types, as kube compiles it (SchemaDeclType), for the
errors kube reports when the CRD is written: ``self.replicas == 'x'`` (``found no matching overload for
'_==_' applied to '(int, string)'``), a string function on an integer, ``self.ports.x`` on a list, a rule
returning an int.

The evaluated program keeps objects as ``map(string, dyn)`` (``_env``); this check compiles the same text once
more, against protobuf messages built from the schema (cel-expr-python's checker knows messages, not
per-schema object types), and only its verdict and result type are kept. Field names are kube's escaped ones;
int-or-string and open objects are ``dyn`` and ``map(string, dyn)``, as kube types them.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped]  # ships .pyi files but no py.typed
from cel_expr_python.ext import ext_bindings, ext_math, ext_optional  # type: ignore[import-untyped]
from google.protobuf import (  # type: ignore[import-untyped]
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    struct_pb2,
    timestamp_pb2,
)

from ._env import _FUNCTIONS, OLD_LIST
from ._values import cel_names

__all__ = ["check_types"]

T = cel.Type
F = descriptor_pb2.FieldDescriptorProto
_ROOT = {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
         "metadata": {"type": "object", "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}}}
_SCALARS = {"integer": (F.TYPE_INT64, T.INT), "number": (F.TYPE_DOUBLE, T.DOUBLE), "boolean": (F.TYPE_BOOL, T.BOOL)}
_STAMP = ("google.protobuf.Timestamp", T.TIMESTAMP)
_WELL_KNOWN = {"date": _STAMP, "date-time": _STAMP, "duration": ("google.protobuf.Duration", T.DURATION)}
_WORDING = [  # cel-cpp's checker words two errors otherwise than cel-go's
    (re.compile(r"expression of type '([^']*)' cannot be the operand of a select operation"),
     r"type '\1' does not support field selection"),
    (re.compile(r"(undefined field '[^']*') not found in struct '[^']*'"), r"\1"),
]


_NUMBER = "(?:int|uint|double)"
_MIXED = re.compile(rf"found no matching overload for '_[<>]=?_' applied to '\({_NUMBER}, {_NUMBER}\)'")


class _Builder:
    """One schema's messages, in a file of their own."""

    def __init__(self) -> None:
        self.file = descriptor_pb2.FileDescriptorProto(name="schema.proto", syntax="proto2")
        self.file.dependency.extend(["google/protobuf/struct.proto", "google/protobuf/timestamp.proto",
                                     "google/protobuf/duration.proto"])

    def message(self, node: dict[str, Any], name: str, root: bool) -> None:
        msg = self.file.message_type.add(name=name)
        props = dict(node.get("properties") or {})
        if root or node.get("x-kubernetes-embedded-resource"):
            props = {**_ROOT, **props}
        number = 0
        for prop, child in props.items():
            for key in cel_names(prop) if isinstance(child, dict) else ():
                number += 1
                field = msg.field.add(name=key, number=number, label=F.LABEL_OPTIONAL)
                self.field(field, child, f"{name}_{key}", msg)

    def field(self, field: Any, node: dict[str, Any], name: str, owner: Any) -> Any:
        """``field`` typed as ``node``; returns the CEL type a value of it has."""
        kind = _kind(node)
        if kind == "array":
            items: dict[str, Any] = node["items"] if isinstance(node.get("items"), dict) else {}
            if _kind(items) in ("array", "map"):
                field.label = F.LABEL_REPEATED
                return T.List(self._message_type(field, "google.protobuf.ListValue" if _kind(items) == "array"
                                                 else "google.protobuf.Struct", T.DYN))
            inner = self.field(field, items, name, owner)
            field.label = F.LABEL_REPEATED
            return T.List(inner)
        if kind == "map":
            value = node["additionalProperties"]
            if _kind(value) in ("array", "map"):
                return self._message_type(field, "google.protobuf.Struct", T.Map(T.STRING, T.DYN))
            entry = owner.nested_type.add(name=f"{_camel(field.name)}Entry")
            entry.options.map_entry = True
            entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
            inner = self.field(entry.field.add(name="value", number=2, label=F.LABEL_OPTIONAL), value, name, owner)
            field.label, field.type, field.type_name = F.LABEL_REPEATED, F.TYPE_MESSAGE, f".{owner.name}.{entry.name}"
            return T.Map(T.STRING, inner)
        if kind == "object":
            self.message(node, name, False)
            return self._message_type(field, name, T(name))
        if kind == "dyn":
            return self._message_type(field, "google.protobuf.Value", T.DYN)
        if kind == "open":
            return self._message_type(field, "google.protobuf.Struct", T.Map(T.STRING, T.DYN))
        fmt = str(node.get("format") or "")
        if kind == "string" and fmt in _WELL_KNOWN:
            full, cel_type = _WELL_KNOWN[fmt]
            return self._message_type(field, full, cel_type)
        if kind == "string":
            field.type = F.TYPE_BYTES if fmt == "byte" else F.TYPE_STRING
            return T.BYTES if fmt == "byte" else T.STRING
        field.type, cel_type = _SCALARS[kind]
        return cel_type

    @staticmethod
    def _message_type(field: Any, full: str, cel_type: Any) -> Any:
        field.type, field.type_name = F.TYPE_MESSAGE, f".{full}"
        return cel_type


def _camel(name: str) -> str:
    """protobuf's name for a map field's entry message (ToCamelCase): underscores dropped, the next letter up."""
    out, upper = [], True
    for c in name:
        if c == "_":
            upper = True
            continue
        out.append(c.upper() if upper else c)
        upper = False
    return "".join(out)


def _kind(node: dict[str, Any]) -> str:
    """How kube types ``node``: a scalar's type, array, map, object (declared fields), open (any field), dyn."""
    kind = node.get("type")
    if node.get("x-kubernetes-int-or-string") or not kind:
        return "dyn" if not node.get("properties") else "object"
    if kind == "object":
        if node.get("x-kubernetes-preserve-unknown-fields") and not node.get("x-kubernetes-embedded-resource"):
            return "open"
        if isinstance(node.get("additionalProperties"), dict) and not node.get("properties"):
            return "map"
        return "object" if node.get("properties") or node.get("x-kubernetes-embedded-resource") else "open"
    return str(kind) if kind in ("array", "string", *_SCALARS) else "dyn"


@functools.lru_cache(maxsize=256)
def _env(schema_json: str, root: bool, with_old: bool) -> Any:
    node = json.loads(schema_json)
    builder = _Builder()
    holder = descriptor_pb2.DescriptorProto(name="holder")
    if _kind(node) == "object":
        builder.message(node, "selfType0", root)
        self_type = T("selfType0")
    else:
        self_type = builder.field(F(name="self", number=1), node, "selfType0", holder)
    if holder.nested_type:
        builder.file.message_type.add().CopyFrom(holder)
    pool = descriptor_pool.DescriptorPool()
    for dep in (struct_pb2, timestamp_pb2, duration_pb2):
        proto = descriptor_pb2.FileDescriptorProto()
        dep.DESCRIPTOR.CopyToProto(proto)
        pool.Add(proto)
    pool.Add(builder.file)
    variables = {"self": self_type, **({"oldSelf": self_type} if with_old else {OLD_LIST: T.List(self_type)})}
    return cel.NewEnv(descriptor_pool=pool, variables=variables, functions=_FUNCTIONS,
                      extensions=[ext_optional.ExtOptional(), ext_bindings.ExtBindings(), ext_math.ExtMath()])


def check_types(node: dict[str, Any], text: str, root: bool, with_old: bool = True) -> str:
    """The type ``text`` returns on ``node`` (``BOOL``, ``INT``, ``DYN``...); RuntimeError with the checker's
    issues, in cel-go's words, when the schema's types refuse it."""
    try:
        env = _env(json.dumps(node, sort_keys=True, default=str), root, with_old)
    except (TypeError, ValueError, RuntimeError):
        return "DYN"  # a schema no message can mirror: the untyped check stands
    try:
        program = env.compile(text)
    except RuntimeError as err:
        message = str(err)
        if all(_MIXED.search(line) for line in message.splitlines() if "ERROR: " in line):
            return "DYN"  # kube's CrossTypeNumericComparisons: 1.5 > 1 holds; cel-cpp's checker refuses it
        for pattern, repl in _WORDING:
            message = pattern.sub(repl, message)
        raise RuntimeError(message) from None
    return str(program.return_type().name())
