"""Starting OpenTelemetry tracing from two settings: which exporters, and what share of traces to keep.

``--trace-exporter`` names exporters (``otlp``: OTLP over HTTP, configured by the standard
``OTEL_EXPORTER_OTLP_*`` variables, http://localhost:4318/v1/traces by default; ``console``: JSON on
stdout). ``--trace-sample-rate`` is virtual-kubelet's: a percentage from 0 to 100, ``always`` or
``never``; empty keeps every trace. The sampler is parent-based, as upstream's: a span whose caller sent a
sampled ``traceparent`` is kept whatever the rate, and the rate decides only for new traces.

The ``opentelemetry`` packages are the ``tracing`` extra of componentbase, imported only here and only
when an exporter is chosen.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from componentbase.tracing._span import HeaderLookup, _set_tracer
from componentbase.util import field

__all__ = ["EXPORTERS", "EXTRA", "Tracing", "parse_sample_rate", "start_tracing", "validate_tracing"]

#: The exporters ``--trace-exporter`` offers, and the module each needs.
EXPORTERS: dict[str, str] = {
    "console": "opentelemetry.sdk.trace.export",
    "otlp": "opentelemetry.exporter.otlp.proto.http.trace_exporter",
}
#: The headers W3C trace context and baggage travel in (what the default propagators read).
_PROPAGATED = ("traceparent", "tracestate", "baggage")
#: What to install for them.
EXTRA = "componentbase[tracing]"


def parse_sample_rate(text: str) -> float | None:
    """The share of new traces to keep (0.0 to 1.0), or None for every one; ValueError names what is wrong."""
    lowered = text.strip().lower()
    if lowered in ("", "always"):
        return None
    if lowered == "never":
        return 0.0
    try:
        rate = int(lowered)
    except ValueError:
        raise ValueError("unsupported trace sample rate: use a percentage from 0 to 100, always or never") from None
    if not 0 <= rate <= 100:
        raise ValueError("trace sample rate must be between 0 and 100")
    return rate / 100


def _installed(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def validate_tracing(exporters: Sequence[str], sample_rate: str, *, exporter_flag: str = "trace-exporter",
                     rate_flag: str = "trace-sample-rate") -> list[Exception]:
    """Every problem with the two settings, each naming its flag; a chosen exporter whose package is not
    installed names the extra to install (this imports it: it is needed next anyway)."""
    errs: list[Exception] = []
    for name in exporters:
        if name not in EXPORTERS:
            errs.append(field.not_supported(exporter_flag, name, sorted(EXPORTERS)))
        elif not _installed(EXPORTERS[name]):
            errs.append(field.invalid(exporter_flag, name, f"needs the OpenTelemetry packages: pip install '{EXTRA}'"))
    try:
        parse_sample_rate(sample_rate)
    except ValueError as err:
        errs.append(field.invalid(rate_flag, sample_rate, str(err)))
    return errs


class _Tracer:
    """The running setup's tracer and propagator, as ``span`` opens spans with them."""

    def __init__(self, tracer: Any) -> None:
        from opentelemetry import propagate, trace  # the tracing extra, loaded once an exporter is chosen

        self._tracer = tracer
        self._extract = propagate.extract
        self._server = trace.SpanKind.SERVER
        self._internal = trace.SpanKind.INTERNAL

    def open(self, name: str, attributes: Mapping[str, Any], headers: HeaderLookup | None) -> Any:
        if headers is None:
            return self._tracer.start_as_current_span(name, attributes=attributes, kind=self._internal)
        carrier = {key: value for key in _PROPAGATED if (value := headers.get(key))}
        return self._tracer.start_as_current_span(name, context=self._extract(carrier), attributes=attributes,
                                                  kind=self._server)


class Tracing:
    """Tracing as started: ``shutdown()`` sends the spans still queued and turns ``span`` back into a no-op."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider

    def shutdown(self) -> None:
        _set_tracer(None)
        self.provider.shutdown()


def _exporter(name: str) -> Any:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter  # the tracing extra, chosen by flag

        return ConsoleSpanExporter(out=sys.stdout)  # stdout now: its default is the one at its import
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # the tracing extra

    return OTLPSpanExporter()


def start_tracing(exporters: Sequence[str], sample_rate: str = "", *, service_name: str,
                  attributes: Mapping[str, str] | None = None) -> Tracing | None:
    """Start tracing to ``exporters`` (validated first with ``validate_tracing``); None when none is named.

    Spans are batched (``OTEL_BSP_*`` tune the batches) and described by a resource holding
    ``service.name`` (``$OTEL_SERVICE_NAME`` wins) and ``attributes``.
    """
    if not exporters:
        return None
    # The tracing extra: imported only now that an exporter was chosen.
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased, TraceIdRatioBased

    rate = parse_sample_rate(sample_rate)
    described = dict(attributes or {})
    if not os.environ.get("OTEL_SERVICE_NAME"):
        described["service.name"] = service_name
    provider = TracerProvider(resource=Resource.create(described),
                              sampler=ParentBased(ALWAYS_ON if rate is None else TraceIdRatioBased(rate)))
    for name in dict.fromkeys(exporters):
        provider.add_span_processor(BatchSpanProcessor(_exporter(name)))
    _set_tracer(_Tracer(provider.get_tracer("componentbase")))
    return Tracing(provider)
