"""Field sets as server-side apply tracks them: paths into an object, kept in ``fieldsV1``'s encoding.

A path is a tuple of kube's path elements: ``f:name`` (a field), ``k:{"name":"c"}`` (an item of a
list keyed by its merge keys), ``v:"x"`` (an item of a set). ``fieldsV1`` nests them, an empty
object marking a leaf and ``.`` marking a node that is itself a member with members below it.

Which lists are maps, sets or atomic comes from the list's merge keys: for built-in types a table of
the fields kube's OpenAPI marks (``containers`` by ``name``, container ``ports`` by ``containerPort``
and ``protocol``...), for custom resources the schema's ``x-kubernetes-list-type`` and
``x-kubernetes-list-map-keys``.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ATOMIC_MAPS", "Path", "as_fields_v1", "changes", "child_schema", "from_fields_v1", "key_element",
           "leaves", "list_keys", "owns_any", "path_string", "pick", "remove_path"]

Path = tuple[str, ...]

# list field -> merge keys, for the built-in types (kube's +listType=map / +listMapKey markers)
_MAP_LISTS: dict[str, tuple[str, ...]] = {
    "containers": ("name",), "initContainers": ("name",), "ephemeralContainers": ("name",),
    "env": ("name",), "volumes": ("name",), "volumeMounts": ("mountPath",), "volumeDevices": ("devicePath",),
    "conditions": ("type",), "imagePullSecrets": ("name",), "ownerReferences": ("uid",),
    "hostAliases": ("ip",), "containerStatuses": ("name",), "initContainerStatuses": ("name",),
    "topologySpreadConstraints": ("topologyKey", "whenUnsatisfiable"), "resourceClaims": ("name",),
    "readinessGates": ("conditionType",), "taints": ("key", "effect"), "addresses": ("type",),
}
_SET_LISTS = frozenset({"finalizers"})
# built-in maps kube marks +structType=atomic / +mapType=atomic: owned and replaced as one value
ATOMIC_MAPS = frozenset({"selector", "nodeSelector"})
# ``ports`` is keyed by what its items are: a container's or a service's
_PORT_KEYS = (("containerPort", ("containerPort", "protocol")), ("port", ("port", "protocol")))
_DEFAULTS = {"protocol": "TCP"}
ITEM = object()  # the value ``leaves`` gives list items  # merge keys kube defaults before it merges
_MISSING = object()  # a value no other equals: a field that is absent
_IGNORED_META = frozenset({"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                           "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"})


def list_keys(name: str, items: list[Any], schema: Any = None) -> tuple[str, ...] | str:
    """The merge keys of list field ``name``; "set" or "atomic" for lists that are not maps."""
    if isinstance(schema, dict):
        kind = schema.get("x-kubernetes-list-type")
        if kind == "map":
            return tuple(schema.get("x-kubernetes-list-map-keys") or ())
        if kind == "set":
            return "set"
        return "atomic"
    if name in _SET_LISTS:
        return "set"
    if name == "ports":
        for marker, keys in _PORT_KEYS:
            if items and all(isinstance(i, dict) and marker in i for i in items):
                return keys
        return "atomic"
    named = _MAP_LISTS.get(name)
    if named and all(isinstance(i, dict) for i in items):
        return named
    return "atomic"


def key_element(item: dict[str, Any], keys: tuple[str, ...]) -> str:
    return "k:" + json.dumps({k: item.get(k, _DEFAULTS.get(k)) for k in sorted(keys)}, separators=(",", ":"))


def child_schema(schema: Any, key: str) -> Any:
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties")
    if isinstance(props, dict) and key in props:
        return props[key]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _tops(obj: dict[str, Any], skip_status: bool) -> dict[str, Any]:
    """The top-level fields of ``obj`` that hold managed fields, metadata without what the server sets."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind") or (skip_status and key == "status"):
            continue
        if key == "metadata" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in _IGNORED_META}
            if not value:
                continue
        out[key] = value
    return out


def leaves(obj: dict[str, Any], schema: Any = None, *, skip_status: bool = False) -> dict[Path, Any]:
    """The paths an object sets (its scalars, atomic values, list-map and set items) and their values;
    an item's value is ``ITEM``: it changes only by appearing or going."""
    out: dict[Path, Any] = {}
    for key, value in _tops(obj, skip_status).items():
        _walk(("f:" + key,), key, value, child_schema(schema, key), out)
    return out


def changes(before: dict[str, Any], after: dict[str, Any], schema: Any = None, *,
            skip_status: bool = False) -> tuple[set[Path], set[Path]]:
    """The paths ``after`` sets that ``before`` did not set to the same value, and the paths ``before`` set
    that ``after`` does not: what comparing their ``leaves`` gives, but a subtree both hold equal is not
    walked (an update changes a few fields of an object; walking all of them was most of its cost)."""
    changed: set[Path] = set()
    removed: set[Path] = set()
    _diff((), "", _tops(before, skip_status), _tops(after, skip_status), schema, changed, removed)
    return changed, removed


def _expands(name: str, value: Any, schema: Any) -> bool:
    """Does ``_walk`` descend into ``value`` field by field?"""
    return isinstance(value, dict) and bool(value) and not (schema is None and name in ATOMIC_MAPS)


def _diff(path: Path, name: str, old: Any, new: Any, schema: Any, changed: set[Path], removed: set[Path]) -> None:
    if old is new or old == new:
        return
    if not path or (_expands(name, old, schema) and _expands(name, new, schema)):
        for key, value in old.items():  # the fields both sides hold equal are skipped here, not in a call each
            other = new.get(key, _MISSING)
            if other is not value and other != value:
                _diff((*path, "f:" + key), key, value, other, child_schema(schema, key), changed, removed)
        for key, value in new.items():
            if key not in old:
                _diff((*path, "f:" + key), key, _MISSING, value, child_schema(schema, key), changed, removed)
        return
    if not isinstance(old, dict | list) and not isinstance(new, dict | list):  # a scalar set, changed or gone
        if new is _MISSING:
            removed.add(path)
        else:
            changed.add(path)
        return
    was: dict[Path, Any] = {}
    now: dict[Path, Any] = {}
    if old is not _MISSING:
        _walk(path, name, old, schema, was)
    if new is not _MISSING:
        _walk(path, name, new, schema, now)
    if not was:  # a field set anew (every field of a create): all of it changed
        changed.update(now)
        return
    changed.update(p for p, v in now.items() if was.get(p, _MISSING) is not v and was.get(p, _MISSING) != v)
    removed.update(was.keys() - now.keys())


def _walk(path: Path, name: str, value: Any, schema: Any, out: dict[Path, Any]) -> None:
    if isinstance(value, dict) and value and not (schema is None and name in ATOMIC_MAPS):
        for key, child in value.items():
            _walk((*path, "f:" + key), key, child, child_schema(schema, key), out)
        return
    if isinstance(value, list) and value:
        keys = list_keys(name, value, schema)
        if keys == "set":
            out.update(((*path, "v:" + json.dumps(v, separators=(",", ":"))), ITEM) for v in value)
            return
        if isinstance(keys, tuple):
            items = schema.get("items") if isinstance(schema, dict) else None
            for item in value:
                here = (*path, key_element(item, keys))
                out[here] = ITEM
                for key, child in item.items():
                    _walk((*here, "f:" + key), key, child, child_schema(items, key), out)
            return
    out[path] = value


def as_fields_v1(paths: set[Path]) -> dict[str, Any]:
    """Nest ``paths`` as fieldsV1: a path with members below it gets a ``.`` entry, first as kube writes it.
    In sorted order a path comes before the paths below it, so a node still empty when a later path passes
    through it is a member: its ``.`` goes in before its children."""
    root: dict[str, Any] = {}
    for path in sorted(paths):
        node = root
        for element in path[:-1]:
            child = node.get(element)
            if child is None:
                child = node[element] = {}
            elif not child:
                child["."] = {}
            node = child
        if path:
            node[path[-1]] = {}
    return {".": {}, **root} if root and () in paths else root


def from_fields_v1(tree: Any, prefix: Path = (), out: set[Path] | None = None) -> set[Path]:
    out = set() if out is None else out
    if not isinstance(tree, dict):
        return out
    for element, child in tree.items():
        if element == ".":
            out.add(prefix)
        elif isinstance(child, dict) and child:
            from_fields_v1(child, (*prefix, element), out)
        else:
            out.add((*prefix, element))
    return out


def owns_any(tree: Any, paths: set[Path]) -> bool:
    """Does ``from_fields_v1(tree)`` hold any of ``paths``? Looked up path by path, without building it."""
    for path in paths:
        node = tree
        for element in path[:-1]:
            node = node.get(element) if isinstance(node, dict) else None
            if not (isinstance(node, dict) and node):
                break
        else:
            if isinstance(node, dict) and path and path[-1] in node:
                last = node[path[-1]]
                if not (isinstance(last, dict) and last) or "." in last:
                    return True
    return False


def path_string(path: Path) -> str:
    """fieldpath.Path's String(): ``.spec.containers[name="web"].image``."""
    parts = []
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f":
            parts.append("." + rest)
        elif kind == "k":
            keys = json.loads(rest)
            parts.append("[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]")
        elif kind == "v":
            parts.append(f"[={rest}]")
        else:
            parts.append(f"[{rest}]")
    return "".join(parts)


def _step(value: Any, element: str) -> tuple[Any, Any]:
    """The container holding ``element`` in ``value`` and its key there (None when absent)."""
    kind, _, rest = element.partition(":")
    if kind == "f" and isinstance(value, dict):
        return (value, rest) if rest in value else (value, None)
    if isinstance(value, list):
        if kind == "k":
            wanted = json.loads(rest)
            for i, item in enumerate(value):
                if isinstance(item, dict) and all(item.get(k, _DEFAULTS.get(k)) == v for k, v in wanted.items()):
                    return value, i
        elif kind == "v":
            target = json.loads(rest)
            for i, item in enumerate(value):
                if item == target:
                    return value, i
    return value, None


def pick(obj: Any, path: Path) -> Any:
    """The value at ``path``, or a sentinel no value equals when it is absent."""
    value = obj
    for element in path:
        holder, at = _step(value, element)
        if at is None:
            return _MISSING
        value = holder[at]
    return value


def remove_path(obj: Any, path: Path) -> None:
    """Drop the value at ``path`` (in place); a map or list left empty by it stays, as kube leaves it."""
    value = obj
    for element in path[:-1]:
        holder, at = _step(value, element)
        if at is None:
            return
        value = holder[at]
    holder, at = _step(value, path[-1])
    if at is not None:
        del holder[at]
