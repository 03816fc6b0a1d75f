"""Type conversion: plain data to attrs objects, strictly, with every problem located in the file.

cattrs builds the objects, with hooks that refuse what kube's strict decoder refuses (a bool for an int,
a number for a string or a duration, an unknown field); its exception groups are then walked down to the
leaves, so each problem is reported once, with its field path and the line ruamel recorded for it.
cattrs is imported on first use: a component that reads no config file never loads it.
"""

from __future__ import annotations

import enum
import functools
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from componentbase.componentconfig._errors import LocatedError
from componentbase.componentconfig._gotypes import NULL_IS_UNSET, SIZED
from componentbase.componentconfig._load import Segment, line_of
from componentbase.componentconfig._naming import json_name_of
from componentbase.util import field
from componentbase.util._duration import Duration, DurationError

if TYPE_CHECKING:
    import cattrs

__all__ = ["bad_value", "structure_located"]

T = TypeVar("T")


class _BadValue(Exception):
    """A value of the wrong shape, raised by a hook; the caller knows where it is."""

    def __init__(self, error_type: field.ErrorType, value: Any, detail: str, show_value: bool = True) -> None:
        super().__init__(detail)
        self.error_type = error_type
        self.value = value
        self.detail = detail
        self.show_value = show_value

    def field_error(self, path: field.Path) -> field.FieldError:
        if self.show_value:
            return field.FieldError(self.error_type, path, self.value, self.detail)
        return field.FieldError(self.error_type, path, detail=self.detail)


class _ItemErrors(Exception):
    """Errors inside a list or map, each with the index or key it belongs to."""

    def __init__(self, errors: list[tuple[Segment, Exception]]) -> None:
        super().__init__(f"{len(errors)} errors")
        self.errors = errors


def bad_value(value: Any, want: str) -> _BadValue:
    if isinstance(value, dict | list):
        shape = "a map" if isinstance(value, dict) else "a list"
        return _BadValue(field.ErrorType.INVALID, None, f"must be {want}, not {shape}", show_value=False)
    return _BadValue(field.ErrorType.INVALID, value, f"must be {want}")


def _unsupported(value: Any, allowed: Sequence[Any]) -> _BadValue:
    detail = "supported values: " + ", ".join(field.format_value(v) for v in allowed)
    return _BadValue(field.ErrorType.NOT_SUPPORTED, value, detail)


def _structure_scalar(value: Any, cls: type) -> Any:
    """Strict scalars by target type: no bool for an int, no number for a string, no number for a duration."""
    if issubclass(cls, enum.Enum):
        return _structure_enum(value, cls)
    if issubclass(cls, Duration):
        if not isinstance(value, str):
            raise bad_value(value, 'a duration string such as "1m30s"')
        try:
            return Duration(value)
        except DurationError as e:
            raise _BadValue(field.ErrorType.INVALID, value, str(e)) from None
    if issubclass(cls, bool):
        if not isinstance(value, bool):
            raise bad_value(value, "true or false")
        return value
    if issubclass(cls, int):
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad_value(value, "an integer")
        return int(value)
    if issubclass(cls, float):
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise bad_value(value, "a number")
        return float(value)
    if not isinstance(value, str):
        raise bad_value(value, "a string")
    return value


def _structure_enum(value: Any, cls: type[enum.Enum]) -> enum.Enum:
    for member in cls:
        if type(member.value) is type(value) and member.value == value:
            return member
    raise _unsupported(value, [m.value for m in cls])


def _structure_literal(value: Any, cls: Any) -> Any:
    allowed = typing.get_args(cls)
    for option in allowed:
        if type(option) is type(value) and option == value:
            return value
    raise _unsupported(value, allowed)


def _structure_sized(value: Any, t: Any) -> Any:
    """A Go sized number: the type's rule, then its range, as Go's JSON decoder refuses an overflow."""
    go_name, low, high = SIZED[t]
    number = _structure_scalar(value, t.__supertype__)
    if not low <= number <= high:
        raise _BadValue(field.ErrorType.INVALID, value, f"cannot unmarshal number into Go value of type {go_name}")
    return number


def _is_list(t: Any) -> bool:
    return t is list or typing.get_origin(t) in (list, Sequence)


def _is_dict(t: Any) -> bool:
    return t is dict or typing.get_origin(t) in (dict, Mapping)


def _is_optional(t: Any) -> bool:
    args = typing.get_args(t)
    return typing.get_origin(t) in (typing.Union, types.UnionType) and len(args) == 2 and type(None) in args


def _is_literal(t: Any) -> bool:
    return typing.get_origin(t) is typing.Literal


def _structure_list(conv: cattrs.Converter, value: Any, t: Any) -> list[Any]:
    if not isinstance(value, list):
        raise bad_value(value, "a list")
    (item_type,) = typing.get_args(t) or (Any,)
    out: list[Any] = []
    errors: list[tuple[Segment, Exception]] = []
    for i, item in enumerate(value):
        try:
            out.append(conv.structure(item, item_type))
        except Exception as e:
            errors.append((("index", i), e))
    if errors:
        raise _ItemErrors(errors)
    return out


def _structure_dict(conv: cattrs.Converter, value: Any, t: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise bad_value(value, "a map")
    key_type, value_type = typing.get_args(t) or (str, Any)
    if key_type is not str:
        raise TypeError(f"config maps must have string keys, not {key_type}")
    out: dict[str, Any] = {}
    errors: list[tuple[Segment, Exception]] = []
    for k, v in value.items():
        if not isinstance(k, str):
            errors.append((("key", k), _BadValue(field.ErrorType.INVALID, k, "keys must be strings")))
            continue
        try:
            out[k] = conv.structure(v, value_type)
        except Exception as e:
            errors.append((("key", k), e))
    if errors:
        raise _ItemErrors(errors)
    return out


def _structure_optional(conv: cattrs.Converter, value: Any, t: Any) -> Any:
    if value is None:
        return None
    (inner,) = [a for a in typing.get_args(t) if a is not type(None)]
    return conv.structure(value, inner)


def _attrs_hook(conv: cattrs.Converter, cls: type) -> Callable[[Any, Any], Any]:
    """cattrs' generated structurer with wire names, behind a check that the value is a map at all."""
    from cattrs.gen import make_dict_structure_fn, override  # slow import: only when a config is read or written

    attrs.resolve_types(cls)
    renames = {a.name: override(rename=json_name_of(a)) for a in attrs.fields(cls)}
    inner: Callable[[Any, Any], Any] = make_dict_structure_fn(cls, conv, **renames)  # type: ignore[arg-type]
    unset_if_null = {json_name_of(a) for a in attrs.fields(cls) if a.metadata.get(NULL_IS_UNSET)}

    def hook(value: Any, _t: Any) -> Any:
        if not isinstance(value, dict):
            raise bad_value(value, "a map")
        if unset_if_null:
            value = {k: v for k, v in value.items() if v is not None or k not in unset_if_null}
        return inner(value, cls)

    return hook


@functools.cache
def _converter() -> cattrs.Converter:
    import cattrs  # slow import: only when a config is read or written

    conv = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    # singledispatch picks these for subclasses too (IntEnum, Duration); _structure_scalar sorts them out.
    for scalar in (str, int, float, bool, enum.Enum):
        conv.register_structure_hook(scalar, _structure_scalar)
    for sized in SIZED:
        conv.register_structure_hook(sized, _structure_sized)
    conv.register_structure_hook_func(_is_literal, _structure_literal)
    conv.register_structure_hook_func(_is_list, functools.partial(_structure_list, conv))
    conv.register_structure_hook_func(_is_dict, functools.partial(_structure_dict, conv))
    conv.register_structure_hook_func(_is_optional, functools.partial(_structure_optional, conv))
    conv.register_structure_hook_factory(attrs.has, functools.partial(_attrs_hook, conv))
    return conv


def structure_located(data: Any, cls: type[T], root: Any, source: str) -> tuple[T, list[LocatedError]]:
    """The object, or the problems with their lines (looked up in ``root``, the ruamel tree)."""
    try:
        return _converter().structure(data, cls), []
    except Exception as e:
        explained = _explain(e, ())
        problems = [LocatedError(source, line_of(root, segs, key), msg) for segs, key, msg in explained]
        return None, problems  # type: ignore[return-value]


def _explain(exc: BaseException, segs: tuple[Segment, ...]) -> Iterator[tuple[tuple[Segment, ...], bool, str]]:
    """Walk cattrs' exception groups down to the leaves: (where, whether at the key, message)."""
    from cattrs.errors import (  # slow import: only when a config is read or written
        AttributeValidationNote,
        ClassValidationError,
        ForbiddenExtraKeysError,
        StructureHandlerNotFoundError,
    )

    path = _path(segs)
    if isinstance(exc, StructureHandlerNotFoundError):
        raise exc  # a field type the codec does not support is a bug in the program, not in the file
    if isinstance(exc, ClassValidationError):
        for sub in exc.exceptions:
            notes = [n for n in getattr(sub, "__notes__", []) if isinstance(n, AttributeValidationNote)]
            if notes:
                yield from _explain(sub, (*segs, ("field", _wire_name(exc.cl, notes[-1].name))))
            elif isinstance(sub, ForbiddenExtraKeysError):
                for key in sorted(sub.extra_fields, key=str):
                    yield (*segs, ("field", key)), True, f'unknown field "{_path((*segs, ("field", key)))}"'
            else:
                yield segs, False, f"{path}: {sub}" if segs else str(sub)
    elif isinstance(exc, _ItemErrors):
        for seg, sub in exc.errors:
            yield from _explain(sub, (*segs, seg))
    elif isinstance(exc, _BadValue):
        yield segs, False, str(exc.field_error(path))
    elif isinstance(exc, KeyError):
        yield segs, False, str(field.required(path))  # cattrs' generated code indexes missing fields
    else:
        yield segs, False, f"{path}: {exc}" if segs else str(exc)


def _wire_name(cls: type, attribute: str) -> str:
    for a in attrs.fields(cls):
        if a.name == attribute:
            return json_name_of(a)
    return attribute


def _path(segs: tuple[Segment, ...]) -> field.Path:
    path = field.Path()
    for kind, name in segs:
        if kind == "index":
            path = path.index(int(name))
        elif kind == "key":
            path = path.key(str(name))
        else:
            path = path.child(str(name))
    return path
