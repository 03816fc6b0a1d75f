"""Reading a request's header block: ``http.server``'s own parser took a quarter of the server's time."""

from __future__ import annotations

from http import HTTPStatus
from http.client import HTTPMessage
from typing import Any

__all__ = ["HeaderError", "read_headers"]

#: As ``http.client``: the longest header line, and the most header lines, a request may have.
_MAX_HEADER_LINE = 65536
_MAX_HEADERS = 100


class HeaderError(Exception):
    """A header block to refuse, with the status that says why."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def read_headers(rfile: Any) -> HTTPMessage:
    """The header block up to its blank line, as an ``HTTPMessage`` (case-insensitive ``get``)."""
    headers = HTTPMessage()
    for _ in range(_MAX_HEADERS + 1):
        line = rfile.readline(_MAX_HEADER_LINE + 1)
        if len(line) > _MAX_HEADER_LINE:
            raise HeaderError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Line too long")
        if line in (b"\r\n", b"\n", b""):
            return headers
        name, colon, value = line.decode("iso-8859-1").partition(":")
        if not colon or not name or name != name.strip():
            raise HeaderError(HTTPStatus.BAD_REQUEST, f"Bad header line {line[:80]!r}")
        headers[name] = value.strip()
    raise HeaderError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Too many headers")
