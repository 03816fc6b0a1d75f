"""Logging the way klog does it: ``-v`` levels, ``--vmodule``, text or JSON lines."""

from componentbase.logs._format import (
    JSONFormatter,
    KlogFormatter,
)
from componentbase.logs._options import (
    FORMATS,
    LogsOptions,
    V,
    configure,
)

__all__ = ["FORMATS", "JSONFormatter", "KlogFormatter", "LogsOptions", "V", "configure"]
