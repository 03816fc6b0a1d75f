"""Where the schema checks meet CEL (``cel/``): imported always, it imports the CEL runtime only when a
schema carries ``x-kubernetes-validations``, so a server whose CRDs have no rules starts and writes as
before. Without the runtime (the ``componentbase[testing]`` extra), a CRD with rules is refused naming what
to install: storing it unchecked would let through what a cluster refuses."""

from __future__ import annotations

from typing import Any

from ..apimachinery._schemarules import has_rules

__all__ = ["crd_rule_errors", "has_rules", "rule_errors"]

Cause = tuple[str, str, str]
_HAS_RULES: dict[int, tuple[dict[str, Any], bool]] = {}
# The errors after which kube does not run the rules (hasBlockingErr): the object's shape is not the schema's.
_BLOCKING = ("FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany",
             "FieldValueTypeInvalid")
# field.Invalid(nil, nil, ...): no field ("<nil>", as Go prints a nil path), and a nil value, which
# field.Error prints as the string "null", quoted
_NOT_CHECKED = ("FieldValueInvalid", "<nil>", 'Invalid value: "null": some validation rules were not checked because '
                "the object was invalid; correct the existing errors to complete validation")
_MISSING_RUNTIME = ("x-kubernetes-validations need the CEL runtime, which is not installed: "
                    "pip install 'componentbase[testing]' (cel-expr-python)")


def _cached_has_rules(schema: dict[str, Any]) -> bool:
    hit = _HAS_RULES.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_HAS_RULES) > 1024:
        _HAS_RULES.clear()
    found = has_rules(schema)
    _HAS_RULES[id(schema)] = (schema, found)
    return found


def crd_rule_errors(crd: dict[str, Any]) -> list[Cause]:
    """What kube-apiserver refuses in a CRD's validation rules ([] when it has none)."""
    versions = (crd.get("spec") or {}).get("versions") or ()
    if not any(isinstance(v, dict) and has_rules((v.get("schema") or {}).get("openAPIV3Schema")) for v in versions):
        return []
    try:
        from .. import cel
    except ImportError:
        return [("FieldValueForbidden", "spec.versions", f"Forbidden: {_MISSING_RUNTIME}")]
    return cel.crd_errors(crd)


def rule_errors(schema: dict[str, Any], obj: dict[str, Any], old: dict[str, Any] | None,
                errors: list[Cause], warnings: list[str] | None = None) -> list[Cause]:
    """What the schema's rules refuse in ``obj``, given the schema's own ``errors`` so far; what ratcheting
    lets through on update goes to ``warnings`` (the request's Warning headers)."""
    if not _cached_has_rules(schema):
        return []
    if any(e[0] in _BLOCKING for e in errors):
        return [_NOT_CHECKED]
    from .. import cel  # present: the CRD was admitted with its rules

    return cel.validate(schema, obj, old, warnings)
