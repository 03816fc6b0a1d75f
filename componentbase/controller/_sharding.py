"""Sharded controllers: one controller scaled out across replicas, with no object reconciled by two at once.

``Manager(..., sharding=ShardingConfig(ring="hello", kinds=[("v1", "ConfigMap")]))``. Each replica holds a
shard Lease of its own (``<ring>-<shard>``, labelled with the ring), renewed by a leader elector as the
leader Lease is, and runs its controllers only while it holds it. Its informers of the sharded kinds select
only the objects labelled with its shard, so the API server filters and each replica caches about 1/N. The
elected leader also runs the ``Sharder`` (``_sharder``), which writes those labels. docs/sharding.md has
the design and the guarantees.

The shard's writes go through ``guard``: refused before they are sent once its Lease's renew deadline has
passed, and, for an object of a sharded kind, unless its cache holds that object labelled with this shard
(and, for the kinds the controllers reconcile, not draining). A drain is acknowledged inside the
controller's reconcile of that key (so never while the key is being reconciled here), by removing both
labels. A replica whose shard Lease is lost stops, as a deposed leader does: objects may have moved while
it could not renew, and its cache may not show that yet.
"""

from __future__ import annotations

import collections
import copy
import inspect
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from componentbase.client import NotLeader, ObjectClient
from componentbase.controller._claimer import Claimer
from componentbase.controller._controller import Controller
from componentbase.controller._sharder import WORKERS, Sharder
from componentbase.controller._shardmetrics import ShardingMetrics
from componentbase.controller._shardnames import (
    RING_LABEL,
    SHARD_LABEL,
    ShardingConfig,
    group_of,
    lease_name,
    relabel,
    selectors,
    shard_name,
)
from componentbase.controller._types import Request, Result
from componentbase.informers import SharedInformer
from componentbase.leaderelection import (
    DuplicateElectorError,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
    LeaseLock,
    default_identity,
)

__all__ = ["DuplicateShardError", "Sharding", "ShardingConfig"]

log = logging.getLogger("componentbase.controller.sharding")

_READS = frozenset({"GET", "HEAD", "OPTIONS"})
Pair = tuple[Any, bool]  # (runnable, needs leader)


class DuplicateShardError(RuntimeError):
    """Another replica renews this replica's shard Lease: two replicas were given one identity."""


class Sharding:
    """The shard side of one ``Manager``: its Lease, its label selector, its write guard, its sharder."""

    def __init__(self, config: ShardingConfig, *, api_client: Any, fence: Any, cache: Any,
                 leader_election: Any, lease_client: Any, identity: str | None, metrics: Any) -> None:
        errs = config.errors()
        if leader_election is None:
            errs.append("sharding needs the manager to elect a leader (leader_election with leader_elect): "
                        "the sharder runs on the leader")
        if errs:
            raise ValueError("; ".join(errs))
        self.config = config
        self.shard = config.shard or shard_name(identity or default_identity())
        self.lease_namespace = config.lease_namespace or leader_election.resource_namespace
        self.lease_name = lease_name(config.ring, self.shard)
        self.selector = f"{config.shard_label}={self.shard}"
        self.election = leader_election
        self.api_client = api_client
        self.lease_client = lease_client or api_client
        self.cache = cache
        self.metrics = ShardingMetrics(metrics, config.ring, self.shard)
        from componentbase.client._throttled import ThrottledApiClient, guarded  # kubernetes: only when running

        #: The client the shard's controllers write with (``Manager.client``): see ``guard``.
        self.client = guarded(api_client, self.guard)
        self._acks = ObjectClient(guarded(api_client, self._lease_guard), cache.mapper)
        # The sharder's own client: fenced by the leader election, and not held by the controllers' client-side
        # rate limit, so relabelling a dead shard's objects does not wait behind their reconciles (its one
        # request at a time per worker is its own limit; the API server's priority and fairness still applies).
        # A keep-alive connection per worker (a component's client keeps 2: the other writes would each open one).
        writes = copy.deepcopy(api_client.configuration)
        writes.connection_pool_maxsize = WORKERS

        def own(guard: Callable[[str, str], None], suffix: str) -> Any:
            client = ThrottledApiClient(writes, None, guard)
            client.default_headers.update(api_client.default_headers)
            client.user_agent = f"{api_client.user_agent}/{suffix}"
            return client

        self._sharder_client = own(fence, "sharder")
        # The claimer's writes (``_claimer``): unthrottled as the sharder's, fenced by this shard's Lease.
        self._claims = ObjectClient(own(self._lease_guard, "claimer"), cache.mapper)
        self._elector: LeaderElector | None = None
        self._selected: dict[tuple[str, str], tuple[str, str | None, bool]] = {}  # (group, kind) -> selection
        self._resources: dict[tuple[str, str], tuple[SharedInformer, bool, str]] | None = None
        self._busy: collections.Counter[tuple[int, str]] = collections.Counter()
        self._lock = threading.Lock()

    # --- what this shard caches and may write ---------------------------------------------------------

    def _kind(self, api_version: str, kind: str) -> bool | None:
        """True for a kind the controllers reconcile, False for one they control, None if not sharded."""
        group = group_of(api_version)
        for main, kinds in ((True, self.config.kinds), (False, self.config.owned)):
            if any(k == kind and group_of(av) == group for av, k in kinds):
                return main
        return None

    def select(self, api_version: str, kind: str, namespace: str | None, label_selector: str) -> str:
        """The label selector of an informer of the manager's cache: this shard's label added for a sharded kind."""
        main = self._kind(api_version, kind)
        if main is None:
            return label_selector
        selector = selectors(label_selector, self.selector)
        with self._lock:
            self._selected.setdefault((group_of(api_version), kind), (selector, namespace, main))
            self._resources = None
        return selector

    def _informers(self) -> dict[tuple[str, str], tuple[SharedInformer, bool, str]]:
        """(group, resource) -> this shard's informer of that sharded kind, whether controllers reconcile it, and
        the kind."""
        with self._lock:
            if self._resources is None:
                found = {}
                for (group, kind), (selector, namespace, main) in self._selected.items():
                    api_version = next(av for av, k in (*self.config.kinds, *self.config.owned)
                                       if k == kind and group_of(av) == group)
                    mapping = self.cache.mapper.mapping(api_version, kind)
                    informer = self.cache.for_kind(api_version, kind, namespace, label_selector=selector)
                    found[(group, mapping.resource)] = (informer, main, kind)
                self._resources = found
            return self._resources

    def _own_informers(self) -> dict[int, SharedInformer]:
        """Index of a sharded kind -> this shard's informer of it, where that holds exactly the sharder's objects
        of this shard (the sharder's selector plus the shard label, every namespace the manager sees)."""
        own = {}
        for i, (api_version, kind) in enumerate(self.config.kinds):
            with self._lock:
                selected = self._selected.get((group_of(api_version), kind))
            expected = selectors(self.config.selector, self.selector)
            if selected is not None and selected[0] == expected and selected[1] is None:
                own[i] = self.cache.for_kind(api_version, kind, None, label_selector=expected)
        return own

    def leading_until(self) -> float:
        """The monotonic time until which this shard's Lease is vouched for; ``-inf`` when not held."""
        elector = self._elector
        return elector.leading_until() if elector is not None else float("-inf")

    def _lease_guard(self, method: str, url: str) -> None:
        if method.upper() not in _READS and time.monotonic() >= self.leading_until():
            raise NotLeader(f"refused {method} {url}: shard {self.shard} of ring {self.config.ring} does not hold "
                            f"its lease (renew deadline passed or lease lost)")

    def guard(self, method: str, url: str) -> None:
        """Refuse a write unless this shard holds its Lease and, for a named object of a sharded kind, its
        cache holds that object labelled with this shard (not draining, for the kinds reconciled)."""
        self._lease_guard(method, url)
        if method.upper() in _READS:
            return
        target = _target(urlsplit(url).path)
        if target is None:
            return
        group, resource, key = target
        found = self._informers().get((group, resource))
        if found is None:
            return
        informer, main, _ = found
        labels = ((informer.get(key) or {}).get("metadata") or {}).get("labels") or {}
        if labels.get(self.config.shard_label) != self.shard or (main and self.config.drain_label in labels):
            raise NotLeader(f"refused {method} {url}: {resource} {key} is not assigned to shard {self.shard} of "
                            f"ring {self.config.ring}")

    # --- reconciles and the drain ------------------------------------------------------------------

    def wrap(self, controller: Controller) -> None:
        """Reconcile only what this shard's cache shows labelled with it; acknowledge a drain instead."""
        informers = controller.informers
        by_id = {id(informer): kind for informer, main, kind in self._informers().values() if main}
        if not informers or id(informers[0]) not in by_id:
            return
        informer, inner = informers[0], controller.reconcile
        self.metrics.count_assigned(by_id[id(informer)], lambda: len(informer.list()))

        def reconcile(req: Request) -> Any:
            labels = ((informer.get(req.key) or {}).get("metadata") or {}).get("labels") or {}
            if labels.get(self.config.shard_label) != self.shard:
                return None  # not (or no longer) this shard's
            if self.config.drain_label in labels:
                return self._acknowledge(informer, req)
            return self._busy_while(id(informer), req.key, inner, req)

        controller.reconcile = reconcile

    def _busy_while(self, informer: int, key: str, inner: Callable[[Request], Any], req: Request) -> Any:
        """``inner(req)``, counted as in flight for its key until it (or the coroutine it returns) ends."""
        slot = (informer, key)
        with self._lock:
            self._busy[slot] += 1
        done = True
        try:
            result = inner(req)
            if inspect.isawaitable(result):
                done = False
                return self._awaiting(slot, result)
            return result
        finally:
            if done:
                self._release(slot)

    async def _awaiting(self, slot: tuple[int, str], result: Any) -> Any:
        try:
            return await result
        finally:
            self._release(slot)

    def _release(self, slot: tuple[int, str]) -> None:
        with self._lock:
            self._busy[slot] -= 1
            if self._busy[slot] <= 0:
                del self._busy[slot]

    def _acknowledge(self, informer: SharedInformer, req: Request) -> Result | None:
        """Let a drained object go: both labels removed, guarded by the resourceVersion seen, once no other
        controller of this replica is reconciling it."""
        with self._lock:
            if self._busy[(id(informer), req.key)]:
                return Result(requeue_after=0.05)
        obj = informer.get(req.key)
        if obj is None:
            return None
        relabel(self._acks, str(obj.get("apiVersion")), str(obj.get("kind")), obj,
                {self.config.shard_label: None, self.config.drain_label: None})
        self.metrics.drain_acknowledged()
        log.info("shard %s of ring %s: let %s go (drained)", self.shard, self.config.ring, req.key)
        return None

    # --- running --------------------------------------------------------------------------------------

    def arrange(self, runnables: Iterable[Pair], failed: threading.Event, namespace: Any) -> list[Pair]:
        """The manager's runnables, sharded: what needs a leader runs on every replica while it holds its shard
        Lease; the sharder runs on the leader."""
        runnables = list(runnables)
        work = [r for r, leader in runnables if leader]
        for r in work:
            if isinstance(r, Controller):
                self.wrap(r)
        sharder = Sharder(self.config, client=self._sharder_client, api_client=self.api_client,
                          lease_namespace=self.lease_namespace, namespace=namespace, mapper=self.cache.mapper,
                          retry_period=float(self.election.retry_period),
                          lease_duration=float(self.election.lease_duration), metrics=self.metrics,
                          shard=self.shard, own=self._own_informers())
        claimer = Claimer(self.config, shard=self.shard, api_client=self.api_client, writes=self._claims,
                          lease_namespace=self.lease_namespace, namespace=namespace, mapper=self.cache.mapper,
                          retry_period=float(self.election.retry_period), workers=WORKERS, metrics=self.metrics,
                          sharder_here=lambda: sharder.active)
        return [*((r, False) for r, leader in runnables if not leader),
                (_Member(self, [*work, claimer], failed), False), (sharder, True)]

    def lock(self) -> LeaseLock:
        return LeaseLock(self.lease_namespace, self.lease_name, self.lease_client,
                         labels={RING_LABEL: self.config.ring, SHARD_LABEL: self.shard})

    def check_identity(self, stop: threading.Event) -> None:
        """Raise ``DuplicateShardError`` if another replica renews this shard's Lease: its holder is this
        shard and it changes within a lease duration (a Lease left by this replica's former run does not)."""
        lock, timeout = self.lock(), float(self.election.retry_period)
        try:
            first = lock.get(timeout)
        except Exception:  # no Lease (or no answer): the elector creates or retries it
            return
        if first.holder_identity != self.shard:
            return
        deadline = time.monotonic() + float(self.election.lease_duration)
        while time.monotonic() < deadline and not stop.wait(float(self.election.retry_period)):
            try:
                now = lock.get(timeout)
            except Exception:  # gone or unanswered: no one renews it
                return
            if now != first:
                raise DuplicateShardError(
                    f"shard lease {self.lease_namespace}/{self.lease_name} is being renewed by another replica as "
                    f"{self.shard}: two replicas of ring {self.config.ring} have one identity (give each its "
                    f"own, e.g. the pod name)")

    def elector(self, callbacks: LeaderCallbacks) -> LeaderElector:
        e = self.election
        return LeaderElector(LeaderElectionConfig(
            lock=self.lock(), identity=self.shard, callbacks=callbacks, lease_duration=float(e.lease_duration),
            renew_deadline=float(e.renew_deadline), retry_period=float(e.retry_period), release_on_cancel=True,
            name=self.lease_name))


class _Member:
    """Every replica's runnable: hold the shard Lease and run the sharded work while holding it."""

    needs_leader = False

    def __init__(self, sharding: Sharding, work: list[Any], failed: threading.Event) -> None:
        self.sharding = sharding
        self.work = work
        self.failed = failed
        self.name = f"shard-{sharding.shard}"

    def _fail(self, stop: threading.Event, message: str) -> None:
        log.error("%s", message)
        self.failed.set()
        stop.set()

    def run(self, stop: threading.Event) -> None:
        s = self.sharding
        try:
            s.check_identity(stop)
        except DuplicateShardError as err:
            self._fail(stop, str(err))
            return
        callbacks = LeaderCallbacks(on_started_leading=lambda work_stop: self._lead(work_stop, stop),
                                    on_stopped_leading=lambda: s.metrics.lease_held(False))
        s._elector = elector = s.elector(callbacks)
        try:
            thread = elector.run_in_thread()
        except DuplicateElectorError as err:
            self._fail(stop, str(err))
            return
        while thread.is_alive() and not stop.wait(0.2):
            pass
        thread.stop()
        if not stop.is_set():
            self._fail(stop, f"shard lease {s.lease_namespace}/{s.lease_name} lost: stopping, as a deposed leader "
                             f"does (objects may have moved while it could not renew)")

    def _lead(self, work_stop: threading.Event, stop: threading.Event) -> None:
        log.info("shard %s of ring %s: holding lease %s/%s", self.sharding.shard, self.sharding.config.ring,
                 self.sharding.lease_namespace, self.sharding.lease_name)
        self.sharding.metrics.lease_held(True)
        threads = [threading.Thread(target=self._one, args=(r, work_stop, stop), name=f"shard-{i}")
                   for i, r in enumerate(self.work)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _one(self, runnable: Any, work_stop: threading.Event, stop: threading.Event) -> None:
        try:
            runnable.run(work_stop)
        except Exception:
            log.exception("runnable %s failed", getattr(runnable, "name", type(runnable).__name__))
            self.failed.set()
            stop.set()
            work_stop.set()


def _target(path: str) -> tuple[str, str, str] | None:
    """(group, resource, namespace/name) of a named object's URL path; None for a collection or other path."""
    parts = path.strip("/").split("/")
    if parts[0] == "api" and len(parts) >= 3:
        group, rest = "", parts[2:]
    elif parts[0] == "apis" and len(parts) >= 4:
        group, rest = parts[1], parts[3:]
    else:
        return None
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 4:
        namespace, rest = rest[1], rest[2:]
    if len(rest) < 2:
        return None
    return group, rest[0], f"{namespace}/{rest[1]}" if namespace else rest[1]
