"""Answers in the shapes clients ask for with ``Accept``: a meta.k8s.io Table (``kubectl get``) or
PartialObjectMetadata(List) (metadata-only clients), besides the plain object or list.

kube-apiserver negotiates the first acceptable entry of ``Accept``; kubectl lists the Table in v1 and
v1beta1 and then plain JSON. Built-in kinds get kube's printer columns (``_printers``), custom resources
their CRD version's ``additionalPrinterColumns`` (Age when it has none), anything else Name and Created At.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..apimachinery.errors import ApiError
from ..apimachinery.resources import Resource
from ..storage.store import Store, encode
from ..wire._json import loads
from ..wire._wire import Reply, Request
from ._cells import since
from ._printers import COLUMNS, DEFAULT_COLUMNS, cells_for

__all__ = ["Shape", "negotiate", "render", "watch_metadata", "watch_rows"]

_META = "meta.k8s.io"
_NAME_DOC = ("Name must be unique within a namespace. Is required when creating resources, although some resources "
             "may allow a client to request the generation of an appropriate name automatically.")
_AGE_DOC = ("CreationTimestamp is a timestamp representing the server time when this object was created. It is "
            "not guaranteed to be set in happens-before order across separate operations. Clients may not set "
            "this value. It is represented in RFC3339 form and is in UTC.")
_CRD_BUCKET = "customresourcedefinitions.apiextensions.k8s.io"


class Shape:
    """What a GET or LIST answers with: ``as_`` is "", "Table" or "PartialObjectMetadata"."""

    __slots__ = ("as_", "version")

    def __init__(self, as_: str = "", version: str = "v1") -> None:
        self.as_ = as_
        self.version = version


def negotiate(accept: str) -> Shape:
    """The first entry of ``accept`` the server can give; 406 when there is none, as kube answers."""
    if not accept.strip():
        return Shape()
    for media in accept.split(","):
        kind, *raw = media.split(";")
        params = dict(p.strip().partition("=")[::2] for p in raw)
        base = kind.strip().lower()
        if base not in ("application/json", "application/*", "*/*", "application/yaml",
                        "application/vnd.kubernetes.protobuf"):
            continue
        wanted = params.get("as", "")
        if not wanted:
            if base != "application/vnd.kubernetes.protobuf":
                return Shape()
            continue
        if params.get("g") == _META and params.get("v") in ("v1", "v1beta1") and wanted in (
                "Table", "PartialObjectMetadata", "PartialObjectMetadataList"):
            return Shape("Table" if wanted == "Table" else "PartialObjectMetadata", params["v"])
    raise ApiError(406, "NotAcceptable", "only the following media types are accepted: application/json, "
                   "application/yaml, application/vnd.kubernetes.protobuf", {})


def render(accept: str, req: Request, reply: Reply, store: Store) -> Reply:
    """A GET's or LIST's ``reply`` re-shaped as ``accept`` asks (Table, PartialObjectMetadata); others as they are."""
    if req.verb not in ("get", "list") or req.sub:
        return reply
    shape = negotiate(accept)
    if not shape.as_ or reply.code != 200:
        return reply
    res, verb = req.res, req.verb
    doc = loads(reply.body)
    items: list[dict[str, Any]] = doc.get("items") or [] if verb == "list" else [doc]
    list_meta = doc.get("metadata") or {} if verb == "list" else {
        "resourceVersion": (doc.get("metadata") or {}).get("resourceVersion", "")}
    api_version = f"{_META}/{shape.version}"
    if shape.as_ == "PartialObjectMetadata":
        partial = [_partial(item, api_version) for item in items]
        if verb != "list":
            return Reply(200, encode(partial[0]))
        return Reply(200, encode({"kind": "PartialObjectMetadataList", "apiVersion": api_version,
                                  "metadata": list_meta, "items": partial}))
    return Reply(200, encode(_table(shape, res, items, list_meta, store, req.query, headers=True)))


def _table(shape: Shape, res: Resource, items: list[dict[str, Any]], list_meta: dict[str, Any], store: Store,
           query: dict[str, str], headers: bool) -> dict[str, Any]:
    include = query.get("includeObject") or "Metadata"
    if include not in ("None", "Metadata", "Object"):
        raise ApiError.bad_request(f'Unsupported value: "{include}": supported values: "Metadata", "None", '
                                   '"Object"')
    api_version = f"{_META}/{shape.version}"
    columns, cells = _columns(res, store)
    now = time.time()
    rows = []
    for item in items:
        row: dict[str, Any] = {"cells": cells(item, now)}
        if include == "Object":
            row["object"] = item
        elif include == "Metadata":
            row["object"] = _partial(item, api_version)
        rows.append(row)
    return {"kind": "Table", "apiVersion": api_version, "metadata": list_meta,
            "columnDefinitions": columns if headers else [], "rows": rows}


def watch_metadata(accept: str) -> str | None:
    """The apiVersion of the PartialObjectMetadata a watch asks for with ``accept``; None for other shapes. The
    watch encodes those itself from the stored objects (``storage.watch``), not by rewriting its own JSON."""
    shape = negotiate(accept)
    return f"{_META}/{shape.version}" if shape.as_ == "PartialObjectMetadata" else None


def watch_rows(accept: str, req: Request, store: Store) -> Callable[[Iterable[bytes]], Iterable[bytes]]:
    """Wraps a watch's chunks so each event's object is a one-row Table (column definitions only in the first,
    as kube sends them) when ``accept`` asks for one; plain and metadata-only watches pass as they are."""
    shape = negotiate(accept)
    if shape.as_ != "Table":
        return lambda chunks: chunks
    api_version = f"{_META}/{shape.version}"
    first = [True]

    def event_line(line: bytes) -> bytes:
        event = loads(line)
        obj = event.get("object") or {}
        if event.get("type") not in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK") or obj.get("kind") == "Status":
            return line + b"\n"
        if event["type"] == "BOOKMARK":
            event["object"] = {"kind": "Table", "apiVersion": api_version, "metadata": obj.get("metadata") or {},
                               "columnDefinitions": [], "rows": []}
        else:
            meta = {"resourceVersion": (obj.get("metadata") or {}).get("resourceVersion", "")}
            event["object"] = _table(shape, req.res, [obj], meta, store, req.query, headers=first[0])
            first[0] = False
        return encode(event) + b"\n"

    def reshape(chunks: Iterable[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            yield b"".join(event_line(line) for line in chunk.split(b"\n") if line.strip())

    return reshape


def _partial(obj: dict[str, Any], api_version: str) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": api_version, "metadata": obj.get("metadata") or {}}


def _column(name: str, typ: str, priority: int, description: str = "", fmt: str = "") -> dict[str, Any]:
    return {"name": name, "type": typ, "format": fmt, "description": description, "priority": priority}


def _columns(res: Resource, store: Store) -> tuple[list[dict[str, Any]], Any]:
    """The column definitions for ``res`` and the function giving a row's cells."""
    if res.schema is not None:
        return _crd_columns(res, store)
    spec = COLUMNS.get(res.key, DEFAULT_COLUMNS)
    columns = []
    for word in spec.split():
        name, typ, priority = [*word.split(":"), "", ""][:3]
        name = name.replace("_", " ")
        doc = _NAME_DOC if name == "Name" else _AGE_DOC if name in ("Age", "Created At") else ""
        columns.append(_column(name, typ or "string", int(priority or 0), doc, "name" if name == "Name" else ""))
    return columns, lambda obj, now: cells_for(res.key, obj, now)


def _crd_columns(res: Resource, store: Store) -> tuple[list[dict[str, Any]], Any]:
    """A custom resource's columns: Name, then its version's additionalPrinterColumns (Age by default)."""
    entry = store.get(_CRD_BUCKET, "", f"{res.plural}.{res.group}")
    versions = ((entry.obj.get("spec") or {}).get("versions") or []) if entry is not None else []
    version: dict[str, Any] = next((v for v in versions if v.get("name") == res.version), {})
    extra = version.get("additionalPrinterColumns") or [
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp", "description": _AGE_DOC}]
    columns = [_column("Name", "string", 0, _NAME_DOC, "name")]
    columns += [_column(c.get("name", ""), c.get("type", "string"), int(c.get("priority") or 0),
                        c.get("description", ""), c.get("format", "")) for c in extra]
    paths = [(str(c.get("jsonPath", "")), c.get("type", "string")) for c in extra]

    def cells(obj: dict[str, Any], now: float) -> list[Any]:
        out: list[Any] = [(obj.get("metadata") or {}).get("name", "")]
        for path, typ in paths:
            found = json_path(obj, path)
            out.append(None if not found else _typed_cell(typ, found[0], now))
        return out

    return columns, cells


def _typed_cell(typ: str, value: Any, now: float) -> Any:
    """apiextensions' cellForJSONValue: a value of the wrong JSON type prints as nothing."""
    if typ == "date":
        return since(value, now) if isinstance(value, str) else None
    if typ == "integer":
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) \
            and float(value).is_integer() else None
    if typ == "number":
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if typ == "boolean":
        return value if isinstance(value, bool) else None
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


_STEP = re.compile(r"""\.([^.\[]+)|\[(\*|-?\d+)\]|\[\?\(@\.([\w.]+)\s*==\s*["']([^"']*)["']\)\]""")


def json_path(obj: Any, path: str) -> list[Any]:
    """The values a CRD column's simple JSONPath selects: fields, [n], [*] and [?(@.field=="value")]."""
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    path = path.removeprefix("$")
    values, pos = [obj], 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            return []
        pos = m.end()
        field, index, key, want = m.groups()
        nxt: list[Any] = []
        for v in values:
            if field is not None and isinstance(v, dict) and field in v:
                nxt.append(v[field])
            elif index == "*" and isinstance(v, list):
                nxt.extend(v)
            elif index is not None and index != "*" and isinstance(v, list) and -len(v) <= int(index) < len(v):
                nxt.append(v[int(index)])
            elif key is not None and isinstance(v, list):
                for item in v:
                    got = json_path(item, "." + key)
                    if got and str(got[0]) == want:
                        nxt.append(item)
        values = nxt
    return values
