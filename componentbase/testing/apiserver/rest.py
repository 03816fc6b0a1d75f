"""Object semantics behind the REST verbs: metadata bookkeeping, conflicts, status separation,
pod binding and graceful deletion, as the components under test expect kube-apiserver to behave."""

from __future__ import annotations

import base64
import json
import random
import uuid
from typing import Any

from ._listing import list_reply, selectors_of
from ._wire import Reply, Request, decode_json, decode_object, now_rfc3339
from .errors import ApiError, status_body
from .patch import apply_patch
from .resources import RESOURCES, Resource, must
from .selectors import Predicate
from .store import Entry, Store, encode

__all__ = ["SYSTEM_NAMESPACES", "Reply", "Request", "Rest", "decode_json", "now_rfc3339", "selectors_of"]

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_UNDELETABLE = frozenset({"default", "kube-system", "kube-public"})
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_NAMESPACES = must("", "v1", "namespaces")
_PODS = must("", "v1", "pods")
# metadata fields a client cannot change with an update or patch
_IMMUTABLE_META = ("uid", "creationTimestamp", "name", "namespace", "deletionTimestamp",
                   "deletionGracePeriodSeconds")


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _content(obj: dict[str, Any]) -> dict[str, Any]:
    """What ``generation`` tracks: everything but metadata and status."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "kind", "apiVersion")}


class Rest:
    """Verb handlers; every read-check-write runs under the store's lock.

    A dry run (``dryRun=All``) takes the same path as the real request, admission, defaulting and
    conflicts included, and only the last step differs: ``_write`` and ``_remove`` leave the store, its
    resourceVersion counter and the watches alone and hand back what would have been stored, as
    kube-apiserver's dry-run storage (registry/generic/registry/dryrun.go) does.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._random = random.Random()
        with store.cond:
            for name in SYSTEM_NAMESPACES:
                self._create(_NAMESPACES, "", {"metadata": {"name": name}}, dry=False)

    # --- writing -------------------------------------------------------------------------------

    def _write(self, res: Resource, namespace: str, obj: dict[str, Any], *, dry: bool) -> Entry:
        """Store ``obj`` (whose metadata the caller owns) under a fresh resourceVersion. A dry run keeps
        the resourceVersion ``obj`` came with: the stored one on update, none (or the client's) on create."""
        if dry:
            return Entry(obj, self.store.rv)
        rv = self.store.next_rv()
        obj["metadata"]["resourceVersion"] = str(rv)
        return self.store.put(res.key, namespace, obj["metadata"]["name"], obj, rv)

    def _remove(self, res: Resource, namespace: str, cur: Entry, *, dry: bool) -> Entry:
        """Drop ``cur``; a dry run answers with the object as stored, as kube's dry-run delete does."""
        if dry:
            return cur
        rv = self.store.next_rv()
        last = dict(cur.obj)
        last["metadata"] = dict(_meta(cur.obj), resourceVersion=str(rv))
        return self.store.remove(res.key, namespace, last["metadata"]["name"], last, rv)

    def _shape(self, res: Resource, obj: dict[str, Any]) -> dict[str, Any]:
        """A new top-level dict with kind/apiVersion first, as kube prints objects."""
        shaped = {"kind": res.kind, "apiVersion": res.group_version}
        shaped.update((k, v) for k, v in obj.items() if k not in ("kind", "apiVersion"))
        return shaped

    def _commit(self, req: Request, cur: Entry, new: dict[str, Any]) -> Entry:
        """Finish an update: keep immutable metadata, bump generation, drop no-ops, finalize."""
        res, dry = req.res, req.options.dry_run
        old = cur.obj
        old_meta = _meta(old)
        obj = self._shape(res, new)
        meta = dict(_meta(new))
        for key in _IMMUTABLE_META:
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        if "generation" in old_meta:
            changed = _content(old) != _content(obj)
            meta["generation"] = old_meta["generation"] + (1 if changed else 0)
        meta["resourceVersion"] = old_meta.get("resourceVersion")
        obj["metadata"] = meta
        if obj == old:
            return cur
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and not meta.get(
            "deletionGracePeriodSeconds"
        ):
            # the last finalizer is gone: the object goes, and kube answers with it as updated
            self._remove(res, req.namespace, cur, dry=dry)
            return Entry(obj, self.store.rv)
        return self._write(res, req.namespace, obj, dry=dry)

    # --- verbs ---------------------------------------------------------------------------------

    def get(self, req: Request) -> Reply:
        entry = self.store.get(req.res.key, req.namespace, req.name)
        if entry is None:
            raise ApiError.not_found(req.res, req.name)
        return Reply(200, entry.raw)

    def create(self, req: Request) -> Reply:
        obj = decode_object(req.body)
        with self.store.cond:
            entry = self._create(req.res, req.namespace, obj, dry=req.options.dry_run)
        return Reply(201, entry.raw)

    def _create(self, res: Resource, namespace: str, obj: dict[str, Any], *, dry: bool) -> Entry:
        meta = dict(_meta(obj))
        if res.namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise ApiError.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = namespace
            if self.store.get(_NAMESPACES.key, "", namespace) is None:
                raise ApiError.not_found(_NAMESPACES, namespace)
        else:
            meta.pop("namespace", None)
        name = meta.get("name") or ""
        if not name:
            prefix = meta.get("generateName") or ""
            if not prefix:
                why = "Required value: name or generateName is required"
                raise ApiError.invalid(res, "", "metadata.name", why)
            name = self._generate(res, namespace, prefix)
        if self.store.get(res.key, namespace, name) is not None:
            raise ApiError.already_exists(res, name)
        meta["name"] = name
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        # kube's dry-run create skips the storage check that refuses a client-set resourceVersion
        # and echoes it; a real create here drops it.
        for key in ("deletionTimestamp", "deletionGracePeriodSeconds", *(() if dry else ("resourceVersion",))):
            meta.pop(key, None)
        obj = self._shape(res, obj)
        obj["metadata"] = meta
        if "spec" in obj:
            meta["generation"] = 1
        _defaults(res, obj)
        return self._write(res, namespace, obj, dry=dry)

    def _generate(self, res: Resource, namespace: str, prefix: str) -> str:
        """A free name for ``prefix``; nothing is reserved, so a dry run's name may be handed out again."""
        while True:
            name = prefix + "".join(self._random.choice(_SUFFIX_ALPHABET) for _ in range(5))
            if self.store.get(res.key, namespace, name) is None:
                return name

    def update(self, req: Request) -> Reply:
        obj = decode_object(req.body)
        meta = _meta(obj)
        if meta.get("name") and meta["name"] != req.name:
            raise ApiError.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL ({req.name})"
            )
        with self.store.cond:
            cur = self._current(req)
            wanted = meta.get("resourceVersion")
            if wanted and wanted != _meta(cur.obj).get("resourceVersion"):
                raise ApiError.modified(req.res, req.name)
            entry = self._commit(req, cur, _separate(req.res, cur.obj, obj, req.sub))
        return Reply(200, entry.raw)

    def patch(self, req: Request) -> Reply:
        patch = decode_json(req.body)
        with self.store.cond:
            cur = self._current(req)
            doc = apply_patch(req.content_type, json.loads(cur.raw), patch)
            if not isinstance(doc, dict):
                raise ApiError(422, "Invalid", "the patch result is not an object")
            rv = _meta(doc).get("resourceVersion")
            if rv and rv != _meta(cur.obj).get("resourceVersion"):
                raise ApiError.modified(req.res, req.name)
            entry = self._commit(req, cur, _separate(req.res, cur.obj, doc, req.sub))
        return Reply(200, entry.raw)

    def _current(self, req: Request) -> Entry:
        cur = self.store.get(req.res.key, req.namespace, req.name)
        if cur is None:
            raise ApiError.not_found(req.res, req.name)
        return cur

    def list(self, req: Request, pred: Predicate | None) -> Reply:
        return list_reply(self.store, req, pred)

    def delete(self, req: Request) -> Reply:
        with self.store.cond:
            cur = self._current(req)
            _check_preconditions(req, cur)
            if req.res.key == "namespaces":
                return Reply(200, self._delete_namespace(cur, dry=req.options.dry_run).raw)
            return Reply(200, self._delete(req, req.namespace, cur).raw)

    def _delete(self, req: Request, namespace: str, cur: Entry) -> Entry:
        res, grace, dry = req.res, req.options.grace, req.options.dry_run
        meta = _meta(cur.obj)
        if res.key == "pods":
            spec = cur.obj.get("spec") or {}
            phase = (cur.obj.get("status") or {}).get("phase")
            if grace is None:
                grace = int(spec.get("terminationGracePeriodSeconds", 30))
            if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
                grace = 0
        grace = max(0, grace or 0) if res.key == "pods" else 0
        if grace == 0 and not meta.get("finalizers"):
            return self._remove(res, namespace, cur, dry=dry)
        if meta.get("deletionTimestamp") and meta.get("deletionGracePeriodSeconds", 0) <= grace:
            return cur
        obj = dict(cur.obj)
        obj["metadata"] = dict(meta, deletionTimestamp=now_rfc3339(grace), deletionGracePeriodSeconds=grace)
        return self._write(res, namespace, obj, dry=dry)

    def _delete_namespace(self, cur: Entry, *, dry: bool) -> Entry:
        name = cur.obj["metadata"]["name"]
        if name in _UNDELETABLE:
            message = f'namespaces "{name}" is forbidden: this namespace may not be deleted'
            raise ApiError(403, "Forbidden", message)
        if not dry:  # the namespace controller's work, which a dry run never starts
            for res in RESOURCES:
                if res.namespaced and res.stored:
                    for entry in self.store.items(res.key, name):
                        self._remove(res, name, entry, dry=False)
        return self._remove(_NAMESPACES, "", cur, dry=dry)

    def delete_collection(self, req: Request, pred: Predicate | None) -> Reply:
        with self.store.cond:
            for entry in self.store.items(req.res.key, req.namespace or None):
                if pred is None or pred(entry.obj):
                    ns = entry.obj["metadata"].get("namespace", "")
                    if req.res.key == "namespaces":
                        if entry.obj["metadata"]["name"] not in _UNDELETABLE:
                            self._delete_namespace(entry, dry=req.options.dry_run)
                    else:
                        self._delete(req, ns, entry)
        return Reply(200, encode(status_body(200, "", "")))

    def bind(self, req: Request) -> Reply:
        """Pod binding: set spec.nodeName once, as the scheduler's POST .../binding does."""
        binding = decode_object(req.body)
        name = req.name or _meta(binding).get("name") or ""
        node = (binding.get("target") or {}).get("name")
        pods = _PODS
        if not node:
            raise ApiError.invalid(pods, name, "target.name", "Required value")
        with self.store.cond:
            cur = self.store.get("pods", req.namespace, name)
            if cur is None:
                raise ApiError.not_found(pods, name)
            spec = cur.obj.get("spec") or {}
            meta = _meta(cur.obj)
            if spec.get("nodeName"):
                why = f'pod {name} is already assigned to node "{spec["nodeName"]}"'
                raise _binding_conflict(name, why)
            if meta.get("deletionTimestamp"):
                why = f"pod {name} is being deleted, cannot be assigned to a host"
                raise _binding_conflict(name, why)
            obj = dict(cur.obj)
            obj["spec"] = dict(spec, nodeName=node)
            status = dict(cur.obj.get("status") or {})
            conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
            conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                               "lastTransitionTime": now_rfc3339()})
            status["conditions"] = conditions
            obj["status"] = status
            new_meta = dict(meta)
            extra = _meta(binding).get("annotations")
            if isinstance(extra, dict):
                new_meta["annotations"] = dict(meta.get("annotations") or {}, **extra)
            obj["metadata"] = new_meta
            self._write(pods, req.namespace, obj, dry=req.options.dry_run)
        return Reply(201, encode(status_body(201, "", "")))


def _separate(res: Resource, old: dict[str, Any], new: dict[str, Any], sub: str) -> dict[str, Any]:
    """Status writes keep everything but status; main-resource writes keep the old status."""
    if sub == "status":
        merged = dict(old)
        if "status" in new:
            merged["status"] = new["status"]
        else:
            merged.pop("status", None)
        return merged
    if res.has_status:
        merged = dict(new)
        if "status" in old:
            merged["status"] = old["status"]
        else:
            merged.pop("status", None)
        return merged
    return new


def _defaults(res: Resource, obj: dict[str, Any]) -> None:
    """The few defaults components rely on; kube fills in many more."""
    if res.key == "pods":
        spec = dict(obj.get("spec") or {})
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("dnsPolicy", "ClusterFirst")
        obj["spec"] = spec
        obj["status"] = {"phase": "Pending"}
    elif res.key == "namespaces":
        obj["status"] = {"phase": "Active"}
    elif res.key == "secrets" and isinstance(obj.get("stringData"), dict):
        data = dict(obj.get("data") or {})
        for k, v in obj.pop("stringData").items():
            data[k] = base64.b64encode(str(v).encode()).decode()
        obj["data"] = data


def _binding_conflict(name: str, why: str) -> ApiError:
    message = f'Operation cannot be fulfilled on pods/binding "{name}": {why}'
    return ApiError(409, "Conflict", message, {"name": name, "kind": "pods/binding"})


def _check_preconditions(req: Request, cur: Entry) -> None:
    pre = req.options.preconditions
    if not pre:
        return
    meta = _meta(cur.obj)
    for key, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
        if pre.get(key) and pre[key] != meta.get(key):
            message = (f"Precondition failed: {label} in precondition: {pre[key]}, "
                       f"{label} in object meta: {meta.get(key)}")
            raise ApiError.conflict(req.res, req.name, message)
