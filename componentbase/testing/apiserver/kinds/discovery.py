"""Discovery documents, legacy (/api, /apis, per group and group-version) and aggregated (apidiscovery v2).

All follow from the server's ``Registry`` and are rebuilt only when it changes (its generation).
kubectl 1.37 asks ``/api`` and ``/apis`` for ``APIGroupDiscoveryList`` first; the answer carries an
ETag, as kube-apiserver's aggregated handler does, and ``If-None-Match`` gets a 304.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from typing import Any

from ..apimachinery.errors import ApiError
from ..apimachinery.resources import SUBRESOURCES, Registry, Resource
from ._openapi import OpenAPI

__all__ = ["VERSION", "Discovery", "Document", "aggregated_version"]

VERSION = {
    "major": "1",
    "minor": "37",
    "gitVersion": "v1.37.0-loopback",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2025-01-01T00:00:00Z",
    "goVersion": "go1.24.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}
_AGGREGATED = "application/json;g=apidiscovery.k8s.io;v={};as=APIGroupDiscoveryList"


@dataclass(frozen=True, slots=True)
class Document:
    body: bytes
    content_type: str = "application/json"
    etag: str = ""


def aggregated_version(accept: str) -> str:
    """``v2`` or ``v2beta1`` when ``accept`` asks for an aggregated discovery list first, else ""."""
    for media in accept.split(","):
        params = dict(p.strip().partition("=")[::2] for p in media.split(";")[1:])
        if params.get("g") == "apidiscovery.k8s.io" and params.get("as") == "APIGroupDiscoveryList":
            if params.get("v") in ("v2", "v2beta1"):
                return params["v"]
        elif media.split(";")[0].strip() in ("application/json", "*/*", "application/*"):
            return ""
    return ""


def _encode(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def _sub_kind(res: Resource, sub: str) -> tuple[str, str, str, tuple[str, ...]]:
    group, version, kind, verbs = SUBRESOURCES[sub]
    if not kind:
        return res.group, res.version, res.kind, verbs
    return group, version, kind, verbs


def _legacy_entry(res: Resource) -> list[dict[str, Any]]:
    entry: dict[str, Any] = {"name": res.plural, "singularName": res.singular, "namespaced": res.namespaced,
                             "kind": res.kind, "verbs": list(res.verbs)}
    if res.short_names:
        entry["shortNames"] = list(res.short_names)
    if res.categories:
        entry["categories"] = list(res.categories)
    out = [entry]
    for sub in res.subresources:
        group, version, kind, verbs = _sub_kind(res, sub)
        item: dict[str, Any] = {"name": f"{res.plural}/{sub}", "singularName": "", "namespaced": res.namespaced}
        if (group, version) != (res.group, res.version):
            item.update(group=group, version=version)
        item.update(kind=kind, verbs=list(verbs))
        out.append(item)
    return out


def _aggregated_entry(res: Resource) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": res.plural,
        "responseKind": {"group": res.group, "version": res.version, "kind": res.kind},
        "scope": "Namespaced" if res.namespaced else "Cluster",
        "singularResource": res.singular,
        "verbs": list(res.verbs),
    }
    if res.short_names:
        entry["shortNames"] = list(res.short_names)
    if res.categories:
        entry["categories"] = list(res.categories)
    subs = []
    for sub in res.subresources:
        group, version, kind, verbs = _sub_kind(res, sub)
        subs.append({"subresource": sub, "responseKind": {"group": group, "version": version, "kind": kind},
                     "verbs": list(verbs)})
    if subs:
        entry["subresources"] = subs
    return entry


class Discovery:
    """Answers discovery paths for one registry, caching each document until the registry changes."""

    def __init__(self, registry: Registry, address: str) -> None:
        self.registry = registry
        self.address = address
        self._lock = threading.Lock()
        self._generation = -1
        self._cache: dict[tuple[str, str], Document] = {}
        self.openapi = OpenAPI(registry)

    def document(self, path: str, accept: str = "") -> Document | None:
        """The document for ``path`` (None for the health paths); 404 for groups nothing serves."""
        if path in ("/healthz", "/livez", "/readyz"):
            return None
        if path == "/version":
            return Document(_encode(VERSION))
        if path.startswith("/openapi/"):
            return Document(*self.openapi.document(path, accept))
        aggregated = aggregated_version(accept) if path in ("/api", "/apis") else ""
        state = self.registry.state
        with self._lock:
            if self._generation != state.generation:
                self._cache.clear()
                self._generation = state.generation
            doc = self._cache.get((path, aggregated))
        if doc is None:
            doc = self._build(path, aggregated)
            with self._lock:
                self._cache[(path, aggregated)] = doc
        return doc

    def _build(self, path: str, aggregated: str) -> Document:
        if aggregated:
            body = _encode(self._aggregated(path == "/api", aggregated))
            etag = '"' + hashlib.sha512(body).hexdigest()[:64] + '"'
            return Document(body, _AGGREGATED.format(aggregated), etag)
        return Document(_encode(self._legacy(path)))

    def _legacy(self, path: str) -> dict[str, Any]:
        state = self.registry.state
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": self.address}]}
        if path == "/apis":
            return {"kind": "APIGroupList", "apiVersion": "v1",
                    "groups": [self._group(g) for g in state.groups if g]}
        parts = [p for p in path.split("/") if p]
        if parts == ["api", "v1"]:
            return self._resource_list("", "v1")
        if len(parts) == 2 and parts[1] in state.versions:
            return dict(self._group(parts[1]), kind="APIGroup", apiVersion="v1")
        if len(parts) == 3 and self.registry.served(parts[1], parts[2]):
            return self._resource_list(parts[1], parts[2])
        raise ApiError.path_not_found()

    def _group(self, name: str) -> dict[str, Any]:
        versions = [{"groupVersion": f"{name}/{v}", "version": v} for v in self.registry.state.versions[name]]
        return {"name": name, "versions": versions, "preferredVersion": versions[0]}

    def _resource_list(self, group: str, version: str) -> dict[str, Any]:
        items: list[dict[str, Any]] = []
        for res in self.registry.state.by_gv.get((group, version), ()):
            items.extend(_legacy_entry(res))
        return {"kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": f"{group}/{version}" if group else version, "resources": items}

    def _aggregated(self, core: bool, api_version: str) -> dict[str, Any]:
        state = self.registry.state
        items = []
        for group in state.groups:
            if (group == "") != core:
                continue
            meta: dict[str, Any] = {"name": group, "creationTimestamp": None} if group else {
                "creationTimestamp": None}
            versions = [{"version": v, "resources": [_aggregated_entry(r) for r in state.by_gv[(group, v)]],
                         "freshness": "Current"} for v in state.versions[group]]
            items.append({"metadata": meta, "versions": versions})
        return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{api_version}",
                "metadata": {}, "items": items}
