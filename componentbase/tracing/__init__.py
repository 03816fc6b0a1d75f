"""OpenTelemetry tracing for a component: flags that start it, and ``span()``, a no-op while it is off.

The ``opentelemetry`` packages (the ``tracing`` extra) are imported only once an exporter is chosen.
"""

from componentbase.tracing._options import TracingOptions
from componentbase.tracing._setup import (
    EXPORTERS,
    EXTRA,
    Tracing,
    parse_sample_rate,
    start_tracing,
    validate_tracing,
)
from componentbase.tracing._span import AttributeValue, HeaderLookup, Span, enabled, span

__all__ = [
    "EXPORTERS",
    "EXTRA",
    "AttributeValue",
    "HeaderLookup",
    "Span",
    "Tracing",
    "TracingOptions",
    "enabled",
    "parse_sample_rate",
    "span",
    "start_tracing",
    "validate_tracing",
]
