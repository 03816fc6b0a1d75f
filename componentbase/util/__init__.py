"""Small mechanisms every layer uses: Go durations, quantities, atomic file writes, token buckets, backoff and
waits, TTL caches, pluggy markers, field errors and build information. Imports nothing else of componentbase.
"""

from __future__ import annotations

from componentbase.util import field, version
from componentbase.util._duration import (
    Duration,
    DurationError,
    format_duration,
    parse_duration,
)
from componentbase.util._files import (
    write_atomic,
)
from componentbase.util._flowcontrol import (
    TokenBucket,
)
from componentbase.util._plugins import (
    hookimpl,
    hookspec,
    new_plugin_manager,
)
from componentbase.util._quantity import (
    QuantityError,
    parse_quantity,
    quantity_milli_value,
    quantity_value,
)
from componentbase.util._ttlcache import (
    TTLCache,
)
from componentbase.util._wait import (
    Backoff,
)

__all__ = [
    "Backoff",
    "Duration",
    "DurationError",
    "QuantityError",
    "TTLCache",
    "TokenBucket",
    "field",
    "format_duration",
    "hookimpl",
    "hookspec",
    "new_plugin_manager",
    "parse_duration",
    "parse_quantity",
    "quantity_milli_value",
    "quantity_value",
    "version",
    "write_atomic",
]
