"""controller-runtime's webhook metrics (pkg/webhook/internal/metrics), in the component's registry.

``controller_runtime_webhook_requests_total{webhook,code}``, ``controller_runtime_webhook_latency_seconds
{webhook}`` and ``controller_runtime_webhook_requests_in_flight{webhook}``, ``webhook`` being the path. The
latency carries no ``code``, as in every controller-runtime release to date. Counters for codes 200 and 500
start at zero, as controller-runtime starts them, so a rate over them is defined before the first error.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

__all__ = ["WebhookMetrics"]

REQUESTS = "controller_runtime_webhook_requests_total"
LATENCY = "controller_runtime_webhook_latency_seconds"
IN_FLIGHT = "controller_runtime_webhook_requests_in_flight"

_BY_REGISTRY: weakref.WeakKeyDictionary[Any, WebhookMetrics] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


class WebhookMetrics:
    """The three series of one registry (several webhook servers of one component share them)."""

    def __init__(self, registry: Any, disabled: frozenset[str]) -> None:
        from prometheus_client import Counter, Gauge, Histogram  # ~0.1 s: loaded when a server is made

        self.requests = None if REQUESTS in disabled else Counter(
            REQUESTS.removesuffix("_total"), "Total number of admission requests by HTTP status code.",
            ["webhook", "code"], registry=registry)
        self.latency = None if LATENCY in disabled else Histogram(
            LATENCY, "Histogram of the latency of processing admission requests", ["webhook"], registry=registry)
        self.in_flight = None if IN_FLIGHT in disabled else Gauge(
            IN_FLIGHT, "Current number of admission requests being served.", ["webhook"], registry=registry)

    @classmethod
    def of(cls, metrics: Any) -> WebhookMetrics:
        """The series in ``metrics`` (a ``componentbase.metrics.Metrics``), registered there once."""
        with _LOCK:
            found = _BY_REGISTRY.get(metrics.registry)
            if found is None:
                found = _BY_REGISTRY[metrics.registry] = cls(metrics.registry, frozenset(metrics.disabled))
            return found

    def path(self, path: str) -> tuple[Any, Any, Any]:
        """(latency, in-flight) children of ``path`` and the counter curried on it; the usual codes at zero."""
        if self.requests is not None:
            for code in ("200", "500"):
                self.requests.labels(path, code)
        return (None if self.latency is None else self.latency.labels(path),
                None if self.in_flight is None else self.in_flight.labels(path), self.requests)
