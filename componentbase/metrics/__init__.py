"""A component's own Prometheus metrics (its own registry), and the flags that shape them.
"""

from __future__ import annotations

from componentbase.metrics._options import (
    MetricsOptions,
)
from componentbase.metrics._registry import (
    CONTENT_TYPE,
    UNEXPECTED,
    Metrics,
    metrics_for,
)

__all__ = [
    "CONTENT_TYPE",
    "UNEXPECTED",
    "Metrics",
    "MetricsOptions",
    "metrics_for",
]
