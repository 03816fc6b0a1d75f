"""Server-side apply and the managedFields every write keeps, as kube-apiserver's fieldmanager does.

- ``application/apply-patch+yaml`` needs ``fieldManager`` (kube's 422 otherwise); ``force`` is only for it.
- An apply sets the fields of its configuration, merging list-maps by their keys; fields it applied
  before and no longer does are removed unless another manager owns them. A field another manager owns
  with a different value is a 409 naming the managers and fields as kube words it, unless ``force=true``,
  which takes the fields over.
- Create, update and patch record an ``Update`` entry for their manager (``fieldManager``, else the
  User-Agent up to its first ``/``, as kube): it gains the fields it changed, which others lose; fields
  the write removed leave every manager.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Sequence
from typing import Any

from ..apimachinery.errors import ApiError
from ..apimachinery.patch import APPLY_PATCH as APPLY
from ..apimachinery.resources import Resource
from ..wire._json import loads, note_floats
from ..wire._wire import Request, now_rfc3339
from ._fieldset import (
    ATOMIC_MAPS,
    Path,
    as_fields_v1,
    changes,
    child_schema,
    from_fields_v1,
    key_element,
    leaves,
    list_keys,
    owns_any,
    path_string,
    pick,
    remove_path,
)

__all__ = ["APPLY", "apply", "apply_request", "check_patch_options", "decode_apply", "is_apply", "manager_of",
           "track_update", "track_write"]



def _invalid_options(field: str, reason: str, why: str) -> ApiError:
    return ApiError.invalid_fields("meta.k8s.io", "PatchOptions", "", [(reason, field, why)])


@functools.lru_cache(maxsize=64)
def is_apply(content_type: str) -> bool:
    """Cached: a write asks it three times, and clients send the same few content types."""
    return content_type.split(";", 1)[0].strip().lower() == APPLY


def apply_request(req: Request, live: dict[str, Any] | None) -> dict[str, Any]:
    """The object an apply request makes of ``live`` (None: the apply creates it, named by the URL)."""
    applied = decode_apply(req.body)
    meta = applied.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if name and name != req.name:
        raise ApiError.bad_request(f"the name of the object ({name}) does not match the name on the URL ({req.name})")
    force = req.query.get("force") in ("true", "1")
    obj = apply(req.res, live, applied, req.query.get("fieldManager", ""), force, req.sub)
    obj.setdefault("metadata", {})["name"] = req.name
    return obj


def track_write(req: Request, old: dict[str, Any] | None, new: dict[str, Any]) -> None:
    """``track_update`` for a create, update or non-apply patch (an apply keeps its own entries)."""
    if not is_apply(req.content_type):
        track_update(req.res, old, new, manager_of(req.query, req.user_agent), req.sub)


def check_patch_options(content_type: str, query: Sequence[tuple[str, str]]) -> None:
    """ValidatePatchOptions: fieldManager is required for apply, force forbidden for other patches."""
    keys = {k for k, _ in query}
    manager = next((v for k, v in query if k == "fieldManager"), "")
    if not is_apply(content_type):
        if "force" in keys:
            why = "Forbidden: may not be specified for non-apply patch"
            raise _invalid_options("force", "FieldValueForbidden", why)
    elif not manager:
        raise _invalid_options("fieldManager", "FieldValueRequired", "Required value: is required for apply patch")
    if len(manager) > 128:
        raise _invalid_options("fieldManager", "FieldValueTooLong",
                               "Too long: may not be more than 128 bytes")


def manager_of(query: dict[str, str], user_agent: str) -> str:
    """The manager of a write: ``fieldManager``, else the User-Agent's product name as kube takes it."""
    if query.get("fieldManager"):
        return query["fieldManager"]
    return _agent_manager(user_agent)


@functools.lru_cache(maxsize=64)
def _agent_manager(user_agent: str) -> str:
    """Cached: a client sends the same User-Agent with every write, and this walked it character by character."""
    name = "".join(c for c in user_agent.split("/", 1)[0] if c.isprintable())
    return name.encode()[:128].decode(errors="ignore")


def decode_apply(body: bytes) -> dict[str, Any]:
    """An apply configuration is YAML (JSON being YAML); anything but an object is kube's 400."""
    try:
        doc = loads(body)
    except ValueError:
        import yaml  # type: ignore[import-untyped]  # PyYAML, a dependency of kubernetes; only for YAML bodies

        try:
            doc = yaml.load(body, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            note_floats(doc)
        except yaml.YAMLError as err:
            raise ApiError.bad_request(f"error decoding YAML: {err}") from None
    if not isinstance(doc, dict):
        raise ApiError.bad_request("the body of the request must be a YAML or JSON object")
    meta = doc.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise ApiError.bad_request("metadata.managedFields must be nil")
    return doc


def _entries(obj: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The managedFields of ``obj``, their times in kube's RFC 3339 form (clients send ``+00:00``)."""
    managed = ((obj or {}).get("metadata") or {}).get("managedFields")
    if not isinstance(managed, list):
        return []
    entries = [dict(e) for e in managed if isinstance(e, dict)]
    for entry in entries:
        when = entry.get("time")
        if isinstance(when, str) and when.endswith("+00:00"):
            entry["time"] = when[:-6].split(".", 1)[0] + "Z"
    return entries


def _owned(entry: dict[str, Any]) -> set[Path]:
    return from_fields_v1(entry.get("fieldsV1"))


def _entry(manager: str, operation: str, api_version: str, paths: set[Path], sub: str = "") -> dict[str, Any]:
    entry: dict[str, Any] = {"manager": manager, "operation": operation, "apiVersion": api_version,
                             "time": now_rfc3339(), "fieldsType": "FieldsV1", "fieldsV1": as_fields_v1(paths)}
    if sub:
        entry["subresource"] = sub
    return entry


def _store(obj: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    meta = obj.setdefault("metadata", {})
    kept = [e for e in entries if e.get("fieldsV1")]
    if kept:
        meta["managedFields"] = kept
    else:
        meta.pop("managedFields", None)


def _identifier(entry: dict[str, Any]) -> str:
    """BuildManagerIdentifier: the entry as JSON without its fields and time (and, for an applier, its
    apiVersion); kube sorts conflicting managers by it."""
    ident = {"manager": entry.get("manager"), "operation": entry.get("operation"),
             "apiVersion": entry.get("apiVersion") if entry.get("operation") != "Apply" else None,
             "subresource": entry.get("subresource")}
    return json.dumps({k: v for k, v in ident.items() if v}, separators=(",", ":"))


def _describe(entry: dict[str, Any]) -> str:
    """printManager of a manager identifier: Update managers are named with their apiVersion. The identifier
    carries no time, so kube never prints the 'at <time>' printManager has a branch for."""
    name = json.dumps(entry.get("manager", ""))
    if entry.get("subresource"):
        name += f" with subresource {json.dumps(entry['subresource'])}"
    if entry.get("operation") == "Update":
        name += f" using {entry.get('apiVersion', '')}"
    return name


def _conflict(conflicts: list[tuple[Path, dict[str, Any]]]) -> ApiError:
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {_describe(e)}", "field": path_string(p)}
              for p, e in conflicts]
    if len(conflicts) == 1:
        path, entry = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {_describe(entry)}: {path_string(path)}"
    else:
        by_manager: dict[str, tuple[str, list[str]]] = {}
        for path, entry in conflicts:
            by_manager.setdefault(_identifier(entry), (_describe(entry), []))[1].append(f"- {path_string(path)}")
        lines = []
        for ident in sorted(by_manager):
            name, paths = by_manager[ident]
            lines.append(f"conflicts with {name}:")
            lines.extend(paths)
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return ApiError(409, "Conflict", message, {"causes": causes})


def _fields(res: Resource, obj: dict[str, Any] | None, sub: str) -> dict[Path, Any]:
    """What a write through ``sub`` manages: status alone through /status, the rest (status aside for
    kinds with a status subresource) through the main resource."""
    if obj is None:
        return {}
    if sub == "status":
        return leaves({"status": obj["status"]}, res.schema) if obj.get("status") else {}
    return leaves(obj, res.schema, skip_status=res.has_status)


def apply(res: Resource, live: dict[str, Any] | None, applied: dict[str, Any], manager: str,
          force: bool, sub: str = "") -> dict[str, Any]:
    """The object ``manager``'s apply of ``applied`` makes of ``live`` (None: it creates one)."""
    mine = set(_fields(res, applied, sub))
    entries = _entries(live)
    own = next((e for e in entries if e.get("manager") == manager and e.get("operation") == "Apply"
                and e.get("subresource", "") == sub), None)
    conflicts = []
    for entry in entries:
        if entry is own:
            continue
        for path in sorted(_owned(entry) & mine):
            if not path[-1].startswith(("k:", "v:")) and pick(live, path) != pick(applied, path):
                conflicts.append((path, entry))
    if conflicts and not force:
        raise _conflict(conflicts)
    for path, entry in conflicts:  # forced: the fields change hands
        entry["fieldsV1"] = as_fields_v1(_owned(entry) - {path})
    others = set().union(*(_owned(e) for e in entries if e is not own))
    result = copy.deepcopy(live) if live is not None else {}
    gone: list[Path] = []
    for path in sorted((_owned(own) if own else set()) - mine, key=len):  # an item before its fields
        if not any(o[:len(path)] == path for o in others) and not any(path[:len(g)] == g for g in gone):
            remove_path(result, path)
            gone.append(path)
    result = dict(_merge(result, applied, "", res.schema))
    new_own = _entry(manager, "Apply", res.group_version, mine, sub)
    if own is not None and _owned(own) == mine:
        new_own["time"] = own.get("time", new_own["time"])
    _store(result, [new_own if e is own else e for e in entries] + ([] if own else [new_own]))
    return result


def _merge(live: Any, applied: Any, name: str, schema: Any) -> Any:
    """``applied`` over ``live``: maps field by field, list-maps item by key, sets by union."""
    if isinstance(applied, dict) and isinstance(live, dict) and not (schema is None and name in ATOMIC_MAPS):
        merged = dict(live)
        for key, value in applied.items():
            below = child_schema(schema, key)
            merged[key] = _merge(live[key], value, key, below) if key in live else copy.deepcopy(value)
        return merged
    if isinstance(applied, list) and isinstance(live, list):
        keys = list_keys(name, applied, schema)
        if keys == "set":
            return live + [copy.deepcopy(v) for v in applied if v not in live]
        if isinstance(keys, tuple) and all(isinstance(i, dict) for i in live):
            items = schema.get("items") if isinstance(schema, dict) else None
            out = list(live)
            index = {key_element(i, keys): n for n, i in enumerate(out)}
            for item in applied:
                at = index.get(key_element(item, keys))
                if at is None:
                    out.append(copy.deepcopy(item))
                else:
                    out[at] = _merge(out[at], item, "", items)
            return out
    return copy.deepcopy(applied)


def track_update(res: Resource, old: dict[str, Any] | None, new: dict[str, Any], manager: str,
                 sub: str = "") -> None:
    """Record a create, update or patch by ``manager`` in ``new``'s managedFields (in place)."""
    if sub not in ("", "status"):
        _store(new, _entries(old))
        return
    sent = new.get("metadata", {}).get("managedFields")
    entries = _entries(new) if sent not in (None, []) else _entries(old)
    if sent == [{}]:  # kube's way to clear them
        entries = []
    changed, removed = changes(_scope(old, sub), _scope(new, sub), res.schema,
                               skip_status=sub == "" and res.has_status)
    touched = changed | removed
    mine = None
    for entry in entries:
        if entry.get("manager") == manager and entry.get("operation") == "Update" and \
                entry.get("subresource", "") == sub:
            mine = entry
        elif touched and owns_any(entry.get("fieldsV1"), touched):
            entry["fieldsV1"] = as_fields_v1(_owned(entry) - touched)
    if mine is not None and not changed and owns_any(mine.get("fieldsV1"), removed):
        mine["fieldsV1"] = as_fields_v1(_owned(mine) - removed)
    elif changed:
        paths = ((_owned(mine) if mine else set()) | changed) - removed
        fresh = _entry(manager, "Update", res.group_version, paths, sub)
        entries = [fresh if e is mine else e for e in entries] + ([] if mine else [fresh])
    _store(new, entries)


def _scope(obj: dict[str, Any] | None, sub: str) -> dict[str, Any]:
    """What a write through ``sub`` manages (as ``_fields``): the object, or its status alone."""
    if obj is None:
        return {}
    if sub == "status":
        return {"status": obj["status"]} if obj.get("status") else {}
    return obj
