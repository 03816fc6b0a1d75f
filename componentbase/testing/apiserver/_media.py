"""Request bodies in the media types kube-apiserver reads (JSON, YAML, and protobuf for built-in kinds),
turned into the JSON the verb handlers take; anything else is refused as kube-apiserver refuses it.

A body that does not decode is a 400 worded as apiserver's handlers word it (transformDecodeError), and a
media type the resource does not read is a 415 listing the ones it does; never a 500. The shapes of answers
(Table, PartialObjectMetadata) are negotiated in ``_tables``; the HTTP layer takes both from here.
"""

from __future__ import annotations

import binascii
import datetime
import json
from typing import Any

from .apimachinery.errors import ApiError
from .apimachinery.resources import SUBRESOURCES, Resource
from .kinds._tables import render, watch_metadata, watch_rows
from .wire._json import dumps
from .wire._protobuf import ProtobufError, decode_envelope, decode_message, has_message, message_name

__all__ = ["JSON", "PROTOBUF", "YAML", "render", "request_body", "watch_metadata", "watch_rows"]

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
_PASS = frozenset({"", JSON, "*/*"})
#: What apiextensions-apiserver's handler takes in a PATCH of a custom resource: no strategic merge patch,
#: which needs a Go type's struct tags (its supportedTypes).
_CUSTOM_PATCHES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")


def _media(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _target_kind(res: Resource, sub: str) -> str:
    """The kind the body must be: the resource's, or its subresource's (Eviction, Binding, Scale...)."""
    return (SUBRESOURCES[sub][2] or res.kind) if sub else res.kind


def _summary(body: bytes) -> str:
    """apiserver's summarizeData: the first 30 bytes, as text for JSON, in hex otherwise."""
    if not body:
        return "<empty>"
    head = body[:30]
    text = head.decode("utf-8", "replace") if body[:1] == b"{" else binascii.hexlify(head).decode()
    return text + (" ..." if len(body) > 30 else "")


def _unrecognized(kind: str, why: str, body: bytes) -> ApiError:
    return ApiError.bad_request(f"the object provided is unrecognized (must be of type {kind}): {why} "
                                f"({_summary(body)})")


def _unsupported(res: Resource) -> ApiError:
    types = [JSON, YAML] if res.schema is not None else [JSON, YAML, PROTOBUF]
    return ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                    f"accepted media types include: {', '.join(types)}", {})


def request_body(verb: str, res: Resource | None, sub: str, body: bytes, content_type: str) -> tuple[bytes, str]:
    """``(body, content_type)`` with YAML and protobuf bodies turned into JSON; patches pass unchanged."""
    media = _media(content_type)
    if verb == "patch" and res is not None and res.schema is not None and media not in _CUSTOM_PATCHES:
        raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                       f"accepted media types include: {', '.join(_CUSTOM_PATCHES)}")
    if res is None or verb in ("patch", "get", "list", "watch") or not body or media in _PASS:
        return body, content_type
    if media == PROTOBUF and res.schema is None:
        return _from_protobuf(res, sub, body), JSON
    if media in (YAML, "application/x-yaml", "text/yaml"):
        return _from_yaml(res, sub, body), JSON
    raise _unsupported(res)


def _from_protobuf(res: Resource, sub: str, body: bytes) -> bytes:
    want = _target_kind(res, sub)
    try:
        api_version, kind, raw = decode_envelope(body)
    except ProtobufError as err:
        raise _unrecognized(want, str(err), body) from None
    if not kind:
        raise ApiError.bad_request(f"Object 'Kind' is missing in '{body[len(b'k8s'):][:64]!r}'")
    name = message_name(api_version, kind)
    if not has_message(name):
        name = message_name("meta.k8s.io/v1", kind)  # DeleteOptions and other meta kinds under any version
    version = api_version.rpartition("/")[2]
    try:
        if not has_message(name):
            raise ProtobufError(f'no kind "{kind}" is registered for version "{api_version}"')
        obj = decode_message(name, raw)
    except ProtobufError as err:
        raise ApiError.bad_request(f'{kind} in version "{version}" cannot be handled as a {want}: {err}') from None
    out: dict[str, Any] = {"kind": kind, "apiVersion": api_version}
    out.update(obj)
    return dumps(out)


def _from_yaml(res: Resource, sub: str, body: bytes) -> bytes:
    import yaml  # type: ignore[import-untyped]  # PyYAML (a kubernetes dependency) is slow to import: YAML bodies only

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        doc = yaml.load(body, Loader=loader)
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        why = f"error converting YAML to JSON: yaml: {str(err).splitlines()[0]}"
        raise _unrecognized(_target_kind(res, sub), why, body) from None
    return json.dumps(doc, default=_yaml_scalar, separators=(",", ":"), ensure_ascii=False).encode()


def _yaml_scalar(value: Any) -> Any:
    """YAML timestamps, which JSON has no type for, become RFC 3339 strings as sigs.k8s.io/yaml writes them."""
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError(f"unsupported YAML value {value!r}")
