"""Config field names: Python attributes are snake_case, the versioned wire form is camelCase."""

from __future__ import annotations

import attrs

__all__ = ["JSON_NAME", "json_name", "json_name_of"]

#: ``attrs.field(metadata={JSON_NAME: "kubeAPIQPS"})`` overrides the derived camelCase name.
JSON_NAME = "componentbase.json_name"


def json_name(attribute: str) -> str:
    """``lease_duration`` -> ``leaseDuration``."""
    head, *rest = attribute.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def json_name_of(a: attrs.Attribute) -> str:  # type: ignore[type-arg]
    """The wire name of an attrs attribute: its metadata override, else the derived camelCase."""
    return str(a.metadata.get(JSON_NAME) or json_name(a.name))
