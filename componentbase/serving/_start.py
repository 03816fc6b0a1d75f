"""Starting a component's secure serving from its ``Config``, as kube-scheduler's ``Run`` does first.

Serving starts before leader election and the component's work, and keeps answering while the replica
waits as a candidate: ``/healthz`` must say "alive" for a replica that is not leading.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from componentbase.metrics import Metrics
from componentbase.serving import _healthz as healthz
from componentbase.serving import configz
from componentbase.serving._endpoints import Endpoints
from componentbase.serving._server import SecureServer

__all__ = ["start_serving"]


def start_serving(config: Any, stopping: threading.Event, checks: Iterable[healthz.HealthChecker] = ()) -> SecureServer:
    """Serve ``config.secure_serving``; ``checks`` join ``/healthz``, ``/livez`` and ``/readyz``.

    ``stopping`` makes ``/readyz`` fail once set. Raise OSError when the port cannot be bound.
    """
    info = config.secure_serving
    if info is None:
        raise ValueError("secure serving is not configured")
    if config.metrics is None:
        config.metrics = Metrics()
    metrics: Metrics = config.metrics
    authn = config.authentication
    authz = config.authorization
    for api in (config.client, authn.token.api_client if authn is not None and authn.token is not None else None,
                authz.api_client if authz is not None else None):
        metrics.track(api)
    all_checks = [healthz.PING, *config.healthz_checks, *checks]
    app = Endpoints(authentication=authn, authorization=authz, checks=all_checks,
                    readyz_checks=[healthz.ShutdownCheck(stopping), *config.readyz_checks],
                    configz=config.configz_registry or configz.default_registry(), metrics=metrics)
    context = info.ssl_context(authn.client_ca if authn is not None else "")
    return SecureServer(info.bind_address, info.port, context, app, info.shutdown_timeout, limits=info.limits,
                        reuse_port=info.reuse_port).start()
