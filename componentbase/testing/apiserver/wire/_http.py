"""Reading a request's header block: ``http.server``'s own parser took a quarter of the server's time."""

from __future__ import annotations

from collections.abc import Iterator
from http import HTTPStatus
from typing import Any

__all__ = ["HeaderError", "Headers", "read_headers"]

#: As ``http.client``: the longest header line, and the most header lines, a request may have.
_MAX_HEADER_LINE = 65536
_MAX_HEADERS = 100


class HeaderError(Exception):
    """A header block to refuse, with the status that says why."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Headers:
    """A request's header fields in their order, looked up by name in any case: what ``HTTPMessage`` offers
    the handlers, without the email package's parsing and sanitizing on every lookup (a tenth of the
    server's CPU per request). Built once from the whole block: a request has a handful of fields and
    most are looked up, so the lower-cased index is made in one loop, not field by field."""

    __slots__ = ("_fields", "_first")

    def __init__(self, fields: list[tuple[str, str]] | None = None) -> None:
        self._fields: list[tuple[str, str]] = fields if fields is not None else []
        self._first: dict[str, str] = {}
        for name, value in reversed(self._fields):
            self._first[name.lower()] = value

    def add(self, name: str, value: str) -> None:
        self._fields.append((name, value))
        self._first.setdefault(name.lower(), value)

    def get(self, name: str, default: Any = None) -> Any:
        """The first value of field ``name``, else ``default``."""
        return self._first.get(name.lower(), default)

    def get_all(self, name: str, default: Any = None) -> Any:
        """Every value of field ``name`` in order, else ``default``."""
        key = name.lower()
        if key not in self._first:
            return default
        return [value for field, value in self._fields if field.lower() == key]

    def has_prefix(self, prefix: str) -> bool:
        """Does any field's lower-cased name start with ``prefix`` (lower case)?"""
        return any(key.startswith(prefix) for key in self._first)

    def items(self) -> list[tuple[str, str]]:
        return list(self._fields)

    def __getitem__(self, name: str) -> str | None:
        return self.get(name)  # type: ignore[no-any-return]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._first

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._fields)

    def __len__(self) -> int:
        return len(self._fields)


def read_headers(rfile: Any) -> Headers:
    """The header block up to its blank line."""
    fields: list[tuple[str, str]] = []
    for _ in range(_MAX_HEADERS + 1):
        line = rfile.readline(_MAX_HEADER_LINE + 1)
        if len(line) > _MAX_HEADER_LINE:
            raise HeaderError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Line too long")
        if line in (b"\r\n", b"\n", b""):
            return Headers(fields)
        name, colon, value = line.decode("iso-8859-1").partition(":")
        if not colon or not name or name != name.strip():
            raise HeaderError(HTTPStatus.BAD_REQUEST, f"Bad header line {line[:80]!r}")
        fields.append((name, value.strip()))
    raise HeaderError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Too many headers")
