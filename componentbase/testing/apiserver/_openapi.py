"""``/openapi/v2``, ``/openapi/v3`` and its per-group-version documents, for every served type, CRDs included.

kubectl reads them for ``explain``, for ``apply``'s patches and to learn that the server validates fields
itself (a PATCH operation of the kind carrying the ``fieldValidation`` parameter), so its default
``--validate=strict`` needs no client-side schema. Built-in schemas come from the official client's models
(``_models``), custom ones from their CRD version's ``openAPIV3Schema``. Documents are built on first
request and kept until the registry changes; start-up pays nothing. A document depends only on the
resources it describes, so the process keeps the last ones built: the next server serving the same kinds
(every test's server serves the built-ins) answers from them instead of building ~1 MB of JSON again.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import threading
from typing import Any

from .errors import ApiError
from .resources import Registry, Resource

__all__ = ["OpenAPI"]

_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2"
_INFO = {"title": "Kubernetes", "version": "v1.37.0-loopback"}
_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
_QUERY = {"dryRun": "string", "fieldManager": "string", "fieldValidation": "string", "pretty": "string"}
_PATCH_TYPES = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json",
                "application/strategic-merge-patch+json")
# subresource -> HTTP methods (as path item keys) it serves
_SUB_METHODS = {"status": ("get", "put", "patch"), "scale": ("get", "put", "patch"), "approval": ("get", "put",
                "patch"), "finalize": ("put",), "binding": ("post",), "eviction": ("post",), "token": ("post",)}
Doc = tuple[bytes, str, str]  # body, content type, ETag
#: What a group-version's documents depend on: its resources, each with its CRD schema as JSON (a
#: ``Resource`` compares without its schema).
GVKey = tuple[tuple[Resource, str | None], ...]


def _encode(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def _gv_key(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _crd_name(res: Resource) -> str:
    return ".".join(reversed(res.group.split("."))) + f".{res.version}.{res.kind}"


class OpenAPI:
    """The OpenAPI documents of one registry, cached per registry generation."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._lock = threading.Lock()
        self._generation = -1
        self._cache: dict[str, Doc] = {}

    def document(self, path: str, accept: str) -> Doc:
        """The document at ``path`` (/openapi/v2, /openapi/v3, /openapi/v3/apis/GROUP/VERSION...)."""
        path = path.rstrip("/")
        if path == "/openapi/v2" and _V2_PROTOBUF in accept and "json" not in accept and "*/*" not in accept:
            raise ApiError(406, "NotAcceptable", "only the following media types are accepted: application/json",
                           {})
        state = self.registry.state
        with self._lock:
            if self._generation != state.generation:
                self._cache.clear()
                self._generation = state.generation
            doc = self._cache.get(path)
        if doc is None:
            doc = self._build(path)
            with self._lock:
                self._cache[path] = doc
        return doc

    def _build(self, path: str) -> Doc:
        state = self.registry.state
        if path == "/openapi/v2":
            return _v2_doc(tuple(_gv_resources(state.by_gv[(g, v)]) for g in state.groups for v in state.versions[g]))
        if path == "/openapi/v3":
            paths = {_gv_key(g, v): {"serverRelativeURL": f"/openapi/v3/{_gv_key(g, v)}?hash={self._hash(g, v)}"}
                     for g in state.groups for v in state.versions[g]}
            return _doc({"paths": paths})
        key = path.removeprefix("/openapi/v3/")
        for group, version in state.by_gv:
            if _gv_key(group, version) == key:
                return _v3_doc(_gv_resources(state.by_gv[(group, version)]))
        raise ApiError.path_not_found()

    def _hash(self, group: str, version: str) -> str:
        """Changes whenever the group-version's document would: its resources and their CRD schemas."""
        parts = [(r.plural, r.kind, r.namespaced, r.subresources, r.schema)
                 for r in self.registry.state.by_gv[(group, version)]]
        return hashlib.sha512(_encode(parts)).hexdigest()[:64].upper()


def _gv_resources(resources: tuple[Resource, ...]) -> GVKey:
    return tuple((r, None if r.schema is None else _encode(r.schema).decode()) for r in resources)


def _schemas(resources: GVKey) -> dict[str, dict[str, Any]]:
    from ._models import model_for, model_schemas, schema_name  # builds on the client's (slow) models

    roots: list[str] = []
    kinds: dict[str, Resource] = {}
    for res, _ in resources:
        if res.schema is None:
            model = model_for(res.group, res.version, res.kind)
            if model is not None:
                roots.append(model)
                kinds[schema_name(model)] = res
    schemas = {name: copy.deepcopy(s) for name, s in model_schemas([*roots, "V1ObjectMeta"]).items()}
    for res, crd_schema in resources:
        if crd_schema is not None:
            schema = json.loads(crd_schema)
            schema = schema if isinstance(schema, dict) else {}
            props = schema.setdefault("properties", {})
            props.setdefault("apiVersion", {"type": "string"})
            props.setdefault("kind", {"type": "string"})
            props["metadata"] = {"$ref": f"{_META}.ObjectMeta"}
            schema.setdefault("type", "object")
            schemas[_crd_name(res)] = schema
            kinds[_crd_name(res)] = res
    for name, res in kinds.items():
        schemas[name]["x-kubernetes-group-version-kind"] = [
            {"group": res.group, "kind": res.kind, "version": res.version}]
    return schemas


@functools.lru_cache(maxsize=64)
def _v3_doc(resources: GVKey) -> Doc:
    schemas = {name: _refs(s, "#/components/schemas/", wrap=True) for name, s in _schemas(resources).items()}
    names = {(g["kind"]): name for name, s in schemas.items() for g in s.get("x-kubernetes-group-version-kind", [])}
    paths: dict[str, Any] = {}
    for res, _ in resources:
        ref = {"$ref": f"#/components/schemas/{names[res.kind]}"} if res.kind in names else {"type": "object"}
        paths.update(_paths(res, ref, v3=True))
    return _doc({"openapi": "3.0.0", "info": _INFO, "paths": paths, "components": {"schemas": schemas}})


@functools.lru_cache(maxsize=4)  # ~1 MB each
def _v2_doc(gvs: tuple[GVKey, ...]) -> Doc:
    definitions: dict[str, Any] = {}
    paths: dict[str, Any] = {}
    for resources in gvs:
        schemas = {name: _refs(s, "#/definitions/", wrap=False) for name, s in _schemas(resources).items()}
        definitions.update(schemas)
        names = {g["kind"]: n for n, s in schemas.items() for g in s.get("x-kubernetes-group-version-kind", [])}
        for res, _ in resources:
            ref = {"$ref": f"#/definitions/{names[res.kind]}"} if res.kind in names else {"type": "object"}
            paths.update(_paths(res, ref, v3=False))
    return _doc({"swagger": "2.0", "info": _INFO, "paths": paths, "definitions": definitions})


def _doc(doc: dict[str, Any]) -> Doc:
    body = _encode(doc)
    return body, "application/json", '"' + hashlib.sha512(body).hexdigest()[:64].upper() + '"'


def _refs(node: Any, prefix: str, wrap: bool) -> Any:
    """``node`` with bare ``$ref`` names prefixed; in v3 a ``$ref`` with siblings moves into ``allOf``."""
    if isinstance(node, list):
        return [_refs(n, prefix, wrap) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _refs(v, prefix, wrap) for k, v in node.items()}
    if isinstance(out.get("$ref"), str) and not out["$ref"].startswith("#"):  # not a property named "$ref"
        out["$ref"] = prefix + out["$ref"]
        if wrap and len(out) > 1:
            ref = out.pop("$ref")
            out["allOf"] = [{"$ref": ref}]
    return out


def _param(name: str, where: str, v3: bool, required: bool = False) -> dict[str, Any]:
    param: dict[str, Any] = {"name": name, "in": where, "uniqueItems": True}
    if required:
        param["required"] = True
    if v3:
        param["schema"] = {"type": "string", "uniqueItems": True}
    else:
        param["type"] = "string"
    return param


def _operation(res: Resource, action: str, ref: dict[str, Any], v3: bool, body: tuple[str, ...] = ()
               ) -> dict[str, Any]:
    op: dict[str, Any] = {"operationId": f"{action}{res.kind}", "x-kubernetes-action": action,
                          "x-kubernetes-group-version-kind": {"group": res.group, "kind": res.kind,
                                                             "version": res.version}}
    if action in ("post", "put", "patch"):
        op["parameters"] = [_param(q, "query", v3) for q in _QUERY]
        if action == "patch":
            op["parameters"].append(_param("force", "query", v3))
    if v3:
        op["responses"] = {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}}}
        if body:
            op["requestBody"] = {"content": {t: {"schema": ref if action != "patch" else {"type": "object"}}
                                             for t in body}, "required": True}
    else:
        op["responses"] = {"200": {"description": "OK", "schema": ref}}
        op["consumes"] = list(body or ("application/json",))
        op["produces"] = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]
        if body:
            op.setdefault("parameters", []).append({"name": "body", "in": "body", "required": True,
                                                    "schema": ref if action != "patch" else {"type": "object"}})
    return op


def _paths(res: Resource, ref: dict[str, Any], v3: bool) -> dict[str, Any]:
    """The path items kube-apiserver serves for ``res``, with the operations its verbs allow."""
    base = f"/apis/{res.group}/{res.version}" if res.group else f"/api/{res.version}"
    collection = f"{base}/namespaces/{{namespace}}/{res.plural}" if res.namespaced else f"{base}/{res.plural}"
    scope = [_param("namespace", "path", v3, True)] if res.namespaced else []
    named = [_param("name", "path", v3, True), *scope]
    verbs = set(res.verbs)
    items: dict[str, Any] = {}
    ops = {m: _operation(res, a, ref, v3, b) for m, a, b, verb in (
        ("get", "list", (), "list"), ("post", "post", ("application/json",), "create"),
        ("delete", "deletecollection", (), "deletecollection")) if verb in verbs}
    if ops:
        items[collection] = {**ops, "parameters": scope}
    ops = {m: _operation(res, a, ref, v3, b) for m, a, b, verb in (
        ("get", "get", (), "get"), ("put", "put", ("application/json",), "update"),
        ("patch", "patch", _PATCH_TYPES, "patch"), ("delete", "delete", (), "delete")) if verb in verbs}
    if ops:
        items[f"{collection}/{{name}}"] = {**ops, "parameters": named}
    for sub in res.subresources:
        methods = _SUB_METHODS.get(sub, ())
        items[f"{collection}/{{name}}/{sub}"] = {
            **{m: _operation(res, m, ref, v3, _PATCH_TYPES if m == "patch" else ("application/json",)
                             if m in ("put", "post") else ()) for m in methods},
            "parameters": named}
    return items
