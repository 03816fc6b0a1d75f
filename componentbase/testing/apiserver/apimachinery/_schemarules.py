"""Whether a structural schema carries CEL rules: asked by the admission hook, which must not import the CEL
runtime for a schema without any, and by ``cel/`` itself."""

from __future__ import annotations

from typing import Any

__all__ = ["has_rules"]


def has_rules(schema: Any) -> bool:
    """Whether ``schema`` or a schema under it carries ``x-kubernetes-validations``."""
    if not isinstance(schema, dict):
        return False
    if schema.get("x-kubernetes-validations"):
        return True
    children = [*(schema.get("properties") or {}).values(), schema.get("items"), schema.get("additionalProperties")]
    return any(has_rules(c) for c in children)
