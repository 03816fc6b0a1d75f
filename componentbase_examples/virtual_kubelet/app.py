"""Turning a completed config into a running virtual node: provider, node, kubelet API, metrics."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

import componentbase
import componentbase.tracing
from componentbase_examples.virtual_kubelet.kubeletapi import KubeletAPI
from componentbase_examples.virtual_kubelet.metricsserver import serve_metrics
from componentbase_examples.virtual_kubelet.node import CACHE_TRANSFORM, Node
from componentbase_examples.virtual_kubelet.provider import Provider, installed_providers
from componentbase_examples.virtual_kubelet.provider_types import ProviderContext
from componentbase_examples.virtual_kubelet.resources import ResourceManager
from componentbase_examples.virtual_kubelet.timings import Timings

__all__ = ["build_provider", "kubelet_server", "run_node"]

log = logging.getLogger("componentbase_examples.virtual_kubelet")


class _KubeletEvents:
    """The provider's ``record_event``: the node's broadcaster exists only once the node runs."""

    def __init__(self, node_name: str) -> None:
        self.node_name = node_name
        self.node: Node | None = None
        self._recorder: Any = None

    def __call__(self, pod: dict[str, Any], type: str, reason: str, message: str) -> None:
        if self._recorder is None:
            broadcaster = self.node.events if self.node is not None else None
            if broadcaster is None:
                return  # the node is not running: nobody to send it
            self._recorder = broadcaster.new_recorder("kubelet", self.node_name)
        self._recorder.event(pod, type, reason, message)


def build_provider(config: Any, resources: ResourceManager,
                   record_event: Callable[[dict[str, Any], str, str, str], None]) -> Provider:
    """The provider ``--provider`` names, built with its decoded ``--provider-config``."""
    opts = config.options
    spec = installed_providers(config.plugins)[opts.provider]
    context = ProviderContext(node_name=opts.node_name, operating_system=opts.operating_system,
                              internal_ip=os.environ.get("VKUBELET_POD_IP", ""), daemon_port=opts.listen_port,
                              cluster_domain=opts.cluster_domain, config=config.provider_config, resources=resources,
                              record_event=record_event)
    return Provider.build(spec, context)


def kubelet_server(config: Any) -> Callable[[Node, threading.Event], Callable[[], None]]:
    """What ``Node`` calls to start the kubelet API over TLS (and ``/metrics``); returns how to stop them."""

    def serve(node: Node, stopping: threading.Event) -> Callable[[], None]:
        from componentbase.serving import SecureServer

        info = config.kubelet_serving
        ready = componentbase.serving.NamedCheck("node-ready", lambda: _ready(node))
        app = KubeletAPI(node.provider, lambda: node.pod_informer.list() if node.pod_informer else [],
                         node_name=node.name, authentication=config.authentication,
                         authorization=config.authorization, checks=[ready],
                         stream_idle_timeout=float(config.options.stream_idle_timeout),
                         stream_creation_timeout=float(config.options.stream_creation_timeout))
        server = SecureServer(info.bind_address, info.port, info.ssl_context(
            config.authentication.client_ca if config.authentication is not None else ""), app,
            info.shutdown_timeout, limits=info.limits).start()
        metrics_addr = config.options.metrics_addr
        metrics = serve_metrics(metrics_addr, config.metrics, info.limits) if metrics_addr else None

        def stop() -> None:
            server.stop()
            if metrics is not None:
                metrics.stop()

        return stop

    return serve


def _ready(node: Node) -> None:
    if not node.ready.is_set():
        raise RuntimeError("the node is not ready yet")


def run_node(completed: Any, stop: threading.Event, timings: Timings | None = None) -> int:
    """Run until ``stop`` on a ``Manager`` made from the completed config: 0 after a clean stop, 1 when the
    node could not start or leadership was lost."""
    from componentbase.controller import Manager
    from componentbase.metrics import Metrics

    config = completed.config
    opts = config.options
    config.metrics = config.metrics or Metrics()
    config.metrics.track(config.client)
    resources = ResourceManager()
    kubelet_events = _KubeletEvents(opts.node_name)
    provider = build_provider(config, resources, kubelet_events)
    taint = None if opts.disable_taint else opts.taint_key
    manager = Manager.from_config(completed, resync=float(opts.full_resync_period), transform=CACHE_TRANSFORM)
    node = Node(config.client, provider, name=opts.node_name, operating_system=opts.operating_system,
                taint_key=taint, listen_port=opts.listen_port, workers=opts.pod_sync_workers,
                resync_period=float(opts.full_resync_period), startup_timeout=float(opts.startup_timeout),
                resources=resources, timings=timings, serve=kubelet_server(config), event_sink="process",
                manager=manager)
    kubelet_events.node = node
    # Upstream's trace tags: which node, provider and OS the spans come from.
    tracing = componentbase.tracing.start_tracing(
        opts.trace_exporters, opts.trace_sample_rate, service_name="virtual-kubelet",
        attributes={"nodeName": opts.node_name, "provider": opts.provider, "operatingSystem": opts.operating_system})
    try:
        return node.run(stop)
    finally:
        provider.shutdown()
        if tracing is not None:
            tracing.shutdown()  # sends the spans still batched
