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

from ..apimachinery.errors import ApiError
from ..apimachinery.resources import SUBRESOURCES, Registry, Resource
from ..wire._gnostic import encode_document

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
GVK = tuple[str, str, str]  # group, version, kind
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
        if path == "/openapi/v2":
            path += _v2_variant(accept)
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
        if path.startswith("/openapi/v2"):
            gvs = tuple(_gv_resources(state.by_gv[(g, v)]) for g in state.groups for v in state.versions[g])
            return _v2_protobuf(gvs) if path.endswith("+protobuf") else _v2_json(gvs)
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


def _kinds(res: Resource) -> list[GVK]:
    """The kinds ``res``'s paths carry: its own, then its subresources' (Scale, Eviction, TokenRequest...)."""
    out = [(res.group, res.version, res.kind)]
    for sub in res.subresources:
        group, version, kind, _ = SUBRESOURCES[sub]
        if kind and (group, version, kind) not in out:
            out.append((group, version, kind))
    return out


def _schemas(resources: GVKey) -> dict[str, dict[str, Any]]:
    """Definition name -> schema of every kind the resources' paths carry, each with the kinds it is
    (``x-kubernetes-group-version-kind``), and of everything they refer to."""
    from ._models import model_for, model_schemas, schema_name  # builds on the client's (slow) models

    roots: list[str] = []
    kinds: dict[str, list[GVK]] = {}
    for res, crd_schema in resources:
        for gvk in _kinds(res):
            if crd_schema is not None and gvk == (res.group, res.version, res.kind):
                name = _crd_name(res)
            else:
                model = model_for(*gvk)
                if model is None:
                    continue
                roots.append(model)
                name = schema_name(model)
            if gvk not in kinds.setdefault(name, []):
                kinds[name].append(gvk)
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
    for name, gvks in kinds.items():
        schemas[name]["x-kubernetes-group-version-kind"] = [{"group": g, "kind": k, "version": v} for g, v, k in gvks]
    return schemas


def _refs_by_kind(schemas: dict[str, Any], prefix: str) -> dict[GVK, dict[str, Any]]:
    return {(g["group"], g["version"], g["kind"]): {"$ref": prefix + name} for name, s in schemas.items()
            for g in s.get("x-kubernetes-group-version-kind", [])}


@functools.lru_cache(maxsize=64)
def _v3_doc(resources: GVKey) -> Doc:
    schemas = {name: _refs(s, "#/components/schemas/", wrap=True) for name, s in _schemas(resources).items()}
    refs = _refs_by_kind(schemas, "#/components/schemas/")
    paths: dict[str, Any] = {}
    for res, _ in resources:
        paths.update(_paths(res, refs, v3=True))
    return _doc({"openapi": "3.0.0", "info": _INFO, "paths": paths, "components": {"schemas": schemas}})


def _v2_variant(accept: str) -> str:
    """The form of /openapi/v2 that kube-openapi's handler picks for ``accept``: the first clause by
    quality that names JSON or gnostic's protobuf (either spelling); 406 when none does."""
    clauses = []
    for i, clause in enumerate((accept or "*/*").split(",")):
        media, *params = (p.strip() for p in clause.split(";"))
        q = next((p.partition("=")[2] for p in params if p.startswith("q=")), "1")
        try:
            clauses.append((-float(q), i, media.lower()))
        except ValueError:
            continue
    for _, _, media in sorted(clauses):
        if media in ("application/json", "application/*", "*/*"):
            return ""
        if media in (_V2_PROTOBUF + "@v1.0+protobuf", _V2_PROTOBUF + ".v1.0+protobuf"):
            return "+protobuf"
    raise ApiError(406, "NotAcceptable", "the server was unable to respond with a content type that the client "
                   "supports", {})


@functools.lru_cache(maxsize=2)  # ~10 MB of objects each
def _v2_spec(gvs: tuple[GVKey, ...]) -> dict[str, Any]:
    definitions: dict[str, Any] = {}
    paths: dict[str, Any] = {}
    for resources in gvs:
        schemas = {name: _v2_schema(_refs(s, "#/definitions/", wrap=False)) for name, s in _schemas(resources).items()}
        definitions.update(schemas)
        refs = _refs_by_kind(schemas, "#/definitions/")
        for res, _ in resources:
            paths.update(_paths(res, refs, v3=False))
    return {"swagger": "2.0", "info": _INFO, "paths": paths, "definitions": definitions}


@functools.lru_cache(maxsize=4)  # ~1 MB each
def _v2_json(gvs: tuple[GVKey, ...]) -> Doc:
    return _doc(_v2_spec(gvs))


@functools.lru_cache(maxsize=4)
def _v2_protobuf(gvs: tuple[GVKey, ...]) -> Doc:
    """gnostic's message of the same document, under the JSON's ETag as kube-openapi's handler serves it."""
    _, _, etag = _v2_json(gvs)
    return encode_document(_v2_spec(gvs)), _V2_PROTOBUF + ".v1.0+protobuf", etag


def _v2_schema(node: Any) -> Any:
    """What kube publishes of a schema in v2 (apiextensions' ToStructuralOpenAPIV2): no anyOf, oneOf, allOf
    or not; a nullable node untyped and without items or properties, as is one preserving unknown fields;
    an array left without items untyped; a nullable property not required. kubectl's v2 parser refuses
    the rest."""
    if not isinstance(node, dict):
        return node
    out = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf", "allOf", "not", "nullable")}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _v2_schema(v) for k, v in out["properties"].items()}
    for key in ("items", "additionalProperties"):
        if key in out:
            out[key] = _v2_schema(out[key])
    if node.get("nullable") is True or node.get("x-kubernetes-preserve-unknown-fields") is True:
        out.pop("items", None)
        out.pop("properties", None)
        if node.get("nullable") is True:
            out.pop("type", None)
    if out.get("type") == "array" and "items" not in out:
        del out["type"]
    nullable = {k for k, v in (node.get("properties") or {}).items() if isinstance(v, dict) and v.get("nullable")}
    if nullable and isinstance(out.get("required"), list):
        out["required"] = [r for r in out["required"] if r not in nullable]
        if not out["required"]:
            del out["required"]
    return out


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


def _operation(gvk: GVK, action: str, ref: dict[str, Any], v3: bool, body: tuple[str, ...] = ()
               ) -> dict[str, Any]:
    group, version, kind = gvk
    op: dict[str, Any] = {"operationId": f"{action}{kind}", "x-kubernetes-action": action,
                          "x-kubernetes-group-version-kind": {"group": group, "kind": kind, "version": version}}
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


def _paths(res: Resource, refs: dict[GVK, dict[str, Any]], v3: bool) -> dict[str, Any]:
    """The path items kube-apiserver serves for ``res``, with the operations its verbs allow; a subresource's
    carry its own kind (autoscaling/v1 Scale, policy/v1 Eviction) where it has one."""
    base = f"/apis/{res.group}/{res.version}" if res.group else f"/api/{res.version}"
    collection = f"{base}/namespaces/{{namespace}}/{res.plural}" if res.namespaced else f"{base}/{res.plural}"
    scope = [_param("namespace", "path", v3, True)] if res.namespaced else []
    named = [_param("name", "path", v3, True), *scope]
    verbs = set(res.verbs)
    patches = _PATCH_TYPES if res.schema is None else _PATCH_TYPES[:3]  # a custom resource takes no strategic one
    gvk = (res.group, res.version, res.kind)
    ref = refs.get(gvk, {"type": "object"})
    items: dict[str, Any] = {}
    ops = {m: _operation(gvk, a, ref, v3, b) for m, a, b, verb in (
        ("get", "list", (), "list"), ("post", "post", ("application/json",), "create"),
        ("delete", "deletecollection", (), "deletecollection")) if verb in verbs}
    if ops:
        items[collection] = {**ops, "parameters": scope}
    ops = {m: _operation(gvk, a, ref, v3, b) for m, a, b, verb in (
        ("get", "get", (), "get"), ("put", "put", ("application/json",), "update"),
        ("patch", "patch", patches, "patch"), ("delete", "delete", (), "delete")) if verb in verbs}
    if ops:
        items[f"{collection}/{{name}}"] = {**ops, "parameters": named}
    for sub in res.subresources:
        group, version, kind, _ = SUBRESOURCES[sub]
        sub_gvk = (group, version, kind) if kind else gvk
        sub_ref = refs.get(sub_gvk, {"type": "object"})
        items[f"{collection}/{{name}}/{sub}"] = {
            **{m: _operation(sub_gvk, m, sub_ref, v3, patches if m == "patch" else ("application/json",)
                             if m in ("put", "post") else ()) for m in _SUB_METHODS.get(sub, ())},
            "parameters": named}
    return items
