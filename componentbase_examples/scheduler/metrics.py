"""The kube-scheduler metrics users alert on, in the component's own registry (served on ``/metrics``).

``scheduler_schedule_attempts_total{result,profile}`` (scheduled, unschedulable, error),
``scheduler_scheduling_attempt_duration_seconds{result,profile}`` (the scheduling cycle and, for a placed
pod, its binding), ``scheduler_pending_pods{queue}`` (active, backoff, unschedulable, gated), read from
the queue at each scrape, ``scheduler_queue_incoming_pods_total{queue,event}``,
``scheduler_preemption_attempts_total``, ``scheduler_preemption_victims`` and
``scheduler_permit_wait_duration_seconds{result}``. Names, help texts and buckets are kube-scheduler's;
``--disabled-metrics`` applies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import componentbase

__all__ = ["ERROR", "SCHEDULED", "UNSCHEDULABLE", "SchedulerMetrics"]

SCHEDULED, UNSCHEDULABLE, ERROR = "scheduled", "unschedulable", "error"
#: kube's ExponentialBuckets(0.001, 2, 15).
_ATTEMPT_BUCKETS = tuple(0.001 * 2**i for i in range(15))
#: kube's LinearBuckets(5, 5, 10).
_VICTIM_BUCKETS = tuple(5.0 * (i + 1) for i in range(10))


def _reader(pending: Callable[[], dict[str, int]], queue: str) -> Callable[[], float]:
    return lambda: float(pending()[queue])


class SchedulerMetrics:
    """The scheduler's metrics, or no-ops when the component has no metrics registry."""

    def __init__(self, metrics: componentbase.metrics.Metrics | None, pending: Callable[[], dict[str, int]]) -> None:
        self._attempts: Any = None
        self._duration: Any = None
        self._preemptions: Any = None
        self._victims: Any = None
        self._permit_wait: Any = None
        self._incoming: Any = None
        if metrics is None:
            return
        # ~0.1 s to import: loaded when a scheduler is built, never for --help
        from prometheus_client import Counter, Gauge, Histogram

        reg, off = metrics.registry, metrics.disabled
        if "scheduler_schedule_attempts_total" not in off:
            self._attempts = Counter(
                "scheduler_schedule_attempts", "Number of attempts to schedule pods, by the result. 'unschedulable' "
                "means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
                ["result", "profile"], registry=reg)
        if "scheduler_scheduling_attempt_duration_seconds" not in off:
            self._duration = Histogram(
                "scheduler_scheduling_attempt_duration_seconds",
                "Scheduling attempt latency in seconds (scheduling algorithm + binding)", ["result", "profile"],
                buckets=_ATTEMPT_BUCKETS, registry=reg)
        if "scheduler_pending_pods" not in off:
            gauge = Gauge("scheduler_pending_pods", "Number of pending pods, by the queue type. 'active' means "
                          "number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' "
                          "means number of pods in unschedulablePods that the scheduler attempted to schedule and "
                          "failed; 'gated' is the number of unschedulable pods that the scheduler never attempted "
                          "to schedule because they are gated.", ["queue"], registry=reg)
            for queue in ("active", "backoff", "unschedulable", "gated"):
                gauge.labels(queue).set_function(_reader(pending, queue))
        if "scheduler_queue_incoming_pods_total" not in off:
            self._incoming = Counter("scheduler_queue_incoming_pods", "Number of pods added to scheduling queues "
                                     "by event and queue type.", ["queue", "event"], registry=reg)
        if "scheduler_preemption_attempts_total" not in off:
            self._preemptions = Counter("scheduler_preemption_attempts", "Total preemption attempts in the cluster "
                                        "till now", registry=reg)
        if "scheduler_preemption_victims" not in off:
            self._victims = Histogram("scheduler_preemption_victims", "Number of selected preemption victims",
                                      buckets=_VICTIM_BUCKETS, registry=reg)
        if "scheduler_permit_wait_duration_seconds" not in off:
            self._permit_wait = Histogram("scheduler_permit_wait_duration_seconds", "Duration of waiting on permit.",
                                          ["result"], buckets=_ATTEMPT_BUCKETS, registry=reg)

    def attempt(self, result: str, profile: str, seconds: float) -> None:
        """One scheduling attempt ended with ``result`` after ``seconds``."""
        if self._attempts is not None:
            self._attempts.labels(result, profile).inc()
        if self._duration is not None:
            self._duration.labels(result, profile).observe(seconds)

    def queue_incoming(self, queue: str, event: str) -> None:
        """A pod entered ``queue`` (active, backoff, unschedulable) on ``event`` (PodAdd, NodeAdd...)."""
        if self._incoming is not None:
            self._incoming.labels(queue, event).inc()

    def preemption_attempt(self) -> None:
        """DefaultPreemption's PostFilter ran (kube counts every run, whatever it found)."""
        if self._preemptions is not None:
            self._preemptions.inc()

    def preemption_victims(self, count: int) -> None:
        """A candidate was chosen: ``count`` victims go."""
        if self._victims is not None:
            self._victims.observe(count)

    def permit_wait(self, result: str, seconds: float) -> None:
        """A pod's wait at Permit ended: ``Success`` or ``Unschedulable`` (kube's code names)."""
        if self._permit_wait is not None:
            self._permit_wait.labels(result).observe(seconds)
