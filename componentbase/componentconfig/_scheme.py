"""Versioned config files: ``apiVersion``/``kind`` YAML in, attrs objects out, and back.

A config file is read strictly, as kube's strict decoder reads one: an unknown field, a duplicate key
or a wrong type is an error, not a silent default, because a typo in a config file should stop a
component before it runs with settings nobody asked for. Every problem is reported at once, each on
one line naming the file, the line and the field path, so a user fixes the file in one pass.

On the wire every field is written, in declaration order, with camelCase names (``json_name_of``);
``None`` is written as ``null``. A missing field takes its attrs default and ``null`` is accepted
only for ``T | None`` fields, so ``decode(encode(x)) == x`` for every config whose defaulter is
idempotent. Map keys (``dict`` fields and raw ``Any`` values) are written sorted, as Go's encoder
writes them, so equal configs encode to equal text.

cattrs and ruamel.yaml are imported on first use: a component imports this module at startup and
should not pay for them before it reads a file.
"""

from __future__ import annotations

import datetime
import enum
import functools
import io
import os
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from componentbase.componentconfig._naming import json_name_of
from componentbase.util import field
from componentbase.util._duration import (
    Duration,
    DurationError,
)
from componentbase.util._files import write_atomic
from componentbase.util.field import AggregateError

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "DecodeError",
    "LocatedError",
    "Scheme",
    "decode_as",
    "decode_file_as",
    "structure",
    "to_dict",
    "unstructure",
]

T = TypeVar("T")
C = TypeVar("C", bound=type)

#: Where a value sits below the document root: ("field", wire name), ("key", map key) or ("index", i).
_Seg = tuple[str, str | int]
_HEADER = ("apiVersion", "kind")


class LocatedError(ValueError):
    """One problem in one file, printed as ``file:line: message`` (``file: message`` without a line)."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        self.source = source
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.source}: {self.message}"
        return f"{self.source}:{self.line}: {self.message}"


class DecodeError(AggregateError):
    """Every problem found in a config file, one :class:`LocatedError` per line."""


# ---------------------------------------------------------------------------------------------------
# Registration


class _Kind(typing.NamedTuple):
    cls: type
    api_version: str
    kind: str
    defaulter: Callable[[Any], None] | None


class Scheme:
    """Maps ``apiVersion``/``kind`` to attrs classes, so a file names the type it holds."""

    def __init__(self) -> None:
        self._by_name: dict[tuple[str, str], _Kind] = {}
        self._by_class: dict[type, _Kind] = {}

    def register(
        self, cls: type[T], api_version: str, kind: str, defaulter: Callable[[T], None] | None = None
    ) -> type[T]:
        """Register ``cls``; the first version a class is registered under is the one it encodes as."""
        _require_attrs(cls)
        entry = _Kind(cls, api_version, kind, defaulter)
        taken = self._by_name.get((api_version, kind))
        if taken is not None and taken != entry:
            raise ValueError(f'kind "{kind}" is already registered for version "{api_version}"')
        self._by_name[(api_version, kind)] = entry
        self._by_class.setdefault(cls, entry)
        return cls

    def kind(
        self, api_version: str, kind: str, defaulter: Callable[[Any], None] | None = None
    ) -> Callable[[C], C]:
        """``register`` as a class decorator: ``@scheme.kind("example.io/v1", "ExampleConfiguration")``."""

        def decorate(cls: C) -> C:
            self.register(cls, api_version, kind, defaulter)
            return cls

        return decorate

    def kind_of(self, obj: object) -> tuple[str, str]:
        """The ``(apiVersion, kind)`` an object (or class) is encoded as."""
        cls = obj if isinstance(obj, type) else type(obj)
        entry = self._by_class.get(cls)
        if entry is None:
            raise ValueError(f"no kind is registered for the type {cls.__module__}.{cls.__qualname__}")
        return entry.api_version, entry.kind

    def new(self, api_version: str, kind: str) -> object:
        """A defaulted instance of a kind, as decoding a document with only its header gives.

        No YAML is read, so ``--help`` can show a component's defaults without loading a parser.
        """
        entry = self._by_name.get((api_version, kind))
        if entry is None:
            raise ValueError(f'no kind "{kind}" is registered for version "{api_version}"')
        obj = entry.cls()
        if entry.defaulter is not None:
            entry.defaulter(obj)
        return obj

    def default(self, obj: object) -> None:
        """Run the registered defaulter of ``obj``'s kind, if it has one."""
        entry = self._by_class.get(type(obj))
        if entry is not None and entry.defaulter is not None:
            entry.defaulter(obj)

    # -----------------------------------------------------------------------------------------------
    # Reading

    def decode(self, text: str, source: str = "<string>") -> object:
        """Read one config document (YAML or JSON) into its registered class, then default it."""
        root, problems = _load_yaml(text, source)
        data = _plain(root)
        if data is None:
            data = {}
        if not isinstance(data, dict):
            problems.append(LocatedError(source, _line_of(root, ()), "the document must be a map of fields"))
            raise _decode_error(problems)
        entry, header_problems = self._lookup(data, root, source)
        problems.extend(header_problems)
        if entry is None:
            raise _decode_error(problems)
        body = {k: v for k, v in data.items() if k not in _HEADER}
        obj: object
        obj, errors = _structure(body, entry.cls, root, source)
        problems.extend(errors)
        if problems:
            raise _decode_error(problems)
        if entry.defaulter is not None:
            entry.defaulter(obj)
        return obj

    def decode_file(self, path: str | os.PathLike[str]) -> object:
        """``decode`` the file at ``path``; a file that cannot be read is a :class:`DecodeError` too."""
        source = os.fspath(path)
        return self.decode(_read(source), source)

    def _lookup(
        self, data: dict[Any, Any], root: Any, source: str
    ) -> tuple[_Kind | None, list[LocatedError]]:
        problems: list[LocatedError] = []
        for name in _HEADER:
            value = data.get(name)
            if value is None or value == "":
                problems.append(LocatedError(source, None, f"{name} is missing"))
            elif not isinstance(value, str):
                err = _bad_value(value, "a string").field_error(field.Path(name))
                problems.append(LocatedError(source, _line_of(root, (("field", name),)), str(err)))
        if problems:
            return None, problems
        api_version, kind = data["apiVersion"], data["kind"]
        entry = self._by_name.get((api_version, kind))
        if entry is None:
            message = f'no kind "{kind}" is registered for version "{api_version}"'
            return None, [LocatedError(source, None, message)]
        return entry, []

    # -----------------------------------------------------------------------------------------------
    # Writing

    def to_dict(self, obj: object) -> dict[str, Any]:
        """The wire form as plain JSON-able data, ``apiVersion`` and ``kind`` first."""
        api_version, kind = self.kind_of(obj)
        return {"apiVersion": api_version, "kind": kind, **to_dict(obj)}

    def encode(self, obj: object) -> str:
        """YAML text that ``decode`` reads back into an equal object."""
        return _dump_yaml(self.to_dict(obj))

    def write_file(self, path: str | os.PathLike[str], obj: object) -> None:
        """Write ``encode(obj)`` so a reader never sees half a file."""
        write_atomic(path, self.encode(obj))


# ---------------------------------------------------------------------------------------------------
# Non-registered types (provider configs and the like), with the same rules


def structure(data: Any, cls: type[T], source: str = "<data>") -> T:
    """Build ``cls`` from plain (or ruamel-loaded, for line numbers) data, strictly."""
    obj, problems = _structure(_plain(data), cls, data, source)
    if problems:
        raise _decode_error(problems)
    return obj


def decode_as(text: str, cls: type[T], source: str = "<string>") -> T:
    """Read a YAML document without ``apiVersion``/``kind`` into ``cls``, strictly."""
    root, problems = _load_yaml(text, source)
    data = _plain(root)
    obj, errors = _structure({} if data is None else data, cls, root, source)
    problems.extend(errors)
    if problems:
        raise _decode_error(problems)
    return obj


def decode_file_as(path: str | os.PathLike[str], cls: type[T]) -> T:
    source = os.fspath(path)
    return decode_as(_read(source), cls, source)


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
    """An attrs object's fields, in declaration order, under their wire names."""
    cls: Any = type(obj)
    _require_attrs(cls)
    return {json_name_of(a): unstructure(getattr(obj, a.name)) for a in attrs.fields(cls) if a.init}


def _require_attrs(cls: type) -> None:
    if not attrs.has(cls):
        raise TypeError(f"{cls.__qualname__} is not an attrs class")


# ---------------------------------------------------------------------------------------------------
# YAML


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        reason = (e.strerror or str(e))
        raise DecodeError([LocatedError(f"open {path}", None, reason[:1].lower() + reason[1:])]) from e
    except UnicodeDecodeError as e:
        raise DecodeError([LocatedError(path, None, f"not UTF-8 text: {e.reason}")]) from e


def _load_yaml(text: str, source: str) -> tuple[Any, list[LocatedError]]:
    """The round-trip tree (it knows its line numbers) and the duplicate keys found on the way."""
    from ruamel.yaml.constructor import DuplicateKeyError  # slow import: only when a config is read or written

    try:
        return _parse(text, source, allow_duplicates=False), []
    except DuplicateKeyError:
        pass
    # ruamel stops at the first duplicate; find them all, then read on to report the other problems too.
    return _parse(text, source, allow_duplicates=True), _duplicate_keys(text, source)


def _parse(text: str, source: str, allow_duplicates: bool) -> Any:
    from ruamel.yaml import YAML  # slow import: only when a config is read or written
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.reader import ReaderError

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = allow_duplicates
    try:
        return yaml.load(text)
    except DuplicateKeyError:
        raise
    except MarkedYAMLError as e:
        raise DecodeError([_syntax_error(e, source)]) from e
    except ReaderError as e:
        line = text[: e.position].count("\n") + 1
        raise DecodeError([LocatedError(source, line, f"unacceptable character: {e.reason}")]) from e
    except YAMLError as e:
        raise DecodeError([LocatedError(source, None, str(e))]) from e


def _syntax_error(e: Any, source: str) -> LocatedError:
    """``file:line: problem``, with where the construct that failed began when that is elsewhere."""
    mark = e.problem_mark or e.context_mark
    line = None if mark is None else mark.line + 1
    context = str(e.context or "")
    if context and e.context_mark is not None and e.context_mark.line + 1 != line:
        context += f" at line {e.context_mark.line + 1}"
    message = ", ".join(part for part in (context, str(e.problem or "")) if part)
    return LocatedError(source, line, message)


def _duplicate_keys(text: str, source: str) -> list[LocatedError]:
    from ruamel.yaml import YAML  # slow import: only when a config is read or written
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    problems: list[LocatedError] = []
    seen_nodes: set[int] = set()

    def walk(node: Any) -> None:
        if node is None or id(node) in seen_nodes:
            return
        seen_nodes.add(id(node))
        if isinstance(node, SequenceNode):
            for item in node.value:
                walk(item)
        elif isinstance(node, MappingNode):
            keys: set[tuple[str | None, str]] = set()
            for key, value in node.value:
                if isinstance(key, ScalarNode) and key.value != "<<":
                    if (key.tag, key.value) in keys:
                        line = key.start_mark.line + 1
                        problems.append(LocatedError(source, line, f'key "{key.value}" already set in map'))
                    keys.add((key.tag, key.value))
                walk(value)

    walk(YAML(typ="rt").compose(text))
    return problems


def _dump_yaml(data: Any) -> str:
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


def _plain(value: Any) -> Any:
    """ruamel's scalar and container subclasses as plain Python, so equality and JSON just work."""
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if type(value) is int else _plain_int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, datetime.date):
        return value.isoformat()  # an unquoted 2024-01-01 is a string to every config field
    return value


def _plain_int(value: int) -> int | bool:
    from ruamel.yaml.scalarbool import ScalarBoolean  # an anchored ``true`` is an int subclass

    return bool(value) if isinstance(value, ScalarBoolean) else int(value)


# ---------------------------------------------------------------------------------------------------
# Structuring


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

    def __init__(self, errors: list[tuple[_Seg, Exception]]) -> None:
        super().__init__(f"{len(errors)} errors")
        self.errors = errors


def _bad_value(value: Any, want: str) -> _BadValue:
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
            raise _bad_value(value, 'a duration string such as "1m30s"')
        try:
            return Duration(value)
        except DurationError as e:
            raise _BadValue(field.ErrorType.INVALID, value, str(e)) from None
    if issubclass(cls, bool):
        if not isinstance(value, bool):
            raise _bad_value(value, "true or false")
        return value
    if issubclass(cls, int):
        if not isinstance(value, int) or isinstance(value, bool):
            raise _bad_value(value, "an integer")
        return int(value)
    if issubclass(cls, float):
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise _bad_value(value, "a number")
        return float(value)
    if not isinstance(value, str):
        raise _bad_value(value, "a string")
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
        raise _bad_value(value, "a list")
    (item_type,) = typing.get_args(t) or (Any,)
    out: list[Any] = []
    errors: list[tuple[_Seg, Exception]] = []
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
        raise _bad_value(value, "a map")
    key_type, value_type = typing.get_args(t) or (str, Any)
    if key_type is not str:
        raise TypeError(f"config maps must have string keys, not {key_type}")
    out: dict[str, Any] = {}
    errors: list[tuple[_Seg, Exception]] = []
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

    def hook(value: Any, _t: Any) -> Any:
        if not isinstance(value, dict):
            raise _bad_value(value, "a map")
        return inner(value, cls)

    return hook


@functools.cache
def _converter() -> cattrs.Converter:
    import cattrs  # slow import: only when a config is read or written

    conv = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    # singledispatch picks these for subclasses too (IntEnum, Duration); _structure_scalar sorts them out.
    for scalar in (str, int, float, bool, enum.Enum):
        conv.register_structure_hook(scalar, _structure_scalar)
    conv.register_structure_hook_func(_is_literal, _structure_literal)
    conv.register_structure_hook_func(_is_list, functools.partial(_structure_list, conv))
    conv.register_structure_hook_func(_is_dict, functools.partial(_structure_dict, conv))
    conv.register_structure_hook_func(_is_optional, functools.partial(_structure_optional, conv))
    conv.register_structure_hook_factory(attrs.has, functools.partial(_attrs_hook, conv))
    return conv


def _structure(data: Any, cls: type[T], root: Any, source: str) -> tuple[T, list[LocatedError]]:
    """The object, or the problems with their lines (looked up in ``root``, the ruamel tree)."""
    try:
        return _converter().structure(data, cls), []
    except Exception as e:
        explained = _explain(e, ())
        problems = [LocatedError(source, _line_of(root, segs, key), msg) for segs, key, msg in explained]
        return None, problems  # type: ignore[return-value]


def _explain(exc: BaseException, segs: tuple[_Seg, ...]) -> Iterator[tuple[tuple[_Seg, ...], bool, str]]:
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


def _path(segs: tuple[_Seg, ...]) -> field.Path:
    path = field.Path()
    for kind, name in segs:
        if kind == "index":
            path = path.index(int(name))
        elif kind == "key":
            path = path.key(str(name))
        else:
            path = path.child(str(name))
    return path


def _line_of(root: Any, segs: tuple[_Seg, ...], at_key: bool = False) -> int | None:
    """The line of the value at ``segs`` (of its key with ``at_key``), else of the nearest parent."""
    node = root
    lc = getattr(node, "lc", None)
    line = None if lc is None else lc.line + 1
    for i, (kind, name) in enumerate(segs):
        lc = getattr(node, "lc", None)
        if lc is None:
            return line
        if kind == "index" and isinstance(node, list) and isinstance(name, int) and name < len(node):
            pos = lc.item(name)
        elif kind != "index" and isinstance(node, dict) and name in node:
            # an empty value (``name:``) is placed by ruamel on the next line; name the key's line instead
            use_key = (at_key and i == len(segs) - 1) or node[name] is None
            pos = lc.key(name) if use_key else lc.value(name)
        else:
            return line
        line = pos[0] + 1
        node = node[name]
    return line


def _decode_error(problems: list[LocatedError]) -> DecodeError:
    """Problems in file order; those without a line last."""
    ordered = sorted(problems, key=lambda p: (p.line is None, p.line or 0))
    return DecodeError(ordered)
