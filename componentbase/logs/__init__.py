"""Logging the way klog does it: ``-v`` levels, ``--vmodule``, text or JSON lines."""

from componentbase.logs._options import (
    LogsOptions,
    V,
    configure,
)

__all__ = ["LogsOptions", "V", "configure"]
