"""CEL in the loopback API server: CRD validation rules (``x-kubernetes-validations``) compiled when a CRD is
written and evaluated on every write of its objects, as kube-apiserver does.

The runtime is cel-expr-python (cel-cpp, the CEL project's C++ implementation): a few microseconds per
evaluation, a type checker with cel-go's error wording, and the standard macros. It is imported only when a
schema carries rules (``componentbase.testing.apiserver._celhook``), so the server starts without it.
"""

from __future__ import annotations

import json
from typing import Any

from ._cost import Cost
from ._rules import Found, Node, build, has_rules
from ._validate import validate as _validate

__all__ = ["crd_errors", "has_rules", "validate", "validator"]

Cause = tuple[str, str, str]
_CACHE: dict[int, tuple[dict[str, Any], Node | None]] = {}


def _schemas(crd: dict[str, Any]) -> list[tuple[str, Any]]:
    """Each version's schema with the path kube reports its errors under: ``spec.validation.openAPIV3Schema``
    when every version has the same schema (kube's internal version hoists it), else the version's own."""
    versions = [v for v in (crd.get("spec") or {}).get("versions") or () if isinstance(v, dict)]
    schemas = [(v.get("schema") or {}).get("openAPIV3Schema") for v in versions]
    if schemas and all(json.dumps(s, sort_keys=True) == json.dumps(schemas[0], sort_keys=True) for s in schemas):
        return [("spec.validation.openAPIV3Schema", schemas[0])]
    return [(f"spec.versions[{i}].schema.openAPIV3Schema", s) for i, s in enumerate(schemas)]


def crd_errors(crd: dict[str, Any]) -> list[Cause]:
    """What kube-apiserver refuses in the CRD's rules: compilation, types, messageExpression, reason,
    fieldPath, and the estimated cost per rule and in total."""
    errors: list[Cause] = []
    for path, schema in _schemas(crd):
        if isinstance(schema, dict) and has_rules(schema):
            cost, found = Cost(), Found()
            build(schema, path, found, cost)
            errors += found.schema + found.cel + cost.errors(path)
    return errors


def validator(schema: dict[str, Any]) -> Node | None:
    """The compiled rules of ``schema``, kept while the schema is (one CRD version's, as registered)."""
    hit = _CACHE.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_CACHE) > 256:
        _CACHE.clear()
    node = build(schema, "", Found(), Cost())
    _CACHE[id(schema)] = (schema, node)
    return node


def validate(schema: dict[str, Any], obj: dict[str, Any], old: dict[str, Any] | None,
             warnings: list[str] | None = None) -> list[Cause]:
    """What the rules of ``schema`` refuse in ``obj`` (defaulted and pruned); ``old`` on update, when the
    failures ratcheting lets through go to ``warnings``."""
    node = validator(schema)
    return _validate(node, obj, old, warnings) if node is not None else []
