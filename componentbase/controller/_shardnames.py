"""What sharded controllers agree on: the config, the label keys, the shard names and the objects' keys.

Shared by the shard side (``_sharding``) and the sharder (``_sharder``), which import nothing of each other.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from componentbase.controller._ring import DEFAULT_VIRTUAL_NODES
from componentbase.informers import meta_namespace_key

__all__ = ["DRAIN_PREFIX", "RING_LABEL", "SHARD_LABEL", "SHARD_PREFIX", "ShardingConfig", "group_of",
           "lease_name", "object_key", "owner_key", "relabel", "selectors", "shard_name"]

#: On each shard Lease: the ring it belongs to (``kubectl get leases -l sharding.componentbase.io/ring=NAME``).
RING_LABEL = "sharding.componentbase.io/ring"
#: On each shard Lease: the shard it stands for (its holder is empty once released).
SHARD_LABEL = "sharding.componentbase.io/shard"
#: ``shard.sharding.componentbase.io/<ring>=<shard>`` on each object: the shard that reconciles it.
SHARD_PREFIX = "shard.sharding.componentbase.io/"
#: ``drain.sharding.componentbase.io/<ring>=true``: the sharder asks the object's shard to let it go.
DRAIN_PREFIX = "drain.sharding.componentbase.io/"

_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
Kind = tuple[str, str]  # (apiVersion, kind)


def _kinds(value: Sequence[Sequence[str]]) -> tuple[Kind, ...]:
    return tuple((str(av), str(k)) for av, k in value)


@attrs.frozen(kw_only=True)
class ShardingConfig:
    """``Manager(..., sharding=ShardingConfig(ring="hello", kinds=[("v1", "ConfigMap")]))``.

    ``kinds`` are what the controllers reconcile (their first watch), assigned by consistent hashing of
    ``namespace/name``; ``owned`` are kinds those objects control (a controller ownerReference), which follow
    their owner's shard. ``ring`` names the label keys and the shard Leases (at most 63 characters, a DNS
    label); the Leases live in ``lease_namespace`` (the leader election's by default). ``shard`` is this
    replica's name (its identity, made a DNS label, by default); ``orphan_after`` is how long the sharder keeps
    the Lease of a shard gone (released or expired) before deleting it. ``selector`` (a label selector) limits
    the objects of ``kinds`` the sharder labels: the ones the controllers watch (hello's ``hello=true``).
    """

    ring: str
    kinds: tuple[Kind, ...] = attrs.field(converter=_kinds)
    owned: tuple[Kind, ...] = attrs.field(default=(), converter=_kinds)
    virtual_nodes: int = DEFAULT_VIRTUAL_NODES
    lease_namespace: str = ""
    shard: str = ""
    orphan_after: float = 60.0
    selector: str = ""

    def errors(self) -> list[str]:
        errs = []
        if len(self.ring) > 63 or not _LABEL.match(self.ring):
            errs.append(f"sharding ring {self.ring!r}: must be a DNS label (lowercase letters, digits, '-'; "
                        f"at most 63 characters)")
        if not self.kinds:
            errs.append("sharding: kinds must name at least one (apiVersion, kind) to shard")
        if self.virtual_nodes < 1:
            errs.append(f"sharding virtual_nodes {self.virtual_nodes}: must be at least 1")
        if self.shard and (len(self.shard) > 63 or not _LABEL.match(self.shard)):
            errs.append(f"sharding shard {self.shard!r}: must be a DNS label")
        return errs

    @property
    def shard_label(self) -> str:
        return SHARD_PREFIX + self.ring

    @property
    def drain_label(self) -> str:
        return DRAIN_PREFIX + self.ring


def shard_name(identity: str) -> str:
    """A shard's name from a replica's identity: as it is when it is a DNS label, else made one (lowercase,
    other characters as '-', a hash of the whole identity at the end when it had to be shortened)."""
    if len(identity) <= 63 and _LABEL.match(identity):
        return identity
    name = re.sub(r"[^a-z0-9-]+", "-", identity.lower()).strip("-") or "shard"
    if len(name) > 63:
        name = f"{name[:52].rstrip('-')}-{hashlib.sha256(identity.encode()).hexdigest()[:10]}"
    return name


def lease_name(ring: str, shard: str) -> str:
    """The shard Lease's name: the ring's, then the shard's."""
    return f"{ring}-{shard}"


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def object_key(obj: Mapping[str, Any]) -> str:
    """``namespace/name`` (``name`` when cluster-scoped): the key the ring hashes, as the cache keys it."""
    return meta_namespace_key(obj)


def selectors(*parts: str) -> str:
    """Label selectors that must all hold, as one (the empty ones left out)."""
    return ",".join(part for part in parts if part)


def relabel(objects: Any, api_version: str, kind: str, obj: Mapping[str, Any],
            labels: Mapping[str, str | None]) -> None:
    """Merge-patch ``labels`` (None removes one) onto ``obj`` through ``objects`` (an ``ObjectClient``), guarded
    by the resourceVersion the decision was taken on: a change meanwhile is a conflict. The sharder's label
    writes, a shard's claims and its drain acknowledgements are all this one write."""
    meta = obj["metadata"]
    ref = {"apiVersion": api_version, "kind": kind,
           "metadata": {"name": meta["name"], **({"namespace": meta["namespace"]} if meta.get("namespace") else {})}}
    objects.patch(ref, {"metadata": {"resourceVersion": meta.get("resourceVersion"), "labels": dict(labels)}})


def owner_key(obj: Mapping[str, Any], kinds: Sequence[Kind]) -> tuple[int, str] | None:
    """The index in ``kinds`` and the key of ``obj``'s controller, when that is of a sharded kind."""
    meta = obj.get("metadata") or {}
    for ref in meta.get("ownerReferences") or ():
        if not ref.get("controller"):
            continue
        for i, (api_version, kind) in enumerate(kinds):
            if ref.get("kind") == kind and group_of(str(ref.get("apiVersion", ""))) == group_of(api_version):
                ns = meta.get("namespace") or ""
                return i, f"{ns}/{ref.get('name')}" if ns else str(ref.get("name"))
    return None
