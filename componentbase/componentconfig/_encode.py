"""Writing configs: attrs objects to their wire form (camelCase, Go durations) and to YAML text.

Every field is written, in declaration order, so a written file shows every setting a component runs
with; map keys are sorted, as Go's encoder writes them, so equal configs encode to equal text.
"""

from __future__ import annotations

import enum
import io
from collections.abc import Mapping
from typing import Any

import attrs

from componentbase.componentconfig._naming import json_name_of
from componentbase.util._duration import Duration

__all__ = ["dump_yaml", "require_attrs", "to_dict", "unstructure"]


def unstructure(value: Any) -> Any:
    """The wire form of any config value: attrs objects become camelCase dicts, durations Go strings."""
    if attrs.has(type(value)):
        return to_dict(value)
    if isinstance(value, Duration):
        return str(value)
    if isinstance(value, enum.Enum):
        return unstructure(value.value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(k): unstructure(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list | tuple):
        return [unstructure(v) for v in value]
    raise TypeError(f"cannot encode a {type(value).__qualname__} in a config")


def to_dict(obj: object) -> dict[str, Any]:
    """An attrs object's fields, in declaration order, under their wire names (no ``apiVersion``/``kind``)."""
    cls: Any = type(obj)
    require_attrs(cls)
    return {json_name_of(a): unstructure(getattr(obj, a.name)) for a in attrs.fields(cls) if a.init}


def require_attrs(cls: type) -> None:
    """Refuse a class the codec cannot read or write, when it is registered rather than at first use."""
    if not attrs.has(cls):
        raise TypeError(f"{cls.__qualname__} is not an attrs class")


def dump_yaml(data: Any) -> str:
    """YAML of plain data, one line per field however long, ``None`` as ``null``."""
    from ruamel.yaml import YAML  # slow import: only when a config is read or written

    yaml = YAML(typ="rt")
    yaml.width = 4096  # never fold long strings: diffs of config files stay one line per field
    yaml.representer.ignore_aliases = lambda _data: True
    yaml.representer.add_representer(
        type(None), lambda r, _v: r.represent_scalar("tag:yaml.org,2002:null", "null")
    )
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()
