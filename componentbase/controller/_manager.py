"""``Manager``: the client, the shared cache and the runnables of one component, as controller-runtime's manager.

Start-up order, as controller-runtime's: caches first, synced before anything else runs (and before the
replica campaigns, so a new leader acts at once: a hot standby); then the runnables every replica runs; then
leader election, and the leader-only runnables while leading. Leader-only work writes through
``Manager.client``, which is fenced: once this replica's renew deadline has passed or leadership is lost,
its writes are refused before they are sent, and its queues are dropped, not drained. On loss the manager
stops and ``run`` returns 1, as kube-scheduler exits; ``on_lost="standby"`` campaigns again instead.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import componentbase.webhook as webhook  # its server (ssl, sockets) loads on first use of webhook.WebhookServer
from componentbase.client import Fence, ObjectClient
from componentbase.componentconfig import LeaderElectionConfiguration
from componentbase.controller._cleanup import Cleanup, Finalizing
from componentbase.controller._controller import Controller
from componentbase.controller._sharding import Sharding, ShardingConfig
from componentbase.controller._types import Reconciler
from componentbase.controller._writes import WriteTracker
from componentbase.events import EventBroadcaster, EventRecorder
from componentbase.informers import CacheSyncCheck, InformerFactory, SharedInformer
from componentbase.leaderelection import (
    DuplicateElectorError,
    HealthzAdaptor,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
)

if TYPE_CHECKING:
    from componentbase.webhook import WebhookServer

__all__ = ["Manager", "Runnable"]

log = logging.getLogger("componentbase.controller")

#: How long a stopped manager waits for its informers' threads to end.
CACHE_STOP_GRACE = 1.0


class Runnable(Protocol):
    """Anything the manager runs: ``run(stop)`` blocks until ``stop`` is set."""

    def run(self, stop: threading.Event) -> None: ...


class _Func:
    def __init__(self, func: Callable[[threading.Event], object], needs_leader: bool) -> None:
        self.func = func
        self.needs_leader = needs_leader
        self.name = getattr(func, "__name__", "runnable")

    def run(self, stop: threading.Event) -> None:
        self.func(stop)


class _Group:
    """Runnables on threads of their own, joined together; one that raises sets ``failed`` and ``stop``."""

    def __init__(self, failed: threading.Event, stop: threading.Event) -> None:
        self.failed = failed
        self.stop = stop
        self.threads: list[threading.Thread] = []

    def start(self, runnables: list[Runnable], stop: threading.Event) -> None:
        for r in runnables:
            name = str(getattr(r, "name", type(r).__name__))
            t = threading.Thread(target=self._run, args=(r, stop, name), name=f"runnable-{name}")
            t.start()
            self.threads.append(t)

    def _run(self, runnable: Runnable, stop: threading.Event, name: str) -> None:
        try:
            runnable.run(stop)
        except Exception:
            log.exception("runnable %s failed", name)
            self.failed.set()
            self.stop.set()

    def join(self) -> None:
        for t in self.threads:
            t.join()
        self.threads.clear()


class Manager:
    """``Manager(api_client, leader_election=cfg)``; make informers and controllers, then ``run(stop)``.

    ``Manager.from_config(completed)`` takes the client, leader election, lease client, metrics, namespaces
    and health checks of a component's ``CompletedConfig``. ``namespace`` scopes the cache of namespaced kinds:
    one namespace, a list of them (one informer per namespace behind one view, as controller-runtime's
    ``DefaultNamespaces``), or None for all. ``transform`` applies to every cached object
    (``strip_managed_fields`` bounds memory); a watch silent for ``inactivity_timeout`` seconds (no event, no
    bookmark: kube-apiserver sends one about every minute) is presumed dead and opened again. ``elector`` is
    an election already running for this component (``run_component``'s): the manager then elects no second
    time, runs its leader-only work at once and fences its writes by that elector's deadline. ``sharding`` (a
    ``ShardingConfig``) runs the leader-only work on every replica as one shard of a ring (docs/sharding.md).

    Public attributes:

    - ``client``: the client leader-only work writes with; fenced when the component elects a leader.
    - ``objects``: any object by its apiVersion and kind, written through ``client``.
    - ``api_client``: the unfenced client, for what must go out whether or not this replica leads: the
      cache's reads and Events (see ``event_recorder``). Never write a controller's objects with it.
    - ``cache``: the ``InformerFactory`` behind ``informer``; ``writes``: what read-your-own-writes waits for.
    - ``webhooks``: the admission and conversion webhook server, run on every replica, before the caches.
    - ``event_broadcaster``: the Events' sender, made on first use (``event_recorder``).
    - ``sharding``: the shard side with ``sharding=`` (its ring, Lease and fence; docs/sharding.md), else None.
    - ``fence``, ``leader_election``, ``elector``, ``lease_client``, ``metrics``, ``watchdog``, ``identity``,
      ``on_lost``, ``sync_timeout``: as given or taken from the config.
    """

    def __init__(self, api_client: Any, *, leader_election: LeaderElectionConfiguration | None = None,
                 lease_client: Any = None, metrics: Any = None, namespace: str | Sequence[str] | None = None,
                 resync: float = 0.0, sync_timeout: float = 120.0, on_lost: str = "exit",
                 identity: str | None = None, transform: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                 inactivity_timeout: float | None = 180.0, watchdog: HealthzAdaptor | None = None,
                 elector: LeaderElector | None = None, webhook_server: WebhookServer | None = None,
                 sharding: ShardingConfig | None = None) -> None:
        if on_lost not in ("exit", "standby"):
            raise ValueError(f'on_lost must be "exit" or "standby", not {on_lost!r}')
        #: The unfenced client: the cache reads and Events are sent with it (see the class docstring).
        self.api_client = api_client
        self.cache = InformerFactory(api_client, resync, namespace=namespace, transform=transform,
                                     inactivity_timeout=inactivity_timeout)
        #: An election running outside this manager (``run_component``'s), under which it works.
        self.elector = elector
        self.leader_election = leader_election if leader_election is not None and leader_election.leader_elect \
            and elector is None else None
        self.lease_client = lease_client
        self.metrics = metrics
        self.sync_timeout = sync_timeout
        self.on_lost = on_lost
        self.identity = identity
        #: The ``/healthz`` leader-election check: fails once this replica leads past its lease's expiry.
        self.watchdog = watchdog
        self.fence = Fence()
        #: The client leader-only work writes with: fenced when this component elects a leader.
        self.client = api_client
        if self.leader_election is not None or elector is not None:
            from componentbase.client._throttled import guarded  # imports kubernetes: only when running

            self.client = guarded(api_client, self.fence)
            if metrics is not None:
                metrics.track(self.client)
        if elector is not None:
            self.fence.close_after(elector.leading_until)
        #: With ``sharding`` (docs/sharding.md), the shard side: ``client`` is then fenced by the shard's Lease.
        self.sharding = None if sharding is None else Sharding(
            sharding, api_client=api_client, fence=self.fence, cache=self.cache, metrics=metrics,
            leader_election=self.leader_election, lease_client=lease_client, identity=identity)
        self.client = self.client if self.sharding is None else self.sharding.client
        #: Any object by its apiVersion and kind, through ``client``: ``mgr.objects.patch(obj, {...})``.
        self.writes = WriteTracker()
        self.objects = ObjectClient(self.client, self.cache.mapper, on_write=self.writes.wrote)
        self._tracked: set[int] = set()
        self._runnables: list[tuple[Runnable, bool]] = []
        self._failed = threading.Event()
        self._leading = threading.Event()
        self._events: EventBroadcaster | None = None
        self._events_lock = threading.Lock()
        self._webhooks = webhook_server

    @classmethod
    def from_config(cls, completed: Any, **kw: Any) -> Manager:
        """The manager of a component's ``CompletedConfig`` (its client, leader election and metrics).

        A ``HealthzAdaptor`` among the config's health checks (``run_component`` puts one there) watches
        this manager's elector, and a ``CacheSyncCheck`` among its readyz checks (``ControllerOptions`` puts
        one there) this manager's cache. When ``run_component`` already elects for the component (a run
        function not marked ``elects_leader``), the manager runs under that election (``elector``).
        ``webhook_options`` (``--webhook-*``) describe the server behind ``webhooks``.
        """
        config = completed.config
        webhook_options = kw.pop("webhook_options", None)
        if webhook_options is not None:
            kw.setdefault("webhook_server", webhook.WebhookServer.from_options(webhook_options, config.metrics))
        kw.setdefault("watchdog", next((c for c in config.healthz_checks if isinstance(c, HealthzAdaptor)), None))
        kw.setdefault("elector", getattr(config, "leader_elector", None))
        if getattr(config, "namespaces", None):
            kw.setdefault("namespace", list(config.namespaces))
        mgr = cls(config.client, leader_election=config.leader_election,
                  lease_client=config.leader_election_client, metrics=config.metrics, **kw)
        for check in getattr(config, "readyz_checks", ()):
            if isinstance(check, CacheSyncCheck):
                check.watch(mgr.cache)
        return mgr

    def informer(self, api_version: str, kind: str, namespace: str | None = None, *, label_selector: str = "",
                 field_selector: str = "") -> SharedInformer:
        """The shared informer of any served kind; the manager starts it and waits for its sync."""
        if self.sharding is not None:  # a sharded kind: only the objects labelled with this shard
            label_selector = self.sharding.select(api_version, kind, namespace, label_selector)
        informer = self.cache.for_kind(api_version, kind, namespace, label_selector=label_selector,
                                       field_selector=field_selector)
        if id(informer) not in self._tracked:
            self._tracked.add(id(informer))
            self.writes.track(informer)
        return informer

    def controller(self, name: str, reconcile: Reconciler, *, read_your_writes: bool = True,
                   finalizer: str | None = None, cleanup: Cleanup | None = None, **kw: Any) -> Controller:
        """A new ``Controller`` added to this manager; chain ``.watch(informer)`` on it.

        With ``read_your_writes`` (the default), a reconcile of an object written through ``objects`` waits
        (bounded) until the cache shows that write. With ``finalizer`` and ``cleanup``, objects of the first
        watched kind carry the finalizer, and ``cleanup(obj)`` runs on their deletion (see ``_cleanup``).
        """
        kw.setdefault("metrics", self.metrics)
        if read_your_writes:
            kw.setdefault("writes", self.writes)
        finalizing = None
        if finalizer is not None or cleanup is not None:
            if finalizer is None or cleanup is None:
                raise ValueError(f"controller {name}: finalizer= and cleanup= go together")
            finalizing = Finalizing(reconcile, finalizer, cleanup, self.objects)
        c = Controller(name, finalizing.reconcile if finalizing else reconcile, **kw)
        if finalizing is not None:
            finalizing.bind(c)
        self.add(c)
        return c

    def add(self, runnable: Runnable | Callable[[threading.Event], object], *,
            needs_leader: bool | None = None) -> None:
        """Run ``runnable`` (``run(stop)``, or a function of ``stop``) on the leader, or with
        ``needs_leader=False`` on every replica. A runnable's own ``needs_leader`` attribute is the default."""
        if not hasattr(runnable, "run"):
            runnable = _Func(runnable, True if needs_leader is None else needs_leader)
        leader = bool(getattr(runnable, "needs_leader", True)) if needs_leader is None else needs_leader
        self._runnables.append((runnable, leader))

    @property
    def webhooks(self) -> WebhookServer:
        """The webhook server (the one given, else controller-runtime's defaults: port 9443, certificates in
        ``$TMPDIR/k8s-webhook-server/serving-certs``): ``@mgr.webhooks.validate("v1", "ConfigMap")``. ``run``
        starts it on every replica before the caches, if it has webhooks, and stops it after everything else."""
        if self._webhooks is None:
            self._webhooks = webhook.WebhookServer(metrics=self.metrics)
        return self._webhooks

    @property
    def event_broadcaster(self) -> EventBroadcaster:
        """The manager's ``EventBroadcaster``, made on first use on ``api_client``: Events are not fenced
        (docs/runtime.md says why). ``run`` starts it, and writes what is queued when it ends (at most 5 s)."""
        with self._events_lock:
            if self._events is None:
                self._events = EventBroadcaster(self.api_client)
            return self._events

    def event_recorder(self, name: str, host: str = "") -> EventRecorder:
        """A recorder of core/v1 Events about any object, from the component ``name`` (``source.component``),
        as controller-runtime's ``GetEventRecorderFor``: ``rec.event(obj, "Normal", "Greeted", "...")``."""
        return self.event_broadcaster.new_recorder(name, host)

    def has_synced(self) -> bool:
        """Whether every started informer of the cache holds the server's state and its handlers have seen
        it: False before the first lists, and again from a failed watch (an API server restarted, restored or
        replaced) until the relist is in, so a readyz check can report a cache not known to be current."""
        return self.cache.started and not self.cache.unsynced()

    def is_leading(self) -> bool:
        """Whether leader-only runnables are running here now (always, without leader election)."""
        return self._leading.is_set()

    def run(self, stop: threading.Event) -> int:
        """Run until ``stop`` is set (0), leadership is lost (1, unless ``on_lost="standby"``) or a runnable
        fails (1; it sets ``stop``). Returns once every thread it started has ended."""
        everyone = _Group(self._failed, stop)
        try:
            if self._events is not None:
                self._events.start()
            if not self._start_webhooks():
                return 1
            self.cache.start(stop)
            if not self._wait_for_sync(stop):
                return 0 if stop.is_set() and not self._failed.is_set() else 1
            if self.sharding is not None:  # leader-only work runs on each replica under its shard Lease
                self._runnables = self.sharding.arrange(self._runnables, self._failed, self.cache.default_namespaces)
            everyone.start([r for r, leader in self._runnables if not leader], stop)
            if self.leader_election is None:
                self._run_leader(stop, stop)
                return 1 if self._failed.is_set() else 0
            return self._campaign(stop)
        finally:
            stop.set()
            everyone.join()
            if self._events is not None:
                self._events.shutdown(5.0)  # what the work recorded, written: Events of its last moments too
            self._join_cache()
            if self._webhooks is not None:
                self._webhooks.stop()  # last, as controller-runtime: conversions may be needed to the end

    def _start_webhooks(self) -> bool:
        """Serve the webhooks before the caches start: a cache of a kind converted by this component's own
        conversion webhook cannot sync without it. False (logged, one line) when the server cannot start."""
        server = self._webhooks
        if server is None or not server.paths:
            return True
        try:
            server.start()
        except (webhook.CertificateError, OSError) as err:
            log.error("webhook server: %s", err)
            self._failed.set()
            return False
        return True

    def _join_cache(self) -> None:
        """Informers end at once on a stop, but for a list call in flight (a slow or stalled server), which
        only its own timeout ends: a stop during start-up does not wait for it (their threads are daemons)."""
        if not self.cache.join(CACHE_STOP_GRACE):
            names = ", ".join(i.list_watch.describe() for i in self.cache.informers() if not i.join(0))
            log.info("not waiting for informers still in an API call: %s", names)

    def _wait_for_sync(self, stop: threading.Event) -> bool:
        if self.cache.wait_for_cache_sync(self.sync_timeout):
            return True
        if not stop.is_set():
            names = ", ".join(i.list_watch.describe() for i in self.cache.unsynced())
            log.error("timed out after %gs waiting for informers to sync: %s", self.sync_timeout, names)
        return False

    def _run_leader(self, work_stop: threading.Event, stop: threading.Event) -> None:
        """The leader-only runnables, until ``work_stop``: set when leadership ends or the manager stops."""
        group = _Group(self._failed, stop)
        self._leading.set()
        try:
            group.start([r for r, leader in self._runnables if leader], work_stop)
            work_stop.wait()
        finally:
            self._leading.clear()
            group.join()

    def _campaign(self, stop: threading.Event) -> int:
        assert self.leader_election is not None
        while True:
            led = threading.Event()
            ended = threading.Event()

            def lead(work_stop: threading.Event, led: threading.Event = led, ended: threading.Event = ended) -> None:
                led.set()
                try:
                    self._run_leader(work_stop, stop)
                finally:
                    ended.set()

            callbacks = LeaderCallbacks(on_started_leading=lead, on_stopped_leading=lambda: None)
            observer = self.metrics.leader_status if self.metrics is not None else None
            config = LeaderElectionConfig.from_configuration(
                self.leader_election, self.lease_client or self.api_client, callbacks, identity=self.identity,
                release_on_cancel=True, status_observer=observer, watchdog=self.watchdog)
            elector = LeaderElector(config)
            self.fence.close_after(elector.leading_until)
            try:
                thread = elector.run_in_thread()
            except DuplicateElectorError as err:  # would wait forever for a Lease its own process holds
                log.error("%s", err)
                self._failed.set()
                return 1
            while thread.is_alive() and not stop.wait(0.2):
                pass
            thread.stop()
            if led.is_set():
                ended.wait()  # leader work still in hand past the elector's grace: its writes are fenced
            if stop.is_set():
                return 1 if self._failed.is_set() else 0
            if led.is_set():
                log.error("leaderelection lost")
                if self.on_lost == "exit":
                    return 1
