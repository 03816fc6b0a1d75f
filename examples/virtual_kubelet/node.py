"""``Node``: a node controller, a pod controller, their informers and the kubelet API, run together.

As upstream's ``nodeutil.Node``: informers start first (pods bound to this node; ConfigMaps and Secrets
for the resource manager), the pod controller starts once they have synced, the node registers once
the pod controller takes work, and only then is the node marked Ready. A stop reverses it: the pod
controller stops taking work, the node is marked NotReady, the servers close.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

from componentbase.util import wait_until
from examples.virtual_kubelet import kubeapi, nodespec
from examples.virtual_kubelet.nodecontroller import NodeController
from examples.virtual_kubelet.podcontroller import PodController
from examples.virtual_kubelet.provider import Provider
from examples.virtual_kubelet.resources import Lookup, LookupFailed, ResourceManager, read_through
from examples.virtual_kubelet.timings import Timings

__all__ = ["Node", "StartupTimeout"]

log = logging.getLogger("examples.virtual_kubelet")


#: How long the start waits for an event sender process to import its client (events queue meanwhile).
EVENT_SENDER_WAIT = 10.0


class StartupTimeout(Exception):
    """The node was not up within ``--startup-timeout``; the message says what it was waiting for."""


class Node:
    """Everything one virtual node runs. ``run(stop)`` blocks until ``stop``; ``ready`` once it is up."""

    def __init__(self, api_client: Any, provider: Provider, *, name: str, operating_system: str = "Linux",
                 taint_key: str | None = "virtual-kubelet.io/provider", listen_port: int = 10250,
                 workers: int = 10, resync_period: float = 60.0, startup_timeout: float = 0.0,
                 resources: ResourceManager | None = None, timings: Timings | None = None,
                 serve: Callable[[Node, threading.Event], Callable[[], None]] | None = None,
                 event_sink: Literal["thread", "process"] = "thread") -> None:
        self.api_client = api_client
        self.provider = provider
        self.name = name
        self.workers = workers
        self.resync_period = resync_period
        self.startup_timeout = startup_timeout
        self.resources = resources or ResourceManager()
        self.timings = timings or Timings()
        self._serve = serve
        # "process" (the app's choice) takes the Events' API calls off this process's GIL, where they
        # slow the status writes: docs/virtual-kubelet.md has the figures.
        self.event_sink = event_sink
        self.ready = threading.Event()
        self.done = threading.Event()
        spec = nodespec.base_node(name, operating_system=operating_system, provider=provider.name,
                                  taint_key=taint_key, listen_port=listen_port)
        provider.configure_node(spec)
        nodespec.complete(spec)
        self.node_controller = NodeController(api_client, provider, spec, self.timings)
        self.pod_informer: Any = None
        self.pod_controller: PodController | None = None
        self.events: Any = None

    def _informers(self) -> tuple[Any, list[Any]]:
        from componentbase import informers

        pods = informers.InformerFactory(self.api_client, self.resync_period).pods(
            field_selector=f"spec.nodeName={self.name}")
        others = informers.InformerFactory(self.api_client, self.resync_period)
        configmaps, secrets = others.configmaps(), others.secrets()
        read_configmap, read_secret = self._readers()
        self.resources.bind(read_through(configmaps.get, read_configmap), read_through(secrets.get, read_secret))
        return pods, [pods, configmaps, secrets]

    def _readers(self) -> tuple[Lookup, Lookup]:
        """GETs of one ConfigMap or Secret by ``namespace/name``; None when the API server has none."""
        from kubernetes.client import CoreV1Api

        core = CoreV1Api(self.api_client)

        def reader(kind: str, call: Callable[..., Any]) -> Lookup:
            def read(key: str) -> dict[str, Any] | None:
                namespace, _, name = key.partition("/")
                try:
                    return kubeapi.body(call(name, namespace, _preload_content=False,
                                             _request_timeout=self.timings.request_timeout))
                except Exception as err:
                    if kubeapi.is_not_found(err):
                        return None
                    raise LookupFailed(f'reading {kind} "{key}": {kubeapi.describe(err)}') from err
            return read

        return reader("configmap", core.read_namespaced_config_map), reader("secret", core.read_namespaced_secret)

    def run(self, stop: threading.Event) -> None:
        """Run until ``stop``; StartupTimeout if the node is not up within ``startup_timeout``."""
        from componentbase import events

        inner = threading.Event()
        deadline = time.monotonic() + self.startup_timeout if self.startup_timeout > 0 else None
        self.events = events.EventBroadcaster(self.api_client, sink=self.event_sink)
        self.events.start(inner)
        recorder = self.events.new_recorder(f"{self.name}/pod-controller", self.name)
        stop_serving = self._serve(self, inner) if self._serve is not None else (lambda: None)
        self.events.wait_ready(EVENT_SENDER_WAIT)  # its start-up CPU is spent before the pods come, not on them
        pods, all_informers = self._informers()
        self.pod_informer = pods
        threads: list[threading.Thread] = []
        try:
            for informer in all_informers:
                informer.start(inner)
            self._wait(stop, deadline, lambda: all(i.has_synced() for i in all_informers),
                       lambda: "informers to sync: " + ", ".join(
                           i.list_watch.describe() for i in all_informers if not i.has_synced()))
            self.pod_controller = PodController(self.api_client, self.provider, pods, recorder, workers=self.workers,
                                                timings=self.timings, resync_period=self.resync_period)
            threads.append(_start(self.pod_controller.run, inner, "pod-controller"))
            self._wait(stop, deadline, self.pod_controller.ready.is_set, lambda: "the pod controller to start")
            threads.append(_start(self.node_controller.run, inner, "node-controller"))
            self._wait(stop, deadline, self.node_controller.registered.is_set,
                       lambda: f"node {self.name} to register")
            if stop.is_set():
                return
            self.node_controller.set_ready(True, "KubeletReady", "Kubelet is ready")
            self.ready.set()
            log.info("Node %s is ready", self.name)
            stop.wait()
        finally:
            inner.set()
            for thread in threads:
                thread.join(self.timings.request_timeout)
            if self.node_controller.registered.is_set():
                self.node_controller.mark_not_ready()
            stop_serving()
            self.events.shutdown(2.0)
            self.done.set()

    def _wait(self, stop: threading.Event, deadline: float | None, done: Callable[[], bool],
              what: Callable[[], str]) -> None:
        left = None if deadline is None else deadline - time.monotonic()
        if not wait_until(done, stop, left) and not stop.is_set():
            raise StartupTimeout(f"timed out after {self.startup_timeout:g}s waiting for {what()}")


def _start(target: Callable[[threading.Event], None], stop: threading.Event, name: str) -> threading.Thread:
    thread = threading.Thread(target=target, args=(stop,), name=name, daemon=True)
    thread.start()
    return thread
