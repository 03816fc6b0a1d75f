"""A component's own Prometheus metrics: the ones component-base and client-go give every Go component.

Each component gets its own ``Metrics`` (its own registry, not prometheus-client's global one), so several
components, or several test servers, live in one process without sharing counters. The official client
has no request hook and is not patched: code that calls the API wraps each call in
:func:`observe_request`, which finds the component's metrics through the ``ApiClient`` it was given.
``prometheus_client`` is imported only when a ``Metrics`` is made, never on the ``--help`` path.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any

from componentbase.util import version

__all__ = ["CONTENT_TYPE", "UNEXPECTED", "Metrics", "metrics_for"]

#: The exposition format kube components serve (Prometheus text 0.0.4).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: What a label value outside its ``--allow-metric-labels`` list is replaced with, as component-base does.
UNEXPECTED = "unexpected"

#: client-go's buckets for request latency, in seconds.
_LATENCY_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)

#: client-go's workqueue buckets: 10 ns to 10 s, by tens.
_QUEUE_BUCKETS = tuple(1e-8 * 10**i for i in range(10))

#: controller-runtime's buckets for reconcile time, in seconds.
_RECONCILE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8,
                      0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30,
                      40, 50, 60)

_BY_CLIENT: weakref.WeakKeyDictionary[Any, Metrics] = weakref.WeakKeyDictionary()
_BY_CLIENT_LOCK = threading.Lock()


class Metrics:
    """The metrics one component owns, in a registry of its own.

    ``disabled`` names metrics never registered (``--disabled-metrics``); ``allow_labels`` maps
    ``"metric,label"`` to the values that label may take (``--allow-metric-labels``).
    """

    def __init__(
        self,
        *,
        disabled: Iterable[str] = (),
        allow_labels: Mapping[str, Collection[str]] | None = None,
        info: version.Info | None = None,
        process_metrics: bool = True,
    ) -> None:
        # ~0.1 s to import: loaded when metrics are built, never for --help
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
        from prometheus_client.process_collector import ProcessCollector

        self.disabled = frozenset(disabled)
        self.allow_labels = {key: frozenset(values) for key, values in (allow_labels or {}).items()}
        self.registry = CollectorRegistry(auto_describe=True)
        reg = self.registry
        self._leader = self._maybe(Gauge, "leader_election_master_status",
                                   "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
                                   "backup, 1 indicates master. 'name' is the string used to identify the lease.",
                                   ["name"])
        self._latency = self._maybe(Histogram, "rest_client_request_duration_seconds",
                                    "Request latency in seconds. Broken down by verb, and host.",
                                    ["verb", "host"], buckets=_LATENCY_BUCKETS)
        self._requests = self._maybe(Counter, "rest_client_requests",
                                     "Number of HTTP requests, partitioned by status code, method, and host.",
                                     ["code", "method", "host"], public_name="rest_client_requests_total")
        self._reconciles = self._maybe(Counter, "controller_runtime_reconcile",
                                       "Total number of reconciliations per controller", ["controller", "result"],
                                       public_name="controller_runtime_reconcile_total")
        self._reconcile_errors = self._maybe(Counter, "controller_runtime_reconcile_errors",
                                             "Total number of reconciliation errors per controller", ["controller"],
                                             public_name="controller_runtime_reconcile_errors_total")
        self._terminal_errors = self._maybe(Counter, "controller_runtime_terminal_reconcile_errors",
                                            "Total number of terminal reconciliation errors per controller",
                                            ["controller"],
                                            public_name="controller_runtime_terminal_reconcile_errors_total")
        self._panics = self._maybe(Counter, "controller_runtime_reconcile_panics",
                                   "Total number of reconciliation panics per controller", ["controller"],
                                   public_name="controller_runtime_reconcile_panics_total")
        self._active_workers = self._maybe(Gauge, "controller_runtime_active_workers",
                                           "Number of currently used workers per controller", ["controller"])
        self._reconcile_time = self._maybe(Histogram, "controller_runtime_reconcile_time_seconds",
                                           "Length of time per reconciliation per controller", ["controller"],
                                           buckets=_RECONCILE_BUCKETS)
        self._max_reconciles = self._maybe(Gauge, "controller_runtime_max_concurrent_reconciles",
                                           "Maximum number of concurrent reconciles per controller", ["controller"])
        self._queue_depth = self._maybe(Gauge, "workqueue_depth", "Current depth of workqueue", ["name"])
        self._queue_adds = self._maybe(Counter, "workqueue_adds", "Total number of adds handled by workqueue",
                                       ["name"], public_name="workqueue_adds_total")
        self._queue_latency = self._maybe(Histogram, "workqueue_queue_duration_seconds",
                                          "How long in seconds an item stays in workqueue before being requested.",
                                          ["name"], buckets=_QUEUE_BUCKETS)
        self._queue_work = self._maybe(Histogram, "workqueue_work_duration_seconds",
                                       "How long in seconds processing an item from workqueue takes.",
                                       ["name"], buckets=_QUEUE_BUCKETS)
        self._queue_retries = self._maybe(Counter, "workqueue_retries", "Total number of retries handled by workqueue",
                                          ["name"], public_name="workqueue_retries_total")
        self._in_flight = _InFlight(self.disabled)
        reg.register(self._in_flight)
        build = self._maybe(Gauge, "kubernetes_build_info",
                            "A metric with a constant '1' value labeled by major, minor, git version, git commit, "
                            "git tree state, build date, Python version, compiler, and platform on which this "
                            "binary was built.",
                            ["major", "minor", "git_version", "git_commit", "git_tree_state", "build_date",
                             "python_version", "compiler", "platform"])
        if build is not None:
            i = info or version.get()
            build.labels(i.major, i.minor, i.git_version, i.git_commit, i.git_tree_state, i.build_date,
                         i.python_version, i.compiler, i.platform).set(1)
        if process_metrics:
            ProcessCollector(registry=reg)
        self._series: dict[tuple[str, ...], Any] = {}

    def _maybe(self, kind: Any, name: str, doc: str, labels: list[str], *, public_name: str = "",
               **kw: Any) -> Any:
        """Register a metric unless ``--disabled-metrics`` names it (by the name scrapers see)."""
        if (public_name or name) in self.disabled:
            return None
        return kind(name, doc, labels, registry=self.registry, **kw)

    def _label(self, metric: str, label: str, value: str) -> str:
        allowed = self.allow_labels.get(f"{metric},{label}")
        return value if allowed is None or value in allowed else UNEXPECTED

    def leader_status(self, name: str, leading: bool) -> None:
        """A ``LeaderStatusObserver``: pass it as ``status_observer`` to the leader election config."""
        if self._leader is not None:
            self._leader.labels(self._label("leader_election_master_status", "name", name)).set(1 if leading else 0)

    def observe_rest_request(self, method: str, host: str, code: str, seconds: float) -> None:
        latency, requests = self._cached(("rest", method, host, code), self._rest_series)
        if latency is not None:
            latency.observe(seconds)
        if requests is not None:
            requests.inc()

    def _rest_series(self, method: str, host: str, code: str) -> tuple[Any, Any]:
        latency = requests = None
        if self._latency is not None:
            m = "rest_client_request_duration_seconds"
            latency = self._latency.labels(self._label(m, "verb", method), self._label(m, "host", host))
        if self._requests is not None:
            m = "rest_client_requests_total"
            requests = self._requests.labels(self._label(m, "code", code), self._label(m, "method", method),
                                             self._label(m, "host", host))
        return latency, requests

    def observe_reconcile(self, controller: str, result: str, seconds: float) -> None:
        """One reconcile of ``controller``: ``result`` is success, error, requeue or requeue_after."""
        total, errors, duration = self._cached(("reconcile", controller, result), self._reconcile_series)
        if total is not None:
            total.inc()
        if errors is not None:
            errors.inc()
        if duration is not None:
            duration.observe(seconds)

    def observe_terminal_error(self, controller: str) -> None:
        """A reconcile of ``controller`` failed for good (counted as an error by ``observe_reconcile`` too)."""
        if self._terminal_errors is not None:
            self._terminal_errors.labels(controller).inc()

    def observe_panic(self, controller: str) -> None:
        """A reconcile of ``controller`` ended by what Go would call a panic (see ``Controller``)."""
        if self._panics is not None:
            self._panics.labels(controller).inc()

    def worker_active(self, controller: str, delta: int) -> None:
        """A worker of ``controller`` took a key (``delta`` 1) or finished it (-1)."""
        gauge = self._cached(("active", controller), self._active_series)
        if gauge is not None:
            gauge.inc(delta)

    def _active_series(self, controller: str) -> Any:
        return _child(self._active_workers, controller)

    def _reconcile_series(self, controller: str, result: str) -> tuple[Any, Any, Any]:
        return (_child(self._reconciles, controller, result),
                _child(self._reconcile_errors, controller) if result == "error" else None,
                _child(self._reconcile_time, controller))

    def _cached(self, key: tuple[str, ...], make: Any) -> Any:
        """The series ``make(*key[1:])`` returns, made once per key: prometheus-client's ``labels()`` checks
        and looks its values up anew on each call (about 2 us), and each item through a controller's work
        queue and reconcile touches eight series."""
        found = self._series.get(key)
        if found is None:
            found = self._series[key] = make(*key[1:])
        return found

    def controller_started(self, controller: str, max_concurrent_reconciles: int) -> None:
        """Report a controller's worker count, and start its counters at zero as controller-runtime does."""
        if self._max_reconciles is not None:
            self._max_reconciles.labels(controller).set(max_concurrent_reconciles)
        if self._reconciles is not None:
            for result in ("success", "error", "requeue", "requeue_after"):
                self._reconciles.labels(controller, result)
        for counter in (self._reconcile_errors, self._terminal_errors, self._panics):
            if counter is not None:
                counter.labels(controller)
        if self._active_workers is not None:
            self._active_workers.labels(controller).set(0)

    # --- a ``workqueue.QueueMetrics``: client-go's workqueue metrics, by queue name ----------------

    def queue_added(self, name: str, depth: int) -> None:
        adds, gauge, _, _, _ = self._cached(("queue", name), self._queue_series)
        if adds is not None:
            adds.inc()
        if gauge is not None:
            gauge.set(depth)

    def queue_taken(self, name: str, depth: int, waited: float) -> None:
        _, gauge, latency, _, _ = self._cached(("queue", name), self._queue_series)
        if gauge is not None:
            gauge.set(depth)
        if latency is not None:
            latency.observe(waited)

    def queue_done(self, name: str, worked: float) -> None:
        work = self._cached(("queue", name), self._queue_series)[3]
        if work is not None:
            work.observe(worked)

    def queue_retried(self, name: str) -> None:
        retries = self._cached(("queue", name), self._queue_series)[4]
        if retries is not None:
            retries.inc()

    def queue_created(self, name: str, in_flight: Callable[[], list[float]]) -> None:
        self._in_flight.queues[name] = in_flight

    def _queue_series(self, name: str) -> tuple[Any, ...]:
        return tuple(_child(m, name) for m in (self._queue_adds, self._queue_depth, self._queue_latency,
                                               self._queue_work, self._queue_retries))

    def track(self, api_client: Any) -> None:
        """Count the requests :func:`observe_request` sees on ``api_client`` in these metrics."""
        if api_client is not None:
            with _BY_CLIENT_LOCK:
                _BY_CLIENT[api_client] = self

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric registered here."""
        # ~0.1 s to import: loaded when metrics are built, never for --help
        from prometheus_client import generate_latest

        return generate_latest(_WithoutCreated(self.registry))


class _WithoutCreated:
    """A registry's metrics without the ``<name>_created`` series prometheus_client adds to each counter,
    histogram and summary: client_golang's text exposition has none, so no kube dashboard or alert expects
    them, and they doubled the series a scrape carries. (``disable_created_metrics`` would do it for every
    registry of the process, other libraries' included.)"""

    def __init__(self, registry: Any) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Any]:
        for metric in self.registry.collect():
            if metric.type in ("counter", "histogram", "summary"):
                metric.samples = [s for s in metric.samples if s.name != metric.name + "_created"]
            yield metric


class _InFlight:
    """client-go's gauges of work in progress, by queue: computed when scraped from the items each queue has in
    work, where client-go sets them every 500 ms, so a scrape sees the work stuck now."""

    UNFINISHED = "workqueue_unfinished_work_seconds"
    LONGEST = "workqueue_longest_running_processor_seconds"

    def __init__(self, disabled: frozenset[str]) -> None:
        self.disabled = disabled
        #: Each queue name's ``in_flight``; a new queue of a name (a controller started again) replaces the old.
        self.queues: dict[str, Callable[[], list[float]]] = {}

    def _families(self) -> tuple[Any, Any]:
        from prometheus_client.core import GaugeMetricFamily  # ~0.1 s to import; loaded by Metrics already

        unfinished = GaugeMetricFamily(
            self.UNFINISHED, "How many seconds of work has done that is in progress and hasn't been observed by "
            "work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by "
            "observing the rate at which this increases.", labels=["name"])
        longest = GaugeMetricFamily(self.LONGEST, "How many seconds has the longest running processor for "
                                    "workqueue been running.", labels=["name"])
        return (None if self.UNFINISHED in self.disabled else unfinished,
                None if self.LONGEST in self.disabled else longest)

    def describe(self) -> list[Any]:
        return [f for f in self._families() if f is not None]

    def collect(self) -> Iterator[Any]:
        unfinished, longest = self._families()
        for name, in_flight in list(self.queues.items()):
            seconds = in_flight()
            if unfinished is not None:
                unfinished.add_metric([name], sum(seconds))
            if longest is not None:
                longest.add_metric([name], max(seconds, default=0.0))
        yield from (f for f in (unfinished, longest) if f is not None)


def _child(metric: Any, *values: str) -> Any:
    """``metric.labels(*values)``, or None for a disabled metric."""
    return None if metric is None else metric.labels(*values)


def metrics_for(api_client: Any) -> Metrics | None:
    """The metrics tracking ``api_client``, if any component tracks it."""
    if api_client is None:
        return None
    with _BY_CLIENT_LOCK:
        return _BY_CLIENT.get(api_client)
