"""Discovery documents (/version, /api, /apis, resource lists) so standard tools can find resources."""

from __future__ import annotations

from typing import Any

from .errors import ApiError
from .resources import RESOURCES, Resource, group_versions

__all__ = ["VERSION", "discovery"]

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
_STATUS_VERBS = ["get", "patch", "update"]


def _group(name: str) -> dict[str, Any]:
    versions = [{"groupVersion": f"{name}/{v}", "version": v} for g, v in group_versions() if g == name]
    return {"name": name, "versions": versions, "preferredVersion": versions[0]}


def _entry(res: Resource) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": res.plural,
        "singularName": res.singular,
        "namespaced": res.namespaced,
        "kind": res.kind,
        "verbs": list(res.verbs),
    }
    if res.short_names:
        entry["shortNames"] = list(res.short_names)
    return entry


def _sub(res: Resource, sub: str) -> dict[str, Any]:
    kind, verbs = (res.kind, _STATUS_VERBS) if sub == "status" else ("Binding", ["create"])
    return {"name": f"{res.plural}/{sub}", "singularName": "", "namespaced": res.namespaced,
            "kind": kind, "verbs": verbs}


def _resource_list(group: str, version: str) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for res in RESOURCES:
        if (res.group, res.version) == (group, version):
            items.append(_entry(res))
            items.extend(_sub(res, s) for s in res.subresources)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": items,
    }


def discovery(path: str, address: str) -> Any:
    """The document for a discovery path; ``address`` is this server's host:port."""
    if path == "/version":
        return VERSION
    if path in ("/healthz", "/livez", "/readyz"):
        return None
    if path == "/api":
        return {"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}]}
    if path == "/apis":
        names = sorted({g for g, _ in group_versions() if g})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_group(n) for n in names]}
    parts = [p for p in path.split("/") if p]
    if parts == ["api", "v1"]:
        return _resource_list("", "v1")
    if len(parts) == 2:
        return dict(_group(parts[1]), kind="APIGroup", apiVersion="v1")
    if len(parts) == 3:
        return _resource_list(parts[1], parts[2])
    raise ApiError.path_not_found()
