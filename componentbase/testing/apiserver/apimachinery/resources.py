"""What the loopback server serves: ``Resource`` definitions and the per-server ``Registry`` of them.

Routing, discovery (legacy and aggregated), storage and errors all read the registry, so registering a
resource (``LoopbackAPIServer.register``, or creating a CustomResourceDefinition) is all it takes to
serve it. The built-in definitions are data, in ``_builtin``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["CREATE_ON_UPDATE", "CRUD_VERBS", "Converter", "Registry", "Resource", "ScalePaths", "version_order"]

CRUD_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

#: subresource -> (group, version, kind of its body or "" for the resource's own kind, verbs)
SUBRESOURCES: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "status": ("", "", "", ("get", "patch", "update")),
    "scale": ("autoscaling", "v1", "Scale", ("get", "patch", "update")),
    "binding": ("", "v1", "Binding", ("create",)),
    "eviction": ("policy", "v1", "Eviction", ("create",)),
    "token": ("authentication.k8s.io", "v1", "TokenRequest", ("create",)),
    "approval": ("", "", "", ("get", "patch", "update")),
    "finalize": ("", "", "", ("update",)),
}


class Converter(Protocol):
    """Converts between a resource's version and the version its bucket stores (kube's conversion)."""

    def to_storage(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    def from_storage(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        """The object in this version, or None when the stored form already is."""


@dataclass(frozen=True, slots=True)
class ScalePaths:
    """Where a resource keeps what its ``scale`` subresource reads and writes (a CRD's scale paths)."""

    spec_replicas: str = ".spec.replicas"
    status_replicas: str = ".status.replicas"
    label_selector: str = ".spec.selector"  # a LabelSelector (built-ins) or a string (CRDs)


#: The kinds whose kube registry strategy has ``AllowCreateOnUpdate``: a PUT to a name that does not exist creates.
CREATE_ON_UPDATE = frozenset({("", "Event"), ("events.k8s.io", "Event"), ("coordination.k8s.io", "Lease"),
                              ("", "Service"), ("", "Endpoints"), ("", "ServiceAccount"),
                              ("rbac.authorization.k8s.io", "Role"), ("rbac.authorization.k8s.io", "RoleBinding"),
                              ("rbac.authorization.k8s.io", "ClusterRole"),
                              ("rbac.authorization.k8s.io", "ClusterRoleBinding")})


@dataclass(frozen=True, slots=True)
class Resource:
    """One served REST resource, as discovery describes it.

    ``singular`` defaults to the lower-cased kind; ``bucket`` (where objects are stored) to ``key``.
    Resources sharing a bucket are versions of one another: ``convert`` maps this version to the stored
    one. ``schema`` is a CustomResourceDefinition version's structural schema, which validates, prunes
    and defaults its objects. ``name_rule`` names the format its objects' names must have (a key of
    ``_formats.NAME_RULES``: a DNS subdomain unless the kind says otherwise). ``selectable_fields`` are a
    custom resource version's extra field selector labels (``selectableFields``).
    """

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = CRUD_VERBS
    subresources: tuple[str, ...] = ()
    scale: ScalePaths | None = None
    bucket: str = ""
    convert: Converter | None = field(default=None, compare=False)
    schema: Any = field(default=None, compare=False)
    name_rule: str = "subdomain"
    selectable_fields: tuple[str, ...] = ()
    #: kube's qualified resource name, as error messages spell it (``leases.coordination.k8s.io``), and the
    #: apiVersion: derived, set once here (every request read them a dozen times, each an f-string)
    key: str = field(init=False, compare=False, repr=False)
    group_version: str = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", f"{self.plural}.{self.group}" if self.group else self.plural)
        object.__setattr__(self, "group_version", f"{self.group}/{self.version}" if self.group else self.version)
        if not self.singular:
            object.__setattr__(self, "singular", self.kind.lower())
        if not self.bucket:
            object.__setattr__(self, "bucket", self.key)
        if self.scale is not None and "scale" not in self.subresources:
            object.__setattr__(self, "subresources", (*self.subresources, "scale"))
        unknown = [s for s in self.subresources if s not in SUBRESOURCES]
        if unknown:
            raise ValueError(f"{self.key}: unknown subresource {unknown[0]!r}; known: {', '.join(SUBRESOURCES)}")

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    @property
    def stored(self) -> bool:
        return "get" in self.verbs


_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_order(version: str) -> tuple[int, int, int, str]:
    """kube's version priority as a sort key: v2 before v1 before v1beta2 before v1alpha1 before others."""
    m = _VERSION_RE.match(version)
    if m is None:
        return (3, 0, 0, version)
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0), "")


@dataclass(frozen=True, slots=True)
class _State:
    """One immutable snapshot: readers take ``registry.state`` once and need no lock."""

    by_path: dict[tuple[str, str, str], Resource]
    by_gv: dict[tuple[str, str], tuple[Resource, ...]]
    groups: tuple[str, ...]  # "" first, then built-ins in table order, then the rest by name
    versions: dict[str, tuple[str, ...]]  # preferred first
    generation: int


class Registry:
    """The resources one server serves; built-ins first, registered ones after, changed atomically."""

    def __init__(self, builtin: Iterable[Resource] = ()) -> None:
        self._lock = threading.Lock()
        self._builtin_groups: list[str] = []
        self._resources: dict[tuple[str, str, str], Resource] = {}
        for res in builtin:
            if res.group not in self._builtin_groups:
                self._builtin_groups.append(res.group)
            self._resources[(res.group, res.version, res.plural)] = res
        self.state = self._build(0)

    def _build(self, generation: int) -> _State:
        by_gv: dict[tuple[str, str], list[Resource]] = {}
        for res in self._resources.values():
            by_gv.setdefault((res.group, res.version), []).append(res)
        names = {g for g, _ in by_gv}
        groups = [g for g in self._builtin_groups if g in names]
        groups += sorted(names - set(groups))
        versions = {g: tuple(sorted({v for gg, v in by_gv if gg == g}, key=version_order)) for g in groups}
        return _State(dict(self._resources), {k: tuple(v) for k, v in by_gv.items()}, tuple(groups), versions,
                      generation)

    def lookup(self, group: str, version: str, plural: str) -> Resource | None:
        return self.state.by_path.get((group, version, plural))

    def must(self, group: str, version: str, plural: str) -> Resource:
        res = self.lookup(group, version, plural)
        if res is None:
            raise KeyError(f"{group}/{version}/{plural}")
        return res

    def served(self, group: str, version: str) -> bool:
        return (group, version) in self.state.by_gv

    def resources(self) -> list[Resource]:
        return list(self.state.by_path.values())

    def register(self, *resources: Resource) -> None:
        """Serve ``resources`` (replacing any with the same group, version and plural)."""
        with self._lock:
            for res in resources:
                self._resources[(res.group, res.version, res.plural)] = res
            self.state = self._build(self.state.generation + 1)

    def unregister(self, group: str, plural: str) -> None:
        """Stop serving ``plural`` in every version of ``group``."""
        with self._lock:
            for key in [k for k in self._resources if k[0] == group and k[2] == plural]:
                del self._resources[key]
            self.state = self._build(self.state.generation + 1)

    def buckets(self, namespaced: bool) -> list[Resource]:
        """One stored resource per bucket (its first version), e.g. to empty a namespace."""
        seen: dict[str, Resource] = {}
        for res in self.state.by_path.values():
            if res.stored and res.namespaced == namespaced:
                seen.setdefault(res.bucket, res)
        return list(seen.values())
