"""The three PATCH flavours kube accepts for built-in types: JSON merge, strategic merge, JSON patch.

Each function takes a fresh (caller-owned) document and may change it in place.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .errors import ApiError

__all__ = ["MERGE_KEYS", "apply_patch", "json_patch", "merge_patch", "patch_type", "strategic_merge_patch"]

# Lists that strategic merge patch merges element-wise, by field name -> merge key. kube keys these
# by Go type; a name table covers the fields our components patch.
MERGE_KEYS: dict[str, str] = {
    "conditions": "type",
    "containerStatuses": "name",
    "initContainerStatuses": "name",
    "ephemeralContainerStatuses": "name",
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
    "addresses": "type",
    "taints": "key",
    "ownerReferences": "uid",
    "imagePullSecrets": "name",
}
APPLY_PATCH = "application/apply-patch+yaml"  # server-side apply (``_apply``), not a patch function
# Lists of scalars that strategic merge patch treats as sets.
MERGE_SETS = frozenset({"finalizers"})


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = merge_patch(target.get(key), value)
    return target


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") or key == "$patch":
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            name = key.split("/", 1)[1]
            if isinstance(target.get(name), list) and isinstance(value, list):
                target[name] = [v for v in target[name] if v not in value]
            continue
        if value is None:
            target.pop(key, None)
        elif isinstance(value, list) and key in MERGE_KEYS and isinstance(target.get(key), list):
            target[key] = _merge_keyed(target[key], value, MERGE_KEYS[key])
        elif isinstance(value, list) and key in MERGE_SETS and isinstance(target.get(key), list):
            target[key] = target[key] + [v for v in value if v not in target[key]]
        else:
            merged = strategic_merge_patch(target.get(key), value)
            if merged is None:
                target.pop(key, None)
            else:
                target[key] = merged
    return target


def _merge_keyed(current: list[Any], patch: list[Any], key: str) -> list[Any]:
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [copy.deepcopy(p) for p in patch if not (isinstance(p, dict) and "$patch" in p)]
    result = list(current)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            result.append(copy.deepcopy(item))
            continue
        index = next((i for i, c in enumerate(result) if isinstance(c, dict) and c.get(key) == item[key]),
                     None)
        if item.get("$patch") == "delete":
            if index is not None:
                del result[index]
        elif index is None:
            result.append({k: copy.deepcopy(v) for k, v in item.items() if v is not None})
        else:
            result[index] = strategic_merge_patch(result[index], item)
    return result


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError.bad_request(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str]) -> Any:
    for part in parts[:-1]:
        if isinstance(doc, list):
            doc = doc[int(part)]
        elif isinstance(doc, dict):
            doc = doc[part]
        else:
            raise KeyError(part)
    return doc


def _get(doc: Any, parts: list[str]) -> Any:
    if not parts:
        return doc
    parent = _parent(doc, parts)
    return parent[int(parts[-1])] if isinstance(parent, list) else parent[parts[-1]]


def _remove(doc: Any, parts: list[str]) -> Any:
    parent = _parent(doc, parts)
    return parent.pop(int(parts[-1])) if isinstance(parent, list) else parent.pop(parts[-1])


def _add(doc: Any, parts: list[str], value: Any) -> Any:
    if not parts:
        return value
    parent = _parent(doc, parts)
    last = parts[-1]
    if isinstance(parent, list):
        index = len(parent) if last == "-" else int(last)
        if not 0 <= index <= len(parent):
            raise IndexError(last)
        parent.insert(index, value)
    elif isinstance(parent, dict):
        parent[last] = value
    else:
        raise KeyError(last)
    return doc


def _rejected() -> ApiError:
    """kube's answer to an operation that does not apply: NewGenericServerResponse's 422, with no detail."""
    return ApiError(422, "Invalid", "the server rejected our request due to an error in our request", {})


def json_patch(doc: Any, ops: Any) -> Any:
    """RFC 6902 operations; a failed ``test`` or a bad path is a 422 like kube's."""
    if not isinstance(ops, list):
        raise ApiError.bad_request("json patch must be a list of operations")
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise ApiError.bad_request(f"invalid json patch operation: {op!r}")
        parts = _pointer(op["path"])
        kind = op["op"]
        try:
            if kind == "add":
                doc = _add(doc, parts, copy.deepcopy(op.get("value")))
            elif kind == "remove":
                _remove(doc, parts)
            elif kind == "replace":
                parent = _parent(doc, parts) if parts else None
                if not isinstance(parent, dict):  # kube's json-patch v4 replaces a missing object key: adds it
                    _get(doc, parts)
                if isinstance(parent, list):
                    _remove(doc, parts)
                doc = _add(doc, parts, copy.deepcopy(op.get("value")))
            elif kind in ("move", "copy"):
                source = _pointer(op["from"])
                value = _remove(doc, source) if kind == "move" else copy.deepcopy(_get(doc, source))
                doc = _add(doc, parts, value)
            elif kind == "test":
                if _get(doc, parts) != op.get("value"):
                    raise _rejected()
            else:
                raise ApiError.bad_request(f"unknown json patch operation {kind!r}")
        except (KeyError, IndexError, ValueError, TypeError):
            raise _rejected() from None
    return doc


_PATCHERS: dict[str, Callable[[Any, Any], Any]] = {
    "application/json-patch+json": json_patch,
    "application/merge-patch+json": merge_patch,
    "application/strategic-merge-patch+json": strategic_merge_patch,
}


def patch_type(content_type: str) -> str:
    """The patch flavour of a Content-Type, or 415: kube refuses it before it reads anything else."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind not in _PATCHERS and kind != APPLY_PATCH:
        raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                       "accepted media types include: " + ", ".join((*_PATCHERS, APPLY_PATCH)))
    return kind


def apply_patch(content_type: str, doc: dict[str, Any], patch: Any) -> Any:
    return _PATCHERS[patch_type(content_type)](doc, patch)
