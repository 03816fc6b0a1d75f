"""Reading Nodes and Pods from manifests (a YAML file of documents, Lists of them, or a directory of files),
and the storage objects the pods' claims need (PVCs, PVs, StorageClasses, CSINodes).

Pods get the API server's defaulting that matters to scheduling: a container's requests default to its
limits. Every problem names its file and document (``pods.yaml: document 3 (Pod default/web): ...``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

import componentbase

__all__ = ["Manifests", "load"]

_SUFFIXES = (".yaml", ".yml", ".json")
_LISTS = {"List": None, "NodeList": "Node", "PodList": "Pod", "PersistentVolumeClaimList": "PersistentVolumeClaim",
          "PersistentVolumeList": "PersistentVolume", "StorageClassList": "StorageClass", "CSINodeList": "CSINode"}


@attrs.define
class Manifests:
    nodes: list[dict[str, Any]] = attrs.field(factory=list)
    pods: list[dict[str, Any]] = attrs.field(factory=list)
    #: PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes, for the volume plugins.
    storage: list[dict[str, Any]] = attrs.field(factory=list)
    errors: list[str] = attrs.field(factory=list)
    warnings: list[str] = attrs.field(factory=list)


def _files(path: str) -> list[str]:
    if not os.path.isdir(path):
        return [path]
    found = []
    for root, dirs, names in os.walk(path):
        dirs.sort()
        found += [os.path.join(root, n) for n in sorted(names) if n.endswith(_SUFFIXES)]
    return found


def _documents(path: str, into: Manifests) -> Iterator[tuple[int, Any]]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        into.errors.append(f"{path}: {getattr(e, 'strerror', None) or e}")
        return
    try:
        yield from enumerate(YAML(typ="safe", pure=True).load_all(text), start=1)
    except YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        into.errors.append(f"{where}: invalid YAML: {problem}")


def _describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = meta.get("name", "")
    if obj.get("kind") == "Pod":
        name = f"{meta.get('namespace') or 'default'}/{name}"
    return f"{obj.get('kind')} {name}".rstrip()


def _quantity_problems(obj: Mapping[str, Any]) -> list[str]:
    problems = []
    for where, quantities in _quantity_fields(obj):
        if not isinstance(quantities, Mapping):
            problems.append(f"{where}: must be a map of resource names to quantities")
            continue
        for name, q in quantities.items():
            try:
                componentbase.util.parse_quantity(q)
            except componentbase.util.QuantityError as e:
                problems.append(f"{where}.{name}: {e}")
    return problems


def _quantity_fields(obj: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    if obj.get("kind") == "Node":
        status = obj.get("status") or {}
        for key in ("allocatable", "capacity"):
            if status.get(key) is not None:
                yield f"status.{key}", status[key]
        return
    spec = obj.get("spec") or {}
    if spec.get("overhead") is not None:
        yield "spec.overhead", spec["overhead"]
    for key in ("requests", "limits"):
        value = (spec.get("resources") or {}).get(key)
        if value is not None:
            yield f"spec.resources.{key}", value
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or ()):
            for key in ("requests", "limits"):
                value = ((c or {}).get("resources") or {}).get(key)
                if value is not None:
                    yield f"spec.{group}[{i}].resources.{key}", value


def _default_requests(pod: dict[str, Any]) -> None:
    """The API server's defaulting: a resource with a limit and no request requests its limit, in each
    container and at pod level (``spec.resources``, for the resources kube supports there)."""
    spec = pod.get("spec") or {}
    for group in ("initContainers", "containers"):
        for c in spec.get(group) or ():
            c["resources"] = _requests_from_limits(c.get("resources") or {}, lambda name: True)
    if spec.get("resources"):
        # kube's defaultPodRequests: a pod-level limit is the pod-level request only when no container
        # requests that resource (else the containers' effective requests are, which is what counts anyway).
        requested = {name for group in ("initContainers", "containers") for c in spec.get(group) or ()
                     for name in ((c.get("resources") or {}).get("requests") or {})}
        spec["resources"] = _requests_from_limits(
            spec["resources"],
            lambda name: (name in ("cpu", "memory") or name.startswith("hugepages-")) and name not in requested)


def _requests_from_limits(resources: dict[str, Any], applies: Callable[[str], bool]) -> dict[str, Any]:
    limits = resources.get("limits") or {}
    if not limits:
        return resources
    requests = dict(resources.get("requests") or {})
    for name, q in limits.items():
        if applies(name):
            requests.setdefault(name, q)
    return {**resources, "requests": requests}


_STORAGE = ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode")


def _default_storage(obj: dict[str, Any]) -> dict[str, Any]:
    """What the API server and the PV controller would have filled in: a class's binding mode, a PV's phase."""
    if obj["kind"] == "StorageClass":
        obj.setdefault("volumeBindingMode", "Immediate")
    elif obj["kind"] == "PersistentVolume" and not (obj.get("status") or {}).get("phase"):
        bound = bool((obj.get("spec") or {}).get("claimRef"))
        obj["status"] = {**(obj.get("status") or {}), "phase": "Bound" if bound else "Available"}
    return obj


def _add(obj: Any, where: str, into: Manifests, seen: set[tuple[str, str]]) -> None:
    if not isinstance(obj, Mapping) or not obj.get("kind"):
        into.errors.append(f"{where}: not a Kubernetes object (a mapping with apiVersion and kind)")
        return
    kind = obj["kind"]
    if kind not in ("Node", "Pod", *_STORAGE):
        into.warnings.append(f"{where}: kind {kind} is not simulated; skipped")
        return
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping) or not meta.get("name"):
        into.errors.append(f"{where}: {kind} has no metadata.name")
        return
    desc = _describe(obj)
    problems = _quantity_problems(obj)
    if not isinstance(obj.get("spec") or {}, Mapping):
        problems.append("spec: must be a mapping")
    into.errors += [f"{where} ({desc}): {p}" for p in problems]
    if problems:
        return
    if (kind, desc) in seen:
        into.errors.append(f"{where}: duplicate {desc}")
        return
    seen.add((kind, desc))
    copy = dict(obj)
    if kind in _STORAGE:
        into.storage.append(_default_storage(copy))
    elif kind == "Pod":
        _default_requests(copy)
        into.pods.append(copy)
    else:
        into.nodes.append(copy)


def load(path: str) -> Manifests:
    """Every Node and Pod under ``path``, in file and document order, with every problem found."""
    found = Manifests()
    seen: set[tuple[str, str]] = set()
    for name in _files(path):
        for i, doc in _documents(name, found):
            if doc is None:
                continue
            where = f"{name}: document {i}"
            kind = doc.get("kind") if isinstance(doc, Mapping) else None
            if kind in _LISTS:
                items = doc.get("items") or []
                if not isinstance(items, list):
                    found.errors.append(f"{where}: items: must be a list")
                    continue
                for j, item in enumerate(items):
                    if isinstance(item, Mapping) and not item.get("kind") and _LISTS[kind]:
                        item = {**item, "kind": _LISTS[kind]}
                    _add(item, f"{where} items[{j}]", found, seen)
            else:
                _add(doc, where, found, seen)
    return found
