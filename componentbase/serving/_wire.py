"""HTTP/1.1 framing: a strict request-head parser and the response heads the server writes.

Strict where ``http.server`` is lenient, as Go's ``net/http`` is: a request line that is not
``METHOD target HTTP/1.x`` is a 400 (never an HTTP/0.9 exchange), header lines must be ``name: value``
(no folding, no space before the colon, no control characters), ``Content-Length`` must be one decimal
number, and a body of unknown length (``Transfer-Encoding``) is refused with 411: nothing served here
takes one, and refusing it leaves no room for request smuggling.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from http import HTTPStatus

import attrs

__all__ = ["BadRequest", "Head", "Headers", "complete_request", "error_response", "find_head_end", "parse_head",
           "response_head"]

PHRASES = {s.value: s.phrase for s in HTTPStatus}

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VERSION = re.compile(r"HTTP/([0-9])\.([0-9])")
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_BAD_TARGET = re.compile(r"[\x00-\x20\x7f]")
_DIGITS = re.compile(r"[0-9]{1,18}")


class BadRequest(Exception):
    """A request the server answers itself, then hangs up on: ``status`` and a one-line reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Headers:
    """Request headers, looked up case-insensitively; repeated headers are joined with ``", "``."""

    __slots__ = ("_values",)

    def __init__(self, values: dict[str, str]) -> None:
        self._values = values

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._values.get(name.lower(), default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __repr__(self) -> str:
        return f"Headers({sorted(self._values)})"


@attrs.frozen
class Head:
    """A parsed request head; ``keep_alive`` says whether the connection may serve another request."""

    method: str
    target: str
    headers: Headers
    content_length: int
    keep_alive: bool
    expect_continue: bool


def find_head_end(buf: bytes | bytearray, start: int = 0) -> int:
    """The index just past the blank line ending the head (CRLF or bare LF lines), or -1."""
    crlf = buf.find(b"\n\r\n", start)
    lf = buf.find(b"\n\n", start)
    ends = [i + n for i, n in ((crlf, 3), (lf, 2)) if i >= 0]
    return min(ends) if ends else -1


def _connection_tokens(value: str | None) -> set[str]:
    return {t.strip().lower() for t in (value or "").split(",")}


def parse_head(data: bytes) -> Head:
    """The head in ``data`` (request line to blank line); BadRequest says why it is not one."""
    text = data.decode("latin-1")
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise BadRequest(400, f"malformed HTTP request {lines[0][:64]!r}")
    method, target, version = parts
    if not _TOKEN.fullmatch(method):
        raise BadRequest(400, f"malformed HTTP method {method[:32]!r}")
    matched = _VERSION.fullmatch(version)
    if matched is None:
        raise BadRequest(400, f"malformed HTTP version {version[:32]!r}")
    if matched.group(1) != "1":
        raise BadRequest(505, f"unsupported protocol version {version!r}")
    origin = target.startswith(("/", "http://", "https://")) or target == "*"
    if not origin or _BAD_TARGET.search(target):
        raise BadRequest(400, f"malformed request target {target[:64]!r}")
    values: dict[str, str] = {}
    lengths: set[str] = set()
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if line[0] in " \t":
            raise BadRequest(400, "obsolete line folding in the headers")
        if not colon or not _TOKEN.fullmatch(name):
            raise BadRequest(400, f"malformed MIME header line {line[:64]!r}")
        value = value.strip(" \t")
        if _BAD_VALUE.search(value):
            raise BadRequest(400, f"invalid value for header {name!r}")
        key = name.lower()
        if key == "content-length":
            lengths.add(value)
        values[key] = f"{values[key]}, {value}" if key in values else value
    headers = Headers(values)
    if "transfer-encoding" in values:
        if values["transfer-encoding"].lower() != "chunked":
            raise BadRequest(501, f"unsupported transfer encoding {values['transfer-encoding'][:32]!r}")
        raise BadRequest(411, "a request body needs a Content-Length")
    if len(lengths) > 1 or (lengths and not _DIGITS.fullmatch(next(iter(lengths)))):
        raise BadRequest(400, "bad Content-Length")
    connection = _connection_tokens(values.get("connection"))
    keep_alive = version == "HTTP/1.1" and "close" not in connection
    expect = values.get("expect", "").lower() == "100-continue"
    return Head(method, target, headers, int(next(iter(lengths))) if lengths else 0, keep_alive, expect)


def response_head(status: int, fields: Iterable[tuple[str, str]]) -> bytes:
    """The status line and header fields, ending in the blank line."""
    lines = [f"HTTP/1.1 {status} {PHRASES.get(status, '')}", *(f"{k}: {v}" for k, v in fields)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def error_response(status: int, message: str, *, close: bool, head_only: bool = False,
                   extra: Iterable[tuple[str, str]] = ()) -> bytes:
    """A plain-text answer the server gives itself (400, 413, 429...), as Go's ``http.Error`` words it."""
    body = f"{message}\n".encode()
    fields = [("Content-Type", "text/plain; charset=utf-8"), ("X-Content-Type-Options", "nosniff"),
              ("Content-Length", str(len(body))), *extra]
    if close:
        fields.append(("Connection", "close"))
    return response_head(status, fields) + (b"" if head_only else body)


def complete_request(buf: bytes | bytearray, max_header_bytes: int, max_body_bytes: int) -> tuple[Head, int] | None:
    """A whole, valid request at the start of ``buf`` and where it ends; None for anything else (incomplete,
    malformed, too large), which the I/O thread then deals with."""
    end = find_head_end(buf)
    if end < 0 or end > max_header_bytes or buf.startswith((b"\r", b"\n")):
        return None
    try:
        head = parse_head(bytes(buf[:end]))
    except BadRequest:
        return None
    total = end + head.content_length
    return (head, total) if head.content_length <= max_body_bytes and len(buf) >= total else None
