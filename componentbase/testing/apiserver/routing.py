"""Map an HTTP method and URL path to a verb on a resource, the way kube-apiserver lays out its paths."""

from __future__ import annotations

from dataclasses import dataclass

from .apimachinery.errors import ApiError
from .apimachinery.resources import SUBRESOURCES, Registry, Resource

__all__ = ["DISCOVERY_PATHS", "Route", "resolve"]

DISCOVERY_PATHS = frozenset({"/version", "/healthz", "/livez", "/readyz", "/api", "/apis"})


@dataclass(frozen=True, slots=True)
class Route:
    verb: str
    res: Resource | None = None  # None for discovery and health paths
    namespace: str = ""
    name: str = ""
    sub: str = ""
    path: str = ""


def _verb(method: str, res: Resource, name: str, sub: str, watch: bool, watch_path: bool) -> str:
    if method == "GET":
        if watch_path and not sub:
            return "watch"  # the old /watch/.../NAME form watches one object
        return "get" if name else ("watch" if watch else "list")
    if method == "POST" and (not name or (sub and SUBRESOURCES[sub][3] == ("create",))):
        return "create"
    if method == "PUT" and name:
        return "update"
    if method == "PATCH" and name:
        return "patch"
    if method == "DELETE":
        return "delete" if name else "deletecollection"
    raise ApiError.method_not_allowed()


def _allowed(res: Resource, verb: str, sub: str) -> bool:
    if sub:
        return verb in SUBRESOURCES[sub][3]
    return verb in res.verbs


def resolve(registry: Registry, method: str, path: str, watch_param: bool) -> Route:
    """Raise 404 for paths nothing serves and 405 for verbs a resource does not take."""
    parts = [p for p in path.split("/") if p]
    if path.rstrip("/") in DISCOVERY_PATHS or path == "/" or path.startswith("/openapi/"):
        return _discovery(method, path.rstrip("/") or "/")
    if len(parts) < 2 or parts[0] not in ("api", "apis"):
        raise ApiError.path_not_found()
    if parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) == 2:
        if not parts[1] or parts[1] not in registry.state.versions:
            raise ApiError.path_not_found()
        return _discovery(method, "/" + "/".join(parts))
    else:
        group, version, rest = parts[1], parts[2], parts[3:]
    if not registry.served(group, version):
        raise ApiError.path_not_found()
    if not rest:
        return _discovery(method, "/" + "/".join(parts))
    watch_path = rest[0] == "watch"
    if watch_path:
        rest = rest[1:]
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) >= 3:
        inner = registry.lookup(group, version, rest[2])
        if inner is not None and inner.namespaced:
            namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        raise ApiError.path_not_found()
    res = registry.lookup(group, version, rest[0])
    if res is None:
        raise ApiError.path_not_found()
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    if sub and sub not in res.subresources:
        raise ApiError.path_not_found()
    if res.namespaced and name and not namespace:
        raise ApiError.path_not_found()
    verb = _verb(method, res, name, sub, watch_param or watch_path, watch_path)
    if not _allowed(res, verb, sub) or (verb == "create" and res.namespaced and not namespace):
        raise ApiError.method_not_allowed()
    return Route(verb, res, namespace, name, sub, path)


def _discovery(method: str, path: str) -> Route:
    if method != "GET":
        raise ApiError.method_not_allowed()
    return Route("get", path=path)
