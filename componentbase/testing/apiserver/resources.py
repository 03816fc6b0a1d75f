"""The table of resources the loopback server serves, shared by routing and discovery."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RESOURCES", "Resource", "group_versions", "lookup", "must"]

CRUD_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
CREATE_ONLY = ("create",)


@dataclass(frozen=True, slots=True)
class Resource:
    """One REST resource; ``key`` names its bucket in the store and its errors."""

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = CRUD_VERBS
    subresources: tuple[str, ...] = ()

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> str:
        """Kube's qualified resource name, as error messages spell it (``leases.coordination.k8s.io``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    @property
    def stored(self) -> bool:
        return "get" in self.verbs


def _core(plural: str, kind: str, namespaced: bool, *short: str, sub: tuple[str, ...] = ()) -> Resource:
    return Resource("", "v1", plural, kind.lower(), kind, namespaced, short, subresources=sub)


RESOURCES: tuple[Resource, ...] = (
    _core("namespaces", "Namespace", False, "ns", sub=("status",)),
    _core("nodes", "Node", False, "no", sub=("status",)),
    _core("pods", "Pod", True, "po", sub=("status", "binding")),
    Resource("", "v1", "bindings", "binding", "Binding", True, verbs=CREATE_ONLY),
    _core("events", "Event", True, "ev"),
    _core("configmaps", "ConfigMap", True, "cm"),
    _core("secrets", "Secret", True),
    _core("services", "Service", True, "svc", sub=("status",)),
    _core("endpoints", "Endpoints", True, "ep"),
    Resource("coordination.k8s.io", "v1", "leases", "lease", "Lease", True),
    Resource("events.k8s.io", "v1", "events", "event", "Event", True, ("ev",)),
    Resource("authentication.k8s.io", "v1", "tokenreviews", "tokenreview", "TokenReview", False,
             verbs=CREATE_ONLY),
    Resource("authorization.k8s.io", "v1", "subjectaccessreviews", "subjectaccessreview",
             "SubjectAccessReview", False, verbs=CREATE_ONLY),
)

_BY_PATH: dict[tuple[str, str, str], Resource] = {(r.group, r.version, r.plural): r for r in RESOURCES}


def lookup(group: str, version: str, plural: str) -> Resource | None:
    return _BY_PATH.get((group, version, plural))


def group_versions() -> list[tuple[str, str]]:
    """Served (group, version) pairs in table order, core first."""
    seen: list[tuple[str, str]] = []
    for r in RESOURCES:
        if (r.group, r.version) not in seen:
            seen.append((r.group, r.version))
    return seen


def must(group: str, version: str, plural: str) -> Resource:
    res = lookup(group, version, plural)
    if res is None:
        raise KeyError(f"{group}/{version}/{plural}")
    return res
