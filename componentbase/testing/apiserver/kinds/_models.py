"""OpenAPI schemas of the built-in kinds, generated from the official client's models (``openapi_types``,
``attribute_map`` and the pydantic field descriptions), named as kube-apiserver names them
(``io.k8s.api.apps.v1.Deployment``) through the protobuf tables, which know each type's package.

The client's models are imported on the first OpenAPI request only (importing them takes most of a second)
and the schemas are cached for the process: they do not depend on what a server serves.
"""

from __future__ import annotations

import functools
import re
import textwrap
from typing import Any

from ..apimachinery.patch import MERGE_KEYS, MERGE_SETS
from ..wire._protobuf import message_names

__all__ = ["model_for", "model_schemas", "schema_name"]

_CLASS = re.compile(r"^([A-Z][a-z]+)?(V\d+(?:alpha\d+|beta\d+)?)([A-Z]\w*)$")
_SCALARS: dict[str, dict[str, Any]] = {
    "str": {"type": "string"}, "int": {"type": "integer", "format": "int64"}, "bool": {"type": "boolean"},
    "float": {"type": "number", "format": "double"}, "datetime": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"}, "bytes": {"type": "string", "format": "byte"},
}
_PACKAGES = {"meta": "io.k8s.apimachinery.pkg.apis.meta", "resource": "io.k8s.apimachinery.pkg.api.resource",
             "intstr": "io.k8s.apimachinery.pkg.util.intstr", "runtime": "io.k8s.apimachinery.pkg.runtime"}


def _client() -> Any:
    import kubernetes.client  # slow (most of a second): only when a client first asks for OpenAPI

    return kubernetes.client


@functools.cache
def _proto_by_suffix() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name in message_names():
        pkg, _, rest = name.partition(".")
        found.setdefault(rest, []).append(pkg)
    return found


@functools.cache
def schema_name(class_name: str) -> str:
    """kube's definition name for a client model: V1Container -> io.k8s.api.core.v1.Container."""
    m = _CLASS.match(class_name)
    if m is None:
        return f"io.k8s.loopback.{class_name}"
    prefix, version, kind = m.group(1), m.group(2).lower(), m.group(3)
    packages = _proto_by_suffix().get(f"{version}.{kind}", [])
    if prefix:
        packages = [p for p in packages if p == prefix.lower()] or [prefix.lower()]
    if len(packages) != 1:
        return f"io.k8s.loopback.{class_name}"
    base = _PACKAGES.get(packages[0], f"io.k8s.api.{packages[0]}")
    return f"{base}.{version}.{kind}"


def model_for(group: str, version: str, kind: str) -> str | None:
    """The client's model class name for a kind (``CoreV1Event`` where two groups share a kind name)."""
    client = _client()
    head = version[:1].upper() + version[1:]
    prefixed = f"{(group.split('.')[0] or 'core').capitalize()}{head}{kind}"
    for name in (prefixed, f"{head}{kind}"):
        if hasattr(client, name):
            return name
    return None


def _description(cls: Any) -> str:
    doc = textwrap.dedent((cls.__doc__ or "").split("Attributes:")[0]).strip()
    return "" if doc.startswith("NOTE: This class is auto generated") else doc


def _type(typ: str, annotation: Any, refs: set[str]) -> dict[str, Any]:
    if typ in _SCALARS:
        return dict(_SCALARS[typ])
    if typ.startswith(("List[", "list[")) and typ.endswith("]"):
        return {"type": "array", "items": _type(typ[5:-1], None, refs)}
    if typ.startswith(("Dict[str, ", "dict(str, ")) and typ.endswith(("]", ")")):
        return {"type": "object", "additionalProperties": _type(typ[10:-1], None, refs)}
    if typ == "object":
        if "int" in repr(annotation) and "str" in repr(annotation):
            return {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    refs.add(typ)
    return {"$ref": schema_name(typ)}


@functools.cache
def _model(class_name: str) -> tuple[dict[str, Any], frozenset[str]]:
    """One model's schema (``$ref`` holding the bare definition name) and the models it refers to."""
    cls = getattr(_client(), class_name)
    fields = getattr(cls, "model_fields", {})
    props: dict[str, Any] = {}
    required = []
    refs: set[str] = set()
    for attr, typ in cls.openapi_types.items():
        name = cls.attribute_map[attr]
        field = fields.get(attr)
        prop = _type(typ, getattr(field, "annotation", None), refs)
        if name in MERGE_KEYS and prop.get("type") == "array":
            prop.update({"x-kubernetes-patch-merge-key": MERGE_KEYS[name], "x-kubernetes-patch-strategy": "merge"})
        elif name in MERGE_SETS:
            prop["x-kubernetes-patch-strategy"] = "merge"
        if field is not None and field.description:
            prop["description"] = field.description
        if field is not None and field.is_required():
            required.append(name)
        props[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if _description(cls):
        schema["description"] = _description(cls)
    if required:
        schema["required"] = required
    return schema, frozenset(refs)


def model_schemas(roots: list[str]) -> dict[str, dict[str, Any]]:
    """Definition name -> schema for ``roots`` (client model class names) and every model they reach;
    ``$ref`` values hold bare definition names, for the caller to prefix as v2 or v3 wants."""
    out: dict[str, dict[str, Any]] = {}
    todo = list(roots)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        schema, refs = _model(name)
        out[schema_name(name)] = schema
        todo.extend(refs)
    return out
