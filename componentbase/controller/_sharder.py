"""The sharder: on the elected leader, it labels each object of the sharded kinds with the shard that owns it.

It watches the ring's shard Leases and every object of the sharded kinds (metadata only: its cache is one
label set per object, not the objects). A shard is live while its Lease names it as holder and has changed
within its lease duration, judged on this process's monotonic clock from when the change was seen, as a
leader election candidate judges a holder (never from another host's timestamps). Live shards make the ring.

For an object of a sharded kind whose label is not the ring's choice:

- unassigned (new, or let go by its shard): the label is set at once, so no shard ever sees it unlabelled;
- assigned to a live shard: the drain label is set, and nothing else, until that shard acknowledges by
  removing both labels; only then is the new shard's label set (timebertt/kubernetes-controller-sharding's
  handover): a moving object is never in two shards' caches at once;
- assigned to a shard that is gone (Lease released or expired): claimed by the live shard the ring gives it
  (``_claimer``: each survivor relabels its own share, so the writes are spread over the survivors rather
  than queued behind one client), and moved by the sharder if still there ``claim_grace`` later. No
  acknowledgement: that shard's writes are already refused by its own fence (its renew deadline passed
  before the Lease expired here). ``_membership`` judges liveness for both.

Objects the sharded objects control take their controller's label once it is set without drain, so they
move with it. Every write carries the resourceVersion it was decided on: a change meanwhile is a conflict,
retried from the cache.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from componentbase.client import NotLeader, ObjectClient, is_conflict, is_not_found
from componentbase.controller._membership import Membership
from componentbase.controller._ring import HashRing
from componentbase.controller._shardcache import Kept, MetadataCache
from componentbase.controller._shardmetrics import ShardingMetrics
from componentbase.controller._shardnames import (
    ShardingConfig,
    object_key,
    owner_key,
    relabel,
    selectors,
)
from componentbase.informers import InformerFactory, SharedInformer, deleted_object
from componentbase.workqueue import RateLimitingQueue, ShutDown, default_controller_rate_limiter

__all__ = ["Sharder"]

log = logging.getLogger("componentbase.controller.sharding")

_OWNER_INDEX = "sharding-owner"
#: Label writes in flight at once: a dead shard's objects are relabelled several at a time (never one object
#: twice at once: the work queue hands a key to one worker).
WORKERS = 8
Item = tuple[bool, int, str]  # (owned kind?, index of the kind, object key)
Kind = tuple[str, str]  # (apiVersion, kind)


def _on_each_change(informer: SharedInformer, handle: Callable[[Any], None]) -> None:
    informer.add_event_handler(on_add=handle, on_update=lambda _, new: handle(new), on_delete=handle)


def _updated(handle: Callable[[Any], None], old: Any, new: Any) -> None:
    handle(new)


def _labels(obj: Any) -> Mapping[str, str]:
    """An object's labels, read-only; a kept record's own (shared) dict, read without the mapping protocol:
    a ring change reads every object's."""
    if isinstance(obj, Kept):
        return obj.labels
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


class Sharder:
    """A leader-only runnable: ``Manager`` adds it when sharding is on."""

    needs_leader = True

    def __init__(self, config: ShardingConfig, *, client: Any, api_client: Any, lease_namespace: str,
                 namespace: Any, mapper: Any, retry_period: float, lease_duration: float,
                 metrics: ShardingMetrics, shard: str = "", own: dict[int, Any] | None = None) -> None:
        self.config = config
        #: Index of a sharded kind -> this replica's own shard's informer of it, when that selects exactly the
        #: sharder's objects of this shard: the sharder's cache then leaves those out (``shard!=<own>``) and
        #: reads them there, so the leader does not keep a second copy of its own share (about 1/N of its
        #: cache).
        self.own = own or {}
        self.shard = shard  # this replica's own shard: its claims are the sharder's to write (from its cache)
        #: True while the sharder runs here (synced): this replica's claimer then leaves its share to it.
        self.active = False
        self.name = f"sharder-{config.ring}"
        self.client = client  # fenced by the leader election: a deposed sharder writes nothing
        self.api_client = api_client
        self.lease_namespace = lease_namespace
        self.namespace = namespace
        self.period = min(retry_period, 0.25)  # how often the Leases are judged, besides at each expiry
        self.lease_duration = lease_duration
        self.mapper = mapper
        self._started = float("inf")  # when this sharder's view of the Leases began (set once synced)
        self.metrics = metrics
        self.ring = HashRing([], config.virtual_nodes)
        self.members = Membership(config.orphan_after)
        self._draining: dict[tuple[int, str], float] = {}
        #: How long the objects of a gone shard are left to the live shards to claim (``_claimer``) before the
        #: sharder relabels what is left: half a lease duration, at least two retry periods. A claimer notices
        #: the end within its period and needs one list and its share of the writes; a shorter grace had the
        #: sharder write the same objects as a busy claimer (each write of the two a conflict for the other).
        self.claim_grace = max(2.0 * retry_period, lease_duration / 2)

    def live_shards(self) -> set[str]:
        """Shards whose Lease names them and changed within its duration, as seen from here."""
        return self.members.live()

    # --- the loop -------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        leases_factory = self.members.watch(self.api_client, self.lease_namespace, self.config.ring)
        cache = MetadataCache(self.api_client, self.mapper, list(self.namespace or ()))
        self.objects = ObjectClient(self.client, self.mapper)
        self.mains = [cache.informer(av, kind, self._selector(i)) for i, (av, kind) in enumerate(self.config.kinds)]
        self.owned = [cache.informer(av, kind, "") for av, kind in self.config.owned]
        queue: RateLimitingQueue[Item] = RateLimitingQueue(default_controller_rate_limiter(), name=self.name)
        self._watch(queue)
        workers = [threading.Thread(target=self._work, args=(queue,), name=f"{self.name}-{i}") for i in range(WORKERS)]
        registrations = self._watch_own(queue)
        try:
            leases_factory.start(stop)
            cache.start(stop)
            if not (leases_factory.wait_for_cache_sync(120.0) and cache.wait_for_sync(stop, 120.0)):
                return  # stopped (or a kind not listable: logged by its informer); leading again retries
            self._started = time.monotonic()
            self.active = True
            self._tick(queue, leases_factory, stop)
            for worker in workers:
                worker.start()
            while not stop.wait(self.members.until_expiry(self.period)):
                self._tick(queue, leases_factory, stop)
        finally:
            self.active = False
            for informer, registration in registrations:
                informer.remove_event_handler(registration)
            queue.shut_down()
            for worker in workers:
                if worker.is_alive():
                    worker.join()
            cache.join(1.0)
            leases_factory.join(1.0)

    def _selector(self, i: int) -> str:
        """The sharder's cache's label selector for the i-th sharded kind: all but its own shard's objects when
        it reads those in its own shard's informer."""
        if i not in self.own:
            return self.config.selector
        return selectors(self.config.selector, f"{self.config.shard_label}!={self.shard}")

    def _get(self, i: int, key: str) -> Any:
        """The i-th sharded kind's object ``key``, from the sharder's cache or its own shard's informer."""
        found = self.mains[i].get(key)
        own = self.own.get(i)
        return found if found is not None or own is None else own.get(key)

    def _list(self, i: int) -> list[Any]:
        own = self.own.get(i)
        return self.mains[i].list() + (own.list() if own is not None else [])

    def _watch_own(self, queue: RateLimitingQueue[Item]) -> list[tuple[Any, Any]]:
        """The main-kind handlers on the own shard's informers too (an object moving in or out of this shard
        leaves one of the two caches and enters the other); their registrations, removed when the sharder
        stops (it runs again, and registers again, each time this replica leads)."""
        return [(informer, self._handle_main(informer, queue, i)) for i, informer in self.own.items()]

    def _handle_main(self, informer: Any, queue: RateLimitingQueue[Item], i: int) -> Any:
        """Register ``_main_changed`` for the i-th sharded kind's adds, updates and deletes on ``informer``."""
        changed = functools.partial(self._main_changed, queue, i)
        return informer.add_event_handler(on_add=changed, on_update=functools.partial(_updated, changed),
                                          on_delete=functools.partial(changed, deleted=True))

    def _main_changed(self, queue: RateLimitingQueue[Item], i: int, obj: Any, deleted: bool = False) -> None:
        key = object_key(deleted_object(obj))
        if deleted or not self._settled(obj):
            queue.add((False, i, key))
        for owned_index, informer in enumerate(self.owned):
            for child in informer.by_index(_OWNER_INDEX, f"{i}|{key}"):
                queue.add((True, owned_index, object_key(child)))

    def _watch(self, queue: RateLimitingQueue[Item]) -> None:
        for i, informer in enumerate(self.mains):
            self._handle_main(informer, queue, i)
        kinds = self.config.kinds

        def by_owner(obj: dict[str, Any]) -> list[str]:
            found = owner_key(obj, kinds)
            return [] if found is None else [f"{found[0]}|{found[1]}"]

        def owned_changed(j: int, obj: Any) -> None:
            queue.add((True, j, object_key(deleted_object(obj))))

        for j, informer in enumerate(self.owned):
            informer.add_indexers({_OWNER_INDEX: by_owner})
            _on_each_change(informer, functools.partial(owned_changed, j))

    def _tick(self, queue: RateLimitingQueue[Item], leases: InformerFactory, stop: threading.Event) -> None:
        """Judge the shards' Leases again (an expiry is no event); a new ring re-checks every object."""
        live = self.live_shards()
        if live != self.ring.shards:
            log.info("ring %s: live shards %s (were %s)", self.config.ring, sorted(live) or "none",
                     sorted(self.ring.shards) or "none")
            self.ring = HashRing(live, self.config.virtual_nodes)
            self.metrics.ring_shards(len(live))
            # The objects of shards no longer live first: they have nobody reconciling them until they move.
            # Only objects with a label to write are queued (owned ones: those of the owners that move).
            label = self.config.shard_label
            kinds = ((False, [self._list(i) for i in range(len(self.mains))]),
                     (True, [informer.list() for informer in self.owned]))
            for orphaned in (True, False):
                for owned, lists in kinds:
                    for i, objs in enumerate(lists):
                        for obj in objs:
                            if (_labels(obj).get(label, "") not in live) == orphaned and (
                                    owned or not self._settled(obj)):
                                queue.add((owned, i, object_key(obj)))
        now = time.monotonic()
        for i, key in [k for k, started in self._draining.items() if now > started + self.config.orphan_after]:
            if self._get(i, key) is None:  # deleted while draining: forgotten
                self._draining.pop((i, key), None)
        for name in self.members.orphans():
            if stop.is_set():
                return
            self._delete_lease(name)

    def _settled(self, obj: Any) -> bool:
        """Labelled as the ring assigns it and not draining: nothing to write. Checked before queueing, so a ring
        change, or the watch event of each label written, does not put every object through the queue (a ring
        change re-checks every object after the new ring is in place, so none is missed in between)."""
        labels = _labels(obj)
        desired = self.ring.shard_for(object_key(obj))
        return not desired or (labels.get(self.config.shard_label) == desired and self.config.drain_label not in labels)

    def _delete_lease(self, name: str) -> None:
        self.members.forget(name)
        ref = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
               "metadata": {"name": name, "namespace": self.lease_namespace}}
        try:
            self.objects.delete(ref)
            log.info("ring %s: deleted the lease of a shard gone for %gs: %s", self.config.ring,
                     self.config.orphan_after, name)
        except Exception as err:  # the next tick sees the lease again if it is still there
            log.debug("deleting orphaned shard lease %s: %s", name, err)

    def _work(self, queue: RateLimitingQueue[Item]) -> None:
        while True:
            try:
                item = queue.get()
            except ShutDown:
                return
            try:
                wait = self._sync(item)
                queue.forget(item)
                if wait:
                    queue.add_after(item, wait)
            except NotLeader:
                queue.forget(item)  # leadership is ending: the run stops next
            except Exception as err:  # an API error: retried with backoff
                if is_not_found(err):
                    queue.forget(item)
                else:
                    level = logging.DEBUG if is_conflict(err) else logging.ERROR
                    log.log(level, "ring %s: assigning %s: %s", self.config.ring, item[2], err)
                    queue.add_rate_limited(item)
            finally:
                queue.done(item)

    # --- one object -----------------------------------------------------------------------------

    def _patch(self, kind: Kind, obj: dict[str, Any], labels: dict[str, str | None]) -> None:
        relabel(self.objects, kind[0], kind[1], obj, labels)

    def _sync(self, item: Item) -> float | None:
        """Label one object; a delay when it must be looked at again later, None when done."""
        owned, i, key = item
        if owned:
            self._sync_owned(i, key)
            return None
        obj = self._get(i, key)
        shard_label, drain_label = self.config.shard_label, self.config.drain_label
        if obj is None:  # deleted, or between the sharder's cache and its own shard's: a drain is not over
            return None
        labels, ring = _labels(obj), self.ring
        desired, current = ring.shard_for(key), labels.get(shard_label, "")
        if not desired or (current == desired and drain_label not in labels):
            return None
        unseen = self._started + self.lease_duration - time.monotonic()
        if current and current not in ring.shards and not self.members.known(current) and unseen > 0:
            # A shard this sharder has no Lease of yet: a new sharder waits a lease duration before it takes
            # the objects of a shard that may be starting (its Lease not yet created, or not yet seen).
            return unseen
        if current and current not in ring.shards and desired != self.shard:  # gone: their new shards claim first
            ended = self.members.ended(current)
            wait = 0.0 if ended is None else ended + self.claim_grace - time.monotonic()
            if wait > 0:
                return wait
        of, kind = self.config.kinds[i], self.config.kinds[i][1]
        if current == desired:  # drained, then the ring changed back: it may stay
            self._patch(of, obj, {drain_label: None})
        elif current and current in ring.shards:  # a live shard holds it: ask it to let go first
            if drain_label not in labels:
                self._patch(of, obj, {drain_label: "true"})
                self._draining.setdefault((i, key), time.monotonic())
                self.metrics.drain_started(kind)
        else:  # unassigned, acknowledged, or its shard is gone
            self._patch(of, obj, {shard_label: desired, drain_label: None})
            started = self._draining.pop((i, key), None)
            self.metrics.assigned(kind, moved=bool(current) or started is not None)
            if started is not None:
                self.metrics.drain_finished(time.monotonic() - started)
        return None

    def _sync_owned(self, j: int, key: str) -> None:
        obj = self.owned[j].get(key)
        found = None if obj is None else owner_key(obj, self.config.kinds)
        if obj is None or found is None:
            return
        owner = self._get(found[0], found[1])
        owner_labels = _labels(owner)
        target = owner_labels.get(self.config.shard_label, "")
        if not target or self.config.drain_label in owner_labels:
            return  # the owner is between shards: its objects wait for its new one
        current = _labels(obj).get(self.config.shard_label, "")
        if current != target:
            self._patch(self.config.owned[j], obj, {self.config.shard_label: target})
            self.metrics.assigned(self.config.owned[j][1], moved=bool(current))
