"""``Node``: a virtual node's controllers, informers and kubelet API, run by a ``componentbase.controller.Manager``.

As upstream's ``nodeutil.Node``, on the library's runtime: the manager starts the informers (pods bound to
this node; ConfigMaps and Secrets for the resource manager) and waits for their sync; then, on the leader
(every replica is one unless ``--leader-elect``), it runs the pod controller, the node controller, the
node's Lease, the provider's ping and the kubelet API. Once the pod controller takes work and the node is
registered, the node is marked Ready. A stop reverses it: the controllers stop taking work, the node is
marked NotReady, the servers close, the event sender goes last.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

from componentbase.informers import strip_managed_fields
from componentbase.util import wait_until
from componentbase_examples.virtual_kubelet import kubeapi, nodespec
from componentbase_examples.virtual_kubelet.nodecontroller import NodeController
from componentbase_examples.virtual_kubelet.podcontroller import PodController
from componentbase_examples.virtual_kubelet.provider import Provider
from componentbase_examples.virtual_kubelet.resources import Lookup, LookupFailed, ResourceManager, read_through
from componentbase_examples.virtual_kubelet.timings import Timings

__all__ = ["Node"]

log = logging.getLogger("componentbase_examples.virtual_kubelet")


#: How long the start waits for an event sender process to import its client (events queue meanwhile).
EVENT_SENDER_WAIT = 10.0
#: What the node's informers keep of each pod, ConfigMap and Secret: all but ``metadata.managedFields``, which
#: neither the node nor a provider reads. They are a third of a pod's JSON and half the nodes of its tree, so
#: the copy of each pod handed to the provider takes a third less time (46 against 69 us), and the cache less memory.
CACHE_TRANSFORM = strip_managed_fields


class Node:
    """Everything one virtual node runs. ``run(stop)`` blocks until ``stop``, returning the exit code;
    ``ready`` once it is up.

    ``manager`` is the ``componentbase.controller.Manager`` to run on (the app's, made from its config);
    without one the node makes its own, without leader election.
    """

    def __init__(self, api_client: Any, provider: Provider, *, name: str, operating_system: str = "Linux",
                 taint_key: str | None = "virtual-kubelet.io/provider", listen_port: int = 10250,
                 workers: int = 10, resync_period: float = 60.0, startup_timeout: float = 0.0,
                 resources: ResourceManager | None = None, timings: Timings | None = None,
                 serve: Callable[[Node, threading.Event], Callable[[], None]] | None = None,
                 event_sink: Literal["thread", "process", "auto"] = "thread", manager: Any = None) -> None:
        self.api_client = api_client
        self.provider = provider
        self.name = name
        self.workers = workers
        self.resync_period = resync_period
        self.startup_timeout = startup_timeout
        self.resources = resources or ResourceManager()
        self.timings = timings or Timings()
        self._serve = serve
        # "process" (the app's choice) takes the Events' API calls off this process's GIL from the start: a
        # node's pods come in bursts (a start, a rescheduled workload) too short for "auto" to pay back
        # the child's start inside them. docs/virtual-kubelet.md has the figures.
        self.event_sink = event_sink
        self.ready = threading.Event()
        self.done = threading.Event()
        self.manager = manager
        self._spec = nodespec.base_node(name, operating_system=operating_system, provider=provider.name,
                                        taint_key=taint_key, listen_port=listen_port)
        provider.configure_node(self._spec)
        nodespec.complete(self._spec)
        self.node_controller: NodeController | None = None
        self.pod_informer: Any = None
        self.pod_controller: PodController | None = None
        self.events: Any = None
        self._failure: list[str] = []
        self._stop: threading.Event | None = None

    def _setup(self, mgr: Any) -> None:
        """The informers, controllers and runnables, added to ``mgr`` (kinds resolved through discovery)."""
        pods = mgr.informer("v1", "Pod", field_selector=f"spec.nodeName={self.name}")
        configmaps, secrets = mgr.informer("v1", "ConfigMap"), mgr.informer("v1", "Secret")
        read_configmap, read_secret = self._readers()
        self.resources.bind(read_through(configmaps.get, read_configmap), read_through(secrets.get, read_secret))
        recorder = self.events.new_recorder(f"{self.name}/pod-controller", self.name)
        self.pod_controller = PodController(mgr.client, self.provider, pods, recorder, workers=self.workers,
                                            timings=self.timings, metrics=mgr.metrics)
        self.node_controller = NodeController(mgr.client, self.provider, self._spec, self.timings,
                                              stop_client=self.api_client, metrics=mgr.metrics)
        self.node_controller.watch_node(mgr.informer("v1", "Node", field_selector=f"metadata.name={self.name}"))
        mgr.add(self.pod_controller.controller)
        mgr.add(self.pod_controller.poll)
        mgr.add(self._run_node_controller)
        mgr.add(self.node_controller.lease.run)
        mgr.add(self.node_controller.ping.run)
        mgr.add(self._mark_ready)
        if self._serve is not None:
            mgr.add(self._serving)
        self.pod_informer = pods

    def _readers(self) -> tuple[Lookup, Lookup]:
        """GETs of one ConfigMap or Secret by ``namespace/name``; None when the API server has none."""
        def reader(kind: str, path: str) -> Lookup:
            def read(key: str) -> dict[str, Any] | None:
                namespace, _, name = key.partition("/")
                try:
                    return kubeapi.call(self.api_client, "GET", path, namespace=namespace, name=name,
                                        timeout=self.timings.request_timeout)
                except Exception as err:
                    if kubeapi.is_not_found(err):
                        return None
                    raise LookupFailed(f'reading {kind} "{key}": {kubeapi.describe(err)}') from err
            return read

        return (reader("configmap", "/api/v1/namespaces/{namespace}/configmaps/{name}"),
                reader("secret", "/api/v1/namespaces/{namespace}/secrets/{name}"))

    def run(self, stop: threading.Event) -> int:
        """Run until ``stop``: 0 after a clean stop, 1 when the node could not start (the reason is logged)."""
        from componentbase import events
        from componentbase.controller import Manager

        self._stop = stop
        self._deadline = time.monotonic() + self.startup_timeout if self.startup_timeout > 0 else math.inf
        mgr = self.manager or Manager(self.api_client, resync=self.resync_period, transform=CACHE_TRANSFORM)
        mgr.sync_timeout = self.startup_timeout or math.inf
        self.events = events.EventBroadcaster(self.api_client, sink=self.event_sink)
        try:
            self.events.start()
            # Its start-up CPU is spent before the pods come, not on them.
            wait_until(lambda: self.events.wait_ready(0), stop, EVENT_SENDER_WAIT)
            if stop.is_set():
                return 0
            try:
                self._setup(mgr)
            except Exception as err:
                log.error("error while starting the virtual kubelet: %s", kubeapi.describe(err))
                return 1
            code = mgr.run(stop)
            return 1 if self._failure else code
        finally:
            self.events.shutdown(2.0)
            self.done.set()

    def _run_node_controller(self, stop: threading.Event) -> None:
        assert self.node_controller is not None
        # NotReady on a stop asked for; not when leadership was lost: the node is another replica's then.
        self.node_controller.run(stop, clean_stop=lambda: self._stop is not None and self._stop.is_set())

    def fail(self, message: str) -> None:
        """Stop the node, exiting 1 with ``message`` logged on one line."""
        log.error("error while starting the virtual kubelet: %s", message)
        self._failure.append(message)
        if self._stop is not None:
            self._stop.set()

    def _mark_ready(self, stop: threading.Event) -> None:
        """Ready once the pod controller takes work and the node is registered (within the startup timeout)."""
        assert self.pod_controller is not None and self.node_controller is not None
        pods, nc = self.pod_controller, self.node_controller
        # A standby waits for the lease as long as it takes: its start-up is counted from when it leads.
        deadline = self._deadline if self.manager is None or self.manager.leader_election is None else (
            time.monotonic() + self.startup_timeout if self.startup_timeout > 0 else math.inf)
        left = deadline - time.monotonic()
        if not wait_until(lambda: pods.ready.is_set() and nc.registered.is_set(), stop,
                          None if math.isinf(left) else left):
            if not stop.is_set():
                what = "the pod controller to start" if not pods.ready.is_set() else f"node {self.name} to register"
                self.fail(f"timed out after {self.startup_timeout:g}s waiting for {what}")
            return
        nc.set_ready(True, "KubeletReady", "Kubelet is ready")
        self.ready.set()
        log.info("Node %s is ready", self.name)

    def _serving(self, stop: threading.Event) -> None:
        """The kubelet API (and ``/metrics``) while the node runs; a port taken is a one-line failure."""
        assert self._serve is not None
        try:
            stop_serving = self._serve(self, stop)
        except OSError as err:
            self.fail(str(err))
            return
        stop.wait()
        stop_serving()
