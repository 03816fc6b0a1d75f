"""Versioned config files: ``apiVersion``/``kind`` YAML in, attrs objects out, and back.

A config file is read strictly, as kube's strict decoder reads one: an unknown field, a duplicate key
or a wrong type is an error, not a silent default, because a typo in a config file should stop a
component before it runs with settings nobody asked for. Every problem is reported at once, each on
one line naming the file, the line and the field path, so a user fixes the file in one pass.

On the wire every field is written, in declaration order, with camelCase names (``json_name_of``);
``None`` is written as ``null``. A missing field takes its attrs default and ``null`` is accepted
only for ``T | None`` fields, so ``decode(encode(x)) == x`` for every config whose defaulter is
idempotent.

The work is split by concern: ``_load`` reads YAML text into a tree that knows its lines, ``_convert``
turns plain data into attrs objects strictly, ``_encode`` writes them back; this module registers
kinds, runs their defaulters and ties the steps together. cattrs and ruamel.yaml are imported on first
use: a component imports this module at startup and should not pay for them before it reads a file.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from componentbase.componentconfig._convert import bad_value, structure_located
from componentbase.componentconfig._encode import dump_yaml, require_attrs, to_dict
from componentbase.componentconfig._errors import LocatedError, decode_error
from componentbase.componentconfig._load import line_of, load_yaml, plain, read_file
from componentbase.util import field
from componentbase.util._files import write_atomic

__all__ = ["Scheme", "decode_as", "decode_file_as", "structure"]

T = TypeVar("T")
C = TypeVar("C", bound=type)

_HEADER = ("apiVersion", "kind")


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
        require_attrs(cls)
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
        root, problems = load_yaml(text, source)
        data = plain(root)
        if data is None:
            data = {}
        if not isinstance(data, dict):
            problems.append(LocatedError(source, line_of(root, ()), "the document must be a map of fields"))
            raise decode_error(problems)
        entry, header_problems = self._lookup(data, root, source)
        problems.extend(header_problems)
        if entry is None:
            raise decode_error(problems)
        body = {k: v for k, v in data.items() if k not in _HEADER}
        obj: object
        obj, errors = structure_located(body, entry.cls, root, source)
        problems.extend(errors)
        if problems:
            raise decode_error(problems)
        if entry.defaulter is not None:
            entry.defaulter(obj)
        return obj

    def decode_file(self, path: str | os.PathLike[str]) -> object:
        """``decode`` the file at ``path``; a file that cannot be read is a :class:`DecodeError` too."""
        source = os.fspath(path)
        return self.decode(read_file(source), source)

    def _lookup(
        self, data: dict[Any, Any], root: Any, source: str
    ) -> tuple[_Kind | None, list[LocatedError]]:
        problems: list[LocatedError] = []
        for name in _HEADER:
            value = data.get(name)
            if value is None or value == "":
                problems.append(LocatedError(source, None, f"{name} is missing"))
            elif not isinstance(value, str):
                err = bad_value(value, "a string").field_error(field.Path(name))
                problems.append(LocatedError(source, line_of(root, (("field", name),)), str(err)))
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
        return dump_yaml(self.to_dict(obj))

    def write_file(self, path: str | os.PathLike[str], obj: object) -> None:
        """Write ``encode(obj)`` so a reader never sees half a file."""
        write_atomic(path, self.encode(obj))


# Non-registered types (provider configs and the like), with the same rules


def structure(data: Any, cls: type[T], source: str = "<data>") -> T:
    """Build ``cls`` from plain (or ruamel-loaded, for line numbers) data, strictly."""
    obj, problems = structure_located(plain(data), cls, data, source)
    if problems:
        raise decode_error(problems)
    return obj


def decode_as(text: str, cls: type[T], source: str = "<string>") -> T:
    """Read a YAML document without ``apiVersion``/``kind`` into ``cls``, strictly."""
    root, problems = load_yaml(text, source)
    data = plain(root)
    obj, errors = structure_located({} if data is None else data, cls, root, source)
    problems.extend(errors)
    if problems:
        raise decode_error(problems)
    return obj


def decode_file_as(path: str | os.PathLike[str], cls: type[T]) -> T:
    """``decode_as`` the file at ``path``; a file that cannot be read is a :class:`DecodeError` too."""
    source = os.fspath(path)
    return decode_as(read_file(source), cls, source)
