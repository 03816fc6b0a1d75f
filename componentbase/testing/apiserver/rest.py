"""Object semantics behind the REST verbs: metadata bookkeeping, conflicts, status separation,
pod binding and graceful deletion, as the components under test expect kube-apiserver to behave."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

from .admission._defaults import apply_defaults
from .admission._immutable import prepare_update, update_errors
from .admission._policies import PolicyAdmission
from .admission._priority import admit_priority
from .admission._validation import raise_invalid, validate
from .admission._webhooks import WebhookAdmission
from .apimachinery.errors import ApiError, status_body
from .apimachinery.patch import apply_patch
from .apimachinery.resources import CREATE_ON_UPDATE, Registry, Resource
from .apimachinery.selectors import Predicate
from .controllers._gc import Collector
from .kinds import _schema
from .kinds._crd import CRD_KEY, Crds
from .registry import _pods
from .registry._apply import apply_request, is_apply, track_write
from .registry._deletion import (
    IMMORTAL_NAMESPACES,
    check_new_finalizers,
    check_preconditions,
    delete,
    delete_namespace,
    done_deleting,
    refuse_in_terminating,
)
from .registry._subresources import (
    merge_subresource,
    scale_of,
    with_replicas,
)
from .storage._convert import to_storage, view
from .storage._listing import list_reply, selectors_of
from .storage._rv import refuse_resource_version_on_create
from .storage.store import Entry, Store, encode
from .wire._json import loads
from .wire._wire import Reply, Request, decode_json, decode_object, now_rfc3339

__all__ = ["SYSTEM_NAMESPACES", "Reply", "Request", "Rest", "decode_json", "now_rfc3339", "selectors_of"]

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
# metadata fields a client cannot change with an update or patch
_IMMUTABLE_META = ("uid", "creationTimestamp", "name", "namespace", "deletionTimestamp",
                   "deletionGracePeriodSeconds")


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _content(obj: dict[str, Any], res: Resource) -> dict[str, Any]:
    """What ``generation`` tracks: everything but metadata, and status where a subresource owns it (a
    custom resource without one counts its status, as kube's customresource strategy does)."""
    skip = ("metadata", "kind", "apiVersion") + (("status",) if res.schema is None or res.has_status else ())
    return {k: v for k, v in obj.items() if k not in skip}


class Rest:
    """Verb handlers; every read-check-write runs under the store's lock.

    A dry run (``dryRun=All``) takes the same path as the real request, admission, defaulting and
    conflicts included, and only the last step differs: ``_write`` and ``_remove`` leave the store, its
    resourceVersion counter and the watches alone and hand back what would have been stored, as
    kube-apiserver's dry-run storage (registry/generic/registry/dryrun.go) does.
    """

    def __init__(self, store: Store, registry: Registry, issuer: str = "https://kubernetes.default.svc",
                 garbage_collection: bool = True) -> None:
        self.store = store
        self.registry = registry
        self.garbage_collection = garbage_collection
        self.lifecycle = Collector(self)
        self.webhooks = WebhookAdmission(store, registry)  # admission webhooks; conversion webhooks share its client
        self.crds = Crds(registry, self.webhooks.client)
        self.issuer = issuer
        self.sign_token: Callable[[str], str] | None = None  # set when the server authenticates SA tokens
        self._random = random.Random()
        self._namespaces = registry.must("", "v1", "namespaces")
        self._pods = registry.must("", "v1", "pods")
        with store.cond:
            for name in SYSTEM_NAMESPACES:
                self._create(self._namespaces, "", {"metadata": {"name": name}}, dry=False)

    # --- writing -------------------------------------------------------------------------------

    def _write(self, res: Resource, namespace: str, obj: dict[str, Any], *, dry: bool) -> Entry:
        """Store ``obj`` (whose metadata the caller owns) under a fresh resourceVersion. A dry run keeps
        the resourceVersion ``obj`` came with: the stored one on update, none (or the client's) on create."""
        if dry:
            return Entry(obj, self.store.rv)
        rv = self.store.next_rv()
        obj["metadata"]["resourceVersion"] = str(rv)
        entry = self.store.put(res.bucket, namespace, obj["metadata"]["name"], obj, rv)
        if res.key == CRD_KEY:
            self.crds.sync(obj)
        self.lifecycle.written(res, entry)
        return entry

    def _remove(self, res: Resource, namespace: str, cur: Entry, *, dry: bool) -> Entry:
        """Drop ``cur``; a dry run answers with the object as stored, as kube's dry-run delete does."""
        if dry:
            return cur
        if res.key == CRD_KEY:  # the CRD finalizer's work: its objects go first, then its endpoints
            served = self.crds.bucket(cur.obj)
            if served is not None:
                for entry in self.store.items(served.bucket, None):
                    self._remove(served, entry.obj["metadata"].get("namespace", ""), entry, dry=False)
            self.crds.forget(cur.obj)
        rv = self.store.next_rv()
        last = dict(cur.obj)
        last["metadata"] = dict(_meta(cur.obj), resourceVersion=str(rv))
        gone = self.store.remove(res.bucket, namespace, last["metadata"]["name"], last, rv)
        self.lifecycle.removed(res, gone)
        return gone

    def settle(self) -> None:
        """Run the lifecycle work the last writes caused (``_gc``); the HTTP layer calls it after
        every request, before answering."""
        if self.lifecycle.busy:  # a read causes none: skip the lock
            with self.store.cond:
                self.lifecycle.settle()

    def _shape(self, res: Resource, obj: dict[str, Any]) -> dict[str, Any]:
        """A new top-level dict with kind/apiVersion first, as kube prints objects."""
        shaped = {"kind": res.kind, "apiVersion": res.group_version}
        shaped.update((k, v) for k, v in obj.items() if k not in ("kind", "apiVersion"))
        return shaped

    def _admit(self, res: Resource, obj: dict[str, Any], old: dict[str, Any] | None,
               req: Request | None = None) -> dict[str, Any]:
        """Mutating webhooks, then defaulting and validation in the request's version (a CRD version's schema
        for custom resources, kube's defaulters for built-ins, the CRD checks for CRDs), then validating ones."""
        obj = self.webhooks.mutate(req, obj, old)
        if res.schema is not None:
            obj, errors = _schema.admit(res.schema, obj, old, req.warnings if req is not None else None)
            if errors:
                raise ApiError.invalid_fields(res.group, res.kind, _meta(obj).get("name", ""), errors)
        else:
            apply_defaults(res.key, obj, creating=old is None)
        raise_invalid(res, _meta(obj).get("name", ""), (
            update_errors(res, obj, old) if old is not None else []) + validate(res, obj))
        if res.key == CRD_KEY:
            obj = self.crds.admit(obj, old)
        PolicyAdmission(self.store, self.registry).admit(req, res, obj, old)  # before the validating webhooks
        return self.webhooks.validate(req, obj, old)

    def _commit(self, req: Request, cur: Entry, new: dict[str, Any]) -> Entry:
        """Finish an update of ``cur`` (stored) to ``new`` (in the request's version): keep immutable
        metadata, default and validate, bump generation, drop no-ops, finalize."""
        res, dry = req.res, req.options.dry_run
        old = view(res, cur).obj
        old_meta = _meta(old)
        new = prepare_update(res, new, old)
        obj = self._shape(res, new)
        meta = dict(_meta(new))
        for key in _IMMUTABLE_META:
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        meta["resourceVersion"] = old_meta.get("resourceVersion")
        obj["metadata"] = meta
        obj = self._admit(res, obj, old, req)
        track_write(req, old, obj)
        check_new_finalizers(res, old, obj)
        meta = obj["metadata"]
        if "generation" in old_meta:
            changed = _content(old, res) != _content(obj, res)
            meta["generation"] = old_meta["generation"] + (1 if changed else 0)
        if obj == old:
            return cur
        obj = to_storage(res, obj)
        if done_deleting(res, obj):
            # the last finalizer is gone: the object goes, and kube answers with it as updated
            self._remove(res, req.namespace, cur, dry=dry)
            return Entry(obj, self.store.rv)
        return self._write(res, req.namespace, obj, dry=dry)

    # --- verbs ---------------------------------------------------------------------------------

    def get(self, req: Request) -> Reply:
        entry = view(req.res, self._current(req))
        if req.sub == "scale":
            return Reply(200, encode(scale_of(req.res, entry.obj)))
        return Reply(200, entry.raw)

    def create(self, req: Request) -> Reply:
        obj = decode_object(req.body)
        with self.store.cond:
            entry = self._create(req.res, req.namespace, obj, dry=req.options.dry_run, req=req)
        return Reply(201, view(req.res, entry).raw)

    def _create(self, res: Resource, namespace: str, obj: dict[str, Any], *, dry: bool,
                req: Request | None = None) -> Entry:
        meta = dict(_meta(obj))
        if res.namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise ApiError.bad_request("the namespace of the provided object does not match the namespace sent "
                                           "on the request")
            meta["namespace"] = namespace
            if self.store.get(self._namespaces.bucket, "", namespace) is None:
                raise ApiError.not_found(self._namespaces, namespace)
            refuse_in_terminating(self, res, namespace, meta.get("name") or meta.get("generateName") or "")
        else:
            meta.pop("namespace", None)
        admit_priority(self, res, meta.get("name") or "", obj)
        name = meta.get("name") or ""
        if not name:
            prefix = meta.get("generateName") or ""
            if not prefix:
                why = "Required value: name or generateName is required"
                raise ApiError.invalid(res, "", "metadata.name", why)
            name = self._generate(res, namespace, prefix)
        if not dry:
            refuse_resource_version_on_create(meta)
        if self.store.get(res.bucket, namespace, name) is not None:
            raise ApiError.already_exists(res, name)
        meta["name"] = name
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        # A dry run skips that storage check and echoes the client's resourceVersion; a real create drops one.
        for key in ("deletionTimestamp", "deletionGracePeriodSeconds", *(() if dry else ("resourceVersion",))):
            meta.pop(key, None)
        obj = self._shape(res, obj)
        obj["metadata"] = meta
        if "spec" in obj or res.schema is not None:
            meta["generation"] = 1
        if res.schema is not None and res.has_status:
            obj.pop("status", None)  # a custom resource's status is only written through /status
        obj = self._admit(res, obj, None, req)
        if req is not None:
            track_write(req, None, obj)
        return self._write(res, namespace, to_storage(res, obj), dry=dry)

    def _generate(self, res: Resource, namespace: str, prefix: str) -> str:
        """A free name for ``prefix``; nothing is reserved, so a dry run's name may be handed out again."""
        while True:
            name = prefix + "".join(self._random.choice(_SUFFIX_ALPHABET) for _ in range(5))
            if self.store.get(res.bucket, namespace, name) is None:
                return name

    def update(self, req: Request) -> Reply:
        obj = decode_object(req.body)
        meta = _meta(obj)
        if meta.get("name") and meta["name"] != req.name:
            raise ApiError.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL "
                                       f"({req.name})")
        with self.store.cond:
            if self.creates_on_update(req.res, req.namespace, req.name, req.sub):
                obj["metadata"] = {k: v for k, v in meta.items() if k != "resourceVersion"} | {"name": req.name}
                return Reply(201, view(req.res, self._create(req.res, req.namespace, obj, dry=req.options.dry_run,
                                                             req=req)).raw)
            return self._replace(req, self._current(req), obj)

    def patch(self, req: Request) -> Reply:
        if is_apply(req.content_type):
            return self._apply(req)
        patch = decode_json(req.body)
        with self.store.cond:
            cur = self._current(req)
            old = view(req.res, cur).obj
            target = scale_of(req.res, old) if req.sub == "scale" else loads(view(req.res, cur).raw)
            doc = apply_patch(req.content_type, target, patch)
            if not isinstance(doc, dict):
                raise ApiError(422, "Invalid", "the patch result is not an object")
            return self._replace(req, cur, doc)

    def _apply(self, req: Request) -> Reply:
        """Server-side apply (``_apply``); applying to an object that does not exist creates it."""
        with self.store.cond:
            cur = self.store.get(req.res.bucket, req.namespace, req.name)
            if cur is None and not req.sub:
                entry = self._create(req.res, req.namespace, apply_request(req, None), dry=req.options.dry_run,
                                     req=req)
                return Reply(201, view(req.res, entry).raw)
            cur = self._current(req)
            return self._replace(req, cur, apply_request(req, loads(view(req.res, cur).raw)))

    def _replace(self, req: Request, cur: Entry, new: dict[str, Any]) -> Reply:
        """Update ``cur`` to ``new``, the body of a PUT or a patched document, through ``req.sub``."""
        old = view(req.res, cur).obj
        if req.sub == "scale":
            entry = self._commit(req, cur, with_replicas(req.res, old, new))
            return Reply(200, encode(scale_of(req.res, view(req.res, entry).obj)))
        wanted = _meta(new).get("resourceVersion")
        if wanted and wanted != _meta(old).get("resourceVersion"):
            raise ApiError.modified(req.res, req.name)
        entry = self._commit(req, cur, merge_subresource(req.res, old, new, req.sub))
        return Reply(200, view(req.res, entry).raw)

    def creates_on_update(self, res: Resource, namespace: str, name: str, sub: str) -> bool:
        """A PUT of this object would create it: its kind has kube's AllowCreateOnUpdate and it does not exist."""
        return (res.group, res.kind) in CREATE_ON_UPDATE and not sub and self.store.get(res.bucket, namespace,
                                                                                         name) is None

    def _current(self, req: Request) -> Entry:
        if (cur := self.store.get(req.res.bucket, req.namespace, req.name)) is None:
            raise ApiError.not_found(req.res, req.name)
        return cur

    def list(self, req: Request, pred: Predicate | None) -> Reply:
        return list_reply(self.store, req, pred)

    def delete(self, req: Request) -> Reply:
        with self.store.cond:
            cur = self._current(req)
            check_preconditions(req, cur)
            if req.res.key == "namespaces":
                return Reply(200, delete_namespace(self, req, cur).raw)
            entry = self._delete(req, req.namespace, cur)
            # kube answers 202 only to the deprecated orphanDependents=false, when the object stays for now
            waits = req.options.orphan_dependents is False and not req.options.dry_run and \
                self.store.get(req.res.bucket, req.namespace, req.name) is not None
            return Reply(202 if waits else 200, view(req.res, entry).raw)

    def _delete(self, req: Request, namespace: str, cur: Entry) -> Entry:
        policies = PolicyAdmission(self.store, self.registry).deleting  # after the mutating webhooks, as kube orders
        self.webhooks.deleting(req, namespace, view(req.res, cur).obj, policies)
        return delete(self, req, namespace, cur)

    def delete_collection(self, req: Request, pred: Predicate | None) -> Reply:
        with self.store.cond:
            for entry in self.store.items(req.res.bucket, req.namespace or None):
                if pred is None or pred(entry.obj):
                    ns = entry.obj["metadata"].get("namespace", "")
                    if req.res.key == "namespaces":
                        if entry.obj["metadata"]["name"] not in IMMORTAL_NAMESPACES:
                            delete_namespace(self, req, entry)
                    else:
                        self._delete(req, ns, entry)
        return Reply(200, encode(status_body(200, "", "")))

    def bind(self, req: Request) -> Reply:
        return _pods.bind(self, req)

    def evict(self, req: Request) -> Reply:
        return _pods.evict(self, req)

    def token(self, req: Request) -> Reply:
        return _pods.token(self, req)
