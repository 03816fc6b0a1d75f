"""The "Tracing flags" section: ``--trace-exporter`` and ``--trace-sample-rate``, as virtual-kubelet has them."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from componentbase.cli._options import Options, flag
from componentbase.tracing._setup import EXPORTERS, Tracing, start_tracing, validate_tracing

__all__ = ["SECTION", "TracingOptions"]

SECTION = "Tracing flags"


@attrs.define
class TracingOptions(Options):
    """Which OpenTelemetry exporters get the component's spans, and what share of new traces is kept.

    Validation imports nothing unless an exporter is named; ``start`` begins tracing (call it in the run,
    and ``shutdown()`` what it returns at the end, which sends the last spans).
    """

    trace_exporters: list[str] = flag(
        "trace-exporter", "sets the tracing exporter to use, available exporters: [" + " ".join(EXPORTERS) + "]",
        factory=list, section=SECTION)
    trace_sample_rate: str = flag(
        "trace-sample-rate", "set probability of tracing samples", default="", section=SECTION)

    def validate(self) -> list[Exception]:
        return [*super().validate(), *validate_tracing(self.trace_exporters, self.trace_sample_rate)]

    def start(self, service_name: str, attributes: Mapping[str, str] | None = None) -> Tracing | None:
        """Tracing as the flags say, or None when no exporter is named."""
        return start_tracing(self.trace_exporters, self.trace_sample_rate, service_name=service_name,
                             attributes=attributes)
