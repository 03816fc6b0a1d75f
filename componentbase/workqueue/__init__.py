"""Work queues, as client-go's ``util/workqueue``: a de-duplicating queue, its rate limiters, and worker
pools that stop cleanly (``run_workers`` over a queue, ``TaskPool`` over submitted calls).
"""

from __future__ import annotations

from componentbase.workqueue._queue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    QueueMetrics,
    RateLimiter,
    RateLimitingQueue,
    ShutDown,
    WorkQueue,
    default_controller_rate_limiter,
)
from componentbase.workqueue._workers import (
    TaskPool,
    Workers,
    run_workers,
)

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "MaxOfRateLimiter",
    "QueueMetrics",
    "RateLimiter",
    "RateLimitingQueue",
    "ShutDown",
    "TaskPool",
    "WorkQueue",
    "Workers",
    "default_controller_rate_limiter",
    "run_workers",
]
