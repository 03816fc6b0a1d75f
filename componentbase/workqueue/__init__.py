"""Work queues, as client-go's ``util/workqueue``: a de-duplicating queue, its rate limiters and workers.
"""

from __future__ import annotations

from componentbase.workqueue._queue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimitingQueue,
    ShutDown,
    Workers,
    WorkQueue,
    default_controller_rate_limiter,
    run_workers,
)

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "MaxOfRateLimiter",
    "RateLimitingQueue",
    "ShutDown",
    "WorkQueue",
    "Workers",
    "default_controller_rate_limiter",
    "run_workers",
]
