"""Writing configs: attrs objects to their wire form (camelCase, Go durations) and to YAML text.

Every field is written, in declaration order, so a written file shows every setting a component runs
with (but a nil ``omitempty`` pointer, which Go leaves out too); map keys are sorted, as Go's encoder writes
them, so equal configs encode to equal text.
"""

from __future__ import annotations

import enum
import io
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from componentbase.componentconfig._gotypes import OMIT_EMPTY
from componentbase.componentconfig._naming import json_name_of
from componentbase.componentconfig._yamlwrite import block_yaml
from componentbase.util._duration import Duration

__all__ = ["dump_yaml", "reads_as_string", "require_attrs", "ruamel_dump", "to_dict", "unstructure"]


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
    return {json_name_of(a): unstructure(value) for a in attrs.fields(cls)
            if a.init and not ((value := getattr(obj, a.name)) is None and a.metadata.get(OMIT_EMPTY))}


def require_attrs(cls: type) -> None:
    """Refuse a class the codec cannot read or write, when it is registered rather than at first use."""
    if not attrs.has(cls):
        raise TypeError(f"{cls.__qualname__} is not an attrs class")


def dump_yaml(data: Any) -> str:
    """YAML of plain data, one line per field however long, ``None`` as ``null``.

    ruamel decides how each value is written; a document of plain words and numbers (nearly every config)
    is written in that same layout by :func:`block_yaml`, about ten times faster.
    """
    yaml = _new_yaml()
    fast = block_yaml(data, reads_as_string(yaml))
    return fast if fast is not None else ruamel_dump(yaml, data)


def _new_yaml() -> Any:
    from ruamel.yaml import YAML  # slow import: only when a config is read or written

    yaml = YAML(typ="rt")
    yaml.width = 4096  # never fold long strings: diffs of config files stay one line per field
    yaml.representer.ignore_aliases = lambda _data: True
    yaml.representer.add_representer(
        type(None), lambda r, _v: r.represent_scalar("tag:yaml.org,2002:null", "null")
    )
    return yaml


def reads_as_string(yaml: Any) -> Callable[[str], bool]:
    """Whether ``yaml``'s resolver reads an unquoted text back as a string (not ``true``, ``1`` or ``null``)."""
    from ruamel.yaml.nodes import ScalarNode  # slow import: only when a config is read or written

    resolver = yaml.resolver
    seen: dict[str, bool] = {}  # a config repeats its keys (name, weight, enabled...) many times

    def check(text: str) -> bool:
        found = seen.get(text)
        if found is None:
            found = seen[text] = bool(resolver.resolve(ScalarNode, text, (True, False)) == "tag:yaml.org,2002:str")
        return found

    return check


def ruamel_dump(yaml: Any, data: Any) -> str:
    """``data`` written by ruamel itself, which :func:`block_yaml` matches where it answers."""
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()
