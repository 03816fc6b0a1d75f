"""The controllers kube-controller-manager runs for object lifecycle: the garbage collector
(pkg/controller/garbagecollector), the namespace controller (pkg/controller/namespace/deletion) and the
ClusterRole aggregation controller (``_aggregation``).

They run synchronously, not as a background loop: every write and removal notes the work it causes
(``written``, ``removed``), and ``settle`` does that work, under the store's lock, before the request
that caused it is answered. A test then sees the end state as soon as its DELETE returns (dependents
gone, a namespace emptied and removed, or the finalizer that holds them), with no polling and no
thread to stop with the server, while watches still see kube's events in kube's order: the owner's
MODIFIED (deletionTimestamp, GC finalizer) before its dependents' changes, DELETED last. What kube
does later still happens later here: a bound pod waits for its kubelet, a finalizer for its controller.
"""

from __future__ import annotations

from typing import Any

from ..apimachinery.resources import Resource
from ..registry._deletion import FOREGROUND, ORPHAN, Deleter, delete, done_deleting
from ..storage.store import Entry
from ..wire._wire import Options, Request
from ._aggregation import CLUSTER_ROLES, aggregate_cluster_roles
from ._namespaces import sweep

__all__ = ["Collector"]

Key = tuple[str, str, str]  # bucket, namespace, name


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _refs(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in _meta(obj).get("ownerReferences") or () if isinstance(r, dict) and r.get("uid")]


class Collector:
    """Pending lifecycle work and the owner index the garbage collector's graph keeps.

    Call every method holding the store's lock. With ``rest.garbage_collection`` off only the
    namespace controller runs, so ownerReferences are left dangling (as with GC off in kube).
    """

    def __init__(self, rest: Deleter) -> None:
        self._rest = rest
        self._pending: dict[tuple[str, Key], None] = {}  # an ordered set: each piece of work once
        self._owners: dict[Key, list[dict[str, Any]]] = {}  # dependent -> its ownerReferences
        self._dependents: dict[str, set[Key]] = {}  # owner uid -> dependents
        self._kinds: tuple[int, dict[tuple[str, str], Resource], dict[str, Resource]] = (-1, {}, {})

    # --- noting work -------------------------------------------------------------------------

    def written(self, res: Resource, entry: Entry) -> None:
        meta = _meta(entry.obj)
        key = (res.bucket, meta.get("namespace", ""), meta.get("name", ""))
        if res.key == "namespaces" and meta.get("deletionTimestamp"):
            self._pending[("namespace", ("", "", key[2]))] = None
        if res.key == CLUSTER_ROLES:
            self._pending[("aggregate", ("", "", ""))] = None
        if not self._rest.garbage_collection:
            return
        refs = _refs(entry.obj)
        old = self._owners.get(key, [])
        if refs != old:
            self._index(key, old, refs)
            for ref in old:
                self._note_owner(ref, key[1])
        if refs:
            self._pending[("dependent", key)] = None
        if meta.get("deletionTimestamp") and {ORPHAN, FOREGROUND} & set(meta.get("finalizers") or ()):
            self._pending[("owner", key)] = None

    def removed(self, res: Resource, entry: Entry) -> None:
        meta = _meta(entry.obj)
        key = (res.bucket, meta.get("namespace", ""), meta.get("name", ""))
        if key[1]:
            self._pending[("namespace", ("", "", key[1]))] = None
        if res.key == CLUSTER_ROLES:
            self._pending[("aggregate", ("", "", ""))] = None
        if not self._rest.garbage_collection:
            return
        for dep in self._dependents.pop(str(meta.get("uid")), ()):
            self._pending[("dependent", dep)] = None
        old = self._owners.get(key, [])
        self._index(key, old, [])
        for ref in old:
            self._note_owner(ref, key[1])

    def _index(self, key: Key, old: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
        for ref in old:
            deps = self._dependents.get(ref["uid"])
            if deps is not None:
                deps.discard(key)
                if not deps:
                    del self._dependents[ref["uid"]]
        for ref in new:
            self._dependents.setdefault(ref["uid"], set()).add(key)
        if new:
            self._owners[key] = new
        else:
            self._owners.pop(key, None)

    def _note_owner(self, ref: dict[str, Any], namespace: str) -> None:
        res = self._resolve(ref)
        if res is not None:
            self._pending[("owner", (res.bucket, namespace if res.namespaced else "", ref.get("name", "")))] = None

    # --- doing it ----------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """Whether work is pending; safe to ask without the lock (a stale answer only delays it to the
        next request)."""
        return bool(self._pending)

    def settle(self) -> None:
        """Do the noted work, and the work it causes, until none is left."""
        while self._pending:
            kind, key = next(iter(self._pending))
            del self._pending[(kind, key)]
            if kind == "namespace":
                sweep(self._rest, key[2])
                continue
            if kind == "aggregate":
                aggregate_cluster_roles(self._rest)
                continue
            res = self._bucket(key[0])
            entry = self._rest.store.get(*key)
            if res is None or entry is None:
                continue
            if kind == "owner":
                self._process_owner(res, key, entry)
            else:
                self._process_dependent(res, key, entry)

    def _process_dependent(self, res: Resource, key: Key, entry: Entry) -> None:
        """attemptToDeleteItem: delete an object none of whose owners is still there and staying."""
        meta = _meta(entry.obj)
        if meta.get("deletionTimestamp"):
            if FOREGROUND in (meta.get("finalizers") or ()):
                self._process_owner(res, key, entry)
            return
        refs = _refs(entry.obj)
        if not refs:
            return
        solid: list[dict[str, Any]] = []
        gone: list[dict[str, Any]] = []
        for ref in refs:
            state = self._owner_state(ref, key[1])
            (solid if state == "solid" else gone).append(ref)
        if solid:
            if gone:  # the owners that are gone or going are dropped from the references
                drop = {r["uid"] for r in gone}
                self._set_refs(res, key, entry, [r for r in _meta(entry.obj)["ownerReferences"]
                                                 if not isinstance(r, dict) or r.get("uid") not in drop])
            return
        waiting = any(self._owner_state(r, key[1]) == "waiting" for r in refs)
        finalizers = meta.get("finalizers") or ()
        if waiting and self._dependents.get(str(meta.get("uid"))):
            policy = "Foreground"
        elif ORPHAN in finalizers:
            policy = "Orphan"
        elif FOREGROUND in finalizers:
            policy = "Foreground"
        else:
            policy = "Background"
        req = Request("delete", res, key[1], key[2], options=Options(propagation=policy))
        delete(self._rest, req, key[1], entry)

    def _process_owner(self, res: Resource, key: Key, entry: Entry) -> None:
        """An owner being deleted with a GC finalizer: orphan its dependents (orphanDependents) or wait
        for the blocking ones to go (processDeletingDependentsItem), then drop the finalizer."""
        meta = _meta(entry.obj)
        finalizers = list(meta.get("finalizers") or ())
        if not meta.get("deletionTimestamp"):
            return
        uid = str(meta.get("uid"))
        deps = [(k, e) for k in sorted(self._dependents.get(uid, ())) if (e := self._rest.store.get(*k))]
        if ORPHAN in finalizers:
            for dep_key, dep in deps:
                dep_res = self._bucket(dep_key[0])
                if dep_res is not None:
                    self._set_refs(dep_res, dep_key, dep, [r for r in _meta(dep.obj).get("ownerReferences") or ()
                                                           if not isinstance(r, dict) or r.get("uid") != uid])
            self._drop_finalizer(res, key, ORPHAN)
            return
        if FOREGROUND not in finalizers:
            return
        blocking = False
        for dep_key, dep in deps:
            if not _meta(dep.obj).get("deletionTimestamp"):
                self._pending[("dependent", dep_key)] = None
            blocking = blocking or any(r.get("uid") == uid and r.get("blockOwnerDeletion") for r in _refs(dep.obj))
        if not blocking:
            self._drop_finalizer(res, key, FOREGROUND)

    def _drop_finalizer(self, res: Resource, key: Key, finalizer: str) -> None:
        cur = self._rest.store.get(*key)
        if cur is None:
            return
        meta = _meta(cur.obj)
        obj = dict(cur.obj, metadata=dict(meta, finalizers=[f for f in meta.get("finalizers") or () if f != finalizer]))
        if not obj["metadata"]["finalizers"]:
            del obj["metadata"]["finalizers"]
        if done_deleting(res, obj):
            self._rest._remove(res, key[1], cur, dry=False)
        else:
            self._rest._write(res, key[1], obj, dry=False)

    def _set_refs(self, res: Resource, key: Key, entry: Entry, refs: list[Any]) -> None:
        meta = dict(_meta(entry.obj))
        if refs:
            meta["ownerReferences"] = refs
        else:
            meta.pop("ownerReferences", None)
        self._rest._write(res, key[1], dict(entry.obj, metadata=meta), dry=False)

    # --- owners --------------------------------------------------------------------------------

    def _owner_state(self, ref: dict[str, Any], namespace: str) -> str:
        """classifyReferences: "gone" (absent, or another object under that name), "waiting" (being
        deleted in the foreground) or "solid"; an owner of a kind not served counts as solid, since
        kube's collector cannot look it up and keeps retrying."""
        res = self._resolve(ref)
        if res is None or (res.namespaced and not namespace):
            return "solid"
        owner = self._rest.store.get(res.bucket, namespace if res.namespaced else "", str(ref.get("name", "")))
        if owner is None or _meta(owner.obj).get("uid") != ref.get("uid"):
            return "gone"
        meta = _meta(owner.obj)
        if meta.get("deletionTimestamp") and FOREGROUND in (meta.get("finalizers") or ()):
            return "waiting"
        return "solid"

    def _tables(self) -> tuple[dict[tuple[str, str], Resource], dict[str, Resource]]:
        state = self._rest.registry.state
        if self._kinds[0] != state.generation:
            by_kind: dict[tuple[str, str], Resource] = {}
            by_bucket: dict[str, Resource] = {}
            for res in self._rest.registry.resources():
                if res.stored:
                    by_kind.setdefault((res.group, res.kind), res)
                    by_bucket.setdefault(res.bucket, res)
            self._kinds = (state.generation, by_kind, by_bucket)
        return self._kinds[1], self._kinds[2]

    def _resolve(self, ref: dict[str, Any]) -> Resource | None:
        group = str(ref.get("apiVersion") or "").rpartition("/")[0]
        return self._tables()[0].get((group, str(ref.get("kind") or "")))

    def _bucket(self, bucket: str) -> Resource | None:
        return self._tables()[1].get(bucket)
