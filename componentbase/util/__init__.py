"""Small mechanisms every layer uses: Go durations, quantities, atomic file writes, token buckets, backoff,
retries and waits on an injectable clock, TTL caches, fast deep copies of JSON data, throw-away certificate
authorities, pluggy markers, field errors, apimachinery's name and label checks and build information.
Imports nothing else of componentbase.
"""

from __future__ import annotations

from componentbase.util import field, validation, version
from componentbase.util._certs import (
    CertificateAuthority,
)
from componentbase.util._clock import (
    REAL_CLOCK,
    Clock,
    RealClock,
    wait_until,
)
from componentbase.util._duration import (
    Duration,
    DurationError,
    format_duration,
    format_duration_ns,
    parse_duration,
    parse_duration_ns,
)
from componentbase.util._files import (
    write_atomic,
)
from componentbase.util._flowcontrol import (
    TokenBucket,
)
from componentbase.util._jsoncopy import (
    deepcopy_json,
)
from componentbase.util._lazy import (
    lazy_exports,
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
    exponential_backoff,
    exponential_delay,
    jitter,
    retry_on_error,
)

__all__ = [
    "REAL_CLOCK",
    "Backoff",
    "CertificateAuthority",
    "Clock",
    "Duration",
    "DurationError",
    "QuantityError",
    "RealClock",
    "TTLCache",
    "TokenBucket",
    "deepcopy_json",
    "exponential_backoff",
    "exponential_delay",
    "field",
    "format_duration",
    "format_duration_ns",
    "hookimpl",
    "hookspec",
    "jitter",
    "lazy_exports",
    "new_plugin_manager",
    "parse_duration",
    "parse_duration_ns",
    "parse_quantity",
    "quantity_milli_value",
    "quantity_value",
    "retry_on_error",
    "validation",
    "version",
    "wait_until",
    "write_atomic",
]
