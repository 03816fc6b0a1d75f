"""Reading kube's protobuf bodies: the ``k8s\\x00`` magic, the ``runtime.Unknown`` envelope, and the built-in
messages as the JSON objects kube-apiserver would have decoded from the same request.

kubectl 1.37 sends application/vnd.kubernetes.protobuf for the built-in kinds its imperative commands build
(``kubectl create configmap``, ``run``, ``drain``'s Evictions) and does not fall back to JSON, so the server
must read it. The field tables are data (``_proto_fields.txt``, derived from k8s.io/api's generated.proto);
a zero scalar is kept only where Go's JSON keeps it (pointers, fields without omitempty), so the decoded
object matches the JSON a client would have sent.
"""

from __future__ import annotations

import base64
import functools
import json
import struct
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

from componentbase.util import format_duration_ns

__all__ = ["MAGIC", "ProtobufError", "decode_envelope", "decode_message", "has_message", "message_name",
           "message_names"]

MAGIC = b"k8s\x00"
_INT64 = 1 << 63


class ProtobufError(ValueError):
    """The bytes are not the message they claim to be; the text is what Go's generated code says."""


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    type: str  # s b i d f y, or a message name
    repeated: bool = False
    map: bool = False
    keep_zero: bool = False
    inline: bool = False  # a Go struct embedded with json:",inline": its fields print in the parent


@functools.cache
def _table() -> dict[str, dict[int, _Field]]:
    """The field tables, parsed once, on the first protobuf body (start-up never pays for them)."""
    text = resources.files(__package__).joinpath("_proto_fields.txt").read_text()
    table: dict[str, dict[int, _Field]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, *specs = line.split()
        fields = table[name] = {}
        for spec in specs:
            field, _, rest = spec.partition("=")
            number, _, typ = rest.partition(":")
            fields[int(number)] = _Field(field, typ.lstrip("^*%").rstrip("!"), typ.startswith("*"),
                                         typ.startswith("%"), typ.endswith("!"), typ.startswith("^"))
    return table


def message_name(api_version: str, kind: str) -> str:
    """The table's name for a kind: ``apps/v1`` Deployment is ``apps.v1.Deployment``, core's are ``core.v1``."""
    group, _, version = api_version.rpartition("/")
    return f"{group.split('.')[0] or 'core'}.{version}.{kind}"


def has_message(name: str) -> bool:
    return name in _table()


def message_names() -> list[str]:
    """Every message the tables describe (``core.v1.Container``); the OpenAPI names follow their packages."""
    return list(_table())


# --- the wire ----------------------------------------------------------------------------------


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufError("unexpected EOF")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift >= 64:
            raise ProtobufError("proto: integer overflow")


def _fields(buf: bytes, message: str) -> list[tuple[int, int, Any]]:
    """(number, wire type, value) in order; lengths are checked, so a truncated body is an error."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    short = message.rsplit(".", 1)[-1]
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if number <= 0:
            raise ProtobufError(f"proto: {short}: illegal tag {number} (wire type {wire})")
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1 or wire == 5:
            size = 8 if wire == 1 else 4
            if pos + size > len(buf):
                raise ProtobufError("unexpected EOF")
            value, pos = buf[pos:pos + size], pos + size
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if length >= _INT64:
                raise ProtobufError("proto: negative length found during unmarshaling")
            if pos + length > len(buf):
                raise ProtobufError("unexpected EOF")
            value, pos = buf[pos:pos + length], pos + length
        elif wire == 4:
            raise ProtobufError(f"proto: {short}: wiretype end group for non-group")
        else:
            raise ProtobufError(f"proto: {short}: illegal wireType {wire}")
        out.append((number, wire, value))
    return out


# --- messages ----------------------------------------------------------------------------------


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= _INT64 else value


def _scalar(field: _Field, wire: int, value: Any) -> Any:
    typ = field.type
    expected = {"s": 2, "y": 2, "b": 0, "i": 0, "d": 1, "f": 5}[typ]
    if wire != expected:
        raise ProtobufError(f"proto: wrong wireType = {wire} for field {field.name}")
    if typ == "s":
        return bytes(value).decode("utf-8", "replace")
    if typ == "y":
        return base64.b64encode(value).decode()
    if typ == "b":
        return bool(value)
    if typ == "i":
        return _signed(value)
    return struct.unpack("<d" if typ == "d" else "<f", value)[0]


def _scalars(field: _Field, wire: int, value: Any) -> list[Any]:
    """A repeated scalar's values from one occurrence: packed (one length-delimited run) or one value."""
    if wire != 2 or field.type in ("s", "y"):
        return [_scalar(field, wire, value)]
    out, pos = [], 0
    size = {"d": 8, "f": 4}.get(field.type, 0)
    while pos < len(value):
        if size:
            out.append(_scalar(field, 1 if size == 8 else 5, value[pos:pos + size]))
            pos += size
        else:
            item, pos = _varint(value, pos)
            out.append(_scalar(field, 0, item))
    return out


def _value(field: _Field, wire: int, value: Any) -> Any:
    if len(field.type) == 1:
        return _scalar(field, wire, value)
    if wire != 2:
        raise ProtobufError(f"proto: wrong wireType = {wire} for field {field.name}")
    return decode_message(field.type, value)


def _map_entry(field: _Field, buf: bytes) -> tuple[str, Any]:
    key, value = "", None
    for number, wire, raw in _fields(buf, field.name):
        if number == 1:
            key = _scalar(_Field("key", "s"), wire, raw)
        elif number == 2:
            value = _value(field, wire, raw)
    if value is None:  # an absent value is the type's zero value
        value = "" if field.type in ("s", "y") else decode_message(field.type, b"") if len(field.type) > 1 else 0
    return key, value


def decode_message(name: str, buf: bytes) -> Any:
    """The JSON value of message ``name`` in ``buf``; the well-known types become what they print as."""
    special = _SPECIAL.get(name)
    if special is not None:
        return special(buf)
    fields = _table().get(name)
    if fields is None:
        raise ProtobufError(f"no protobuf message {name}")
    out: dict[str, Any] = {}
    for number, wire, value in _fields(buf, name):
        field = fields.get(number)
        if field is None:
            continue  # unknown fields are skipped, as gogo's generated Unmarshal does
        if field.map:
            if wire != 2:
                raise ProtobufError(f"proto: wrong wireType = {wire} for field {field.name}")
            key, item = _map_entry(field, value)
            out.setdefault(field.name, {})[key] = item
        elif field.repeated:
            items = out.setdefault(field.name, [])
            if len(field.type) == 1:
                items.extend(_scalars(field, wire, value))
            else:
                items.append(_value(field, wire, value))
        elif field.inline:
            out.update(_value(field, wire, value))
        else:
            out[field.name] = _value(field, wire, value)
    for field in fields.values():
        if field.name in out and not field.keep_zero and out[field.name] in ("", 0, False, None) \
                and len(field.type) == 1:
            del out[field.name]  # Go's omitempty: a non-pointer zero scalar does not print
        elif field.name in out and out[field.name] is None:
            del out[field.name]
    if len(fields) == 1 and fields.get(1, _Field("", "")).name == "items":  # a list wrapper (Verbs, ExtraValue)
        return out.get("items", [])
    return out


def _seconds_nanos(buf: bytes) -> tuple[int, int] | None:
    if not buf:
        return None
    values = {n: _signed(v) for n, w, v in _fields(buf, "Time") if w == 0}
    return values.get(1, 0), values.get(2, 0)


def _time(buf: bytes) -> str | None:
    got = _seconds_nanos(buf)
    return None if got is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(got[0]))


def _micro_time(buf: bytes) -> str | None:
    got = _seconds_nanos(buf)
    if got is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(got[0])) + f".{got[1] // 1000:06d}Z"


def _first(buf: bytes, message: str) -> Any:
    return next((v for n, _, v in _fields(buf, message) if n == 1), None)


def _duration(buf: bytes) -> str:
    return format_duration_ns(_signed(_first(buf, "Duration") or 0))


def _quantity(buf: bytes) -> str:
    return bytes(_first(buf, "Quantity") or b"").decode("utf-8", "replace")


def _int_or_string(buf: bytes) -> int | str:
    values = {n: v for n, _, v in _fields(buf, "IntOrString")}
    if values.get(1, 0) == 1:
        return bytes(values.get(3, b"")).decode("utf-8", "replace")
    return _signed(values.get(2, 0))


def _raw_json(buf: bytes) -> Any:
    raw = _first(buf, "RawExtension")
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ProtobufError("RawExtension: the embedded object is not JSON") from None


_SPECIAL = {
    "meta.v1.Time": _time,
    "meta.v1.MicroTime": _micro_time,
    "meta.v1.Duration": _duration,
    "resource.Quantity": _quantity,
    "intstr.IntOrString": _int_or_string,
    "runtime.RawExtension": _raw_json,
    "meta.v1.FieldsV1": _raw_json,
}


def decode_envelope(body: bytes) -> tuple[str, str, bytes]:
    """``(apiVersion, kind, raw)`` of a ``k8s\\x00``-prefixed ``runtime.Unknown``; the message as the
    protobuf serializer words it when the prefix or the envelope is wrong."""
    if not body:
        raise ProtobufError("empty data")
    if not body.startswith(MAGIC):
        raise ProtobufError("provided data does not appear to be a protobuf message, expected prefix "
                            f"[{' '.join(str(b) for b in MAGIC)}]")
    if len(body) == len(MAGIC):
        raise ProtobufError("empty body")
    api_version = kind = ""
    raw = b""
    for number, wire, value in _fields(body[len(MAGIC):], "Unknown"):
        if number == 1 and wire == 2:
            for n, w, v in _fields(value, "TypeMeta"):
                if w == 2 and n in (1, 2):
                    text = bytes(v).decode("utf-8", "replace")
                    api_version, kind = (text, kind) if n == 1 else (api_version, text)
        elif number == 2 and wire == 2:
            raw = value
    return api_version, kind, raw
