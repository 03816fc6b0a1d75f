"""``span()``: a span around a block when tracing is on, and next to nothing when it is off.

Components name their spans everywhere (``with tracing.span("syncPod", {...})``) without knowing whether
an exporter was chosen: while none is, the module holds no tracer, ``span`` imports nothing and costs a
function call and an attribute check, so the ``opentelemetry`` packages stay unimported.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any, Protocol

__all__ = ["AttributeValue", "HeaderLookup", "Span", "enabled", "span"]

AttributeValue = str | bool | int | float

class HeaderLookup(Protocol):
    """An incoming request's headers: a dict or any object with a case-insensitive ``get``."""

    def get(self, name: str, default: None = None) -> str | None: ...


#: The tracer of the running tracing setup (``start_tracing``), or None: tracing is off.
_tracer: Any = None


def _set_tracer(tracer: Any) -> None:
    global _tracer
    _tracer = tracer


def enabled() -> bool:
    """Whether spans are recorded now (an exporter was chosen and tracing started)."""
    return _tracer is not None


class _NoSpan:
    """What ``span`` yields while tracing is off: every call is accepted and does nothing."""

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        """Nothing is recorded."""

    def set_attributes(self, attributes: Mapping[str, AttributeValue | None]) -> None:
        """Nothing is recorded."""

    def add_event(self, name: str, attributes: Mapping[str, AttributeValue] | None = None) -> None:
        """Nothing is recorded."""

    def is_recording(self) -> bool:
        return False


_NO_SPAN = _NoSpan()

#: What a ``with span(...) as s`` gives: an OpenTelemetry span, or the no-op stand-in; both take these calls.
Span = Any


class span:  # lower case: it reads as a function, ``with span("name"):``
    """A span named ``name`` around a ``with`` block, current for the block (spans opened inside are its
    children); an exception leaving the block is recorded on it and marks it failed.

    ``attributes`` with a None value are left out. ``headers`` (an incoming request's) carry the caller's
    W3C ``traceparent``: the span joins the caller's trace, and the parent-based sampler follows the
    caller's decision. Without tracing the block runs with a no-op span.
    """

    __slots__ = ("_attributes", "_cm", "_headers", "_name")

    def __init__(self, name: str, attributes: Mapping[str, AttributeValue | None] | None = None, *,
                 headers: HeaderLookup | None = None) -> None:
        self._name = name
        self._attributes = attributes
        self._headers = headers
        self._cm: Any = None

    def __enter__(self) -> Span:
        tracer = _tracer
        if tracer is None:
            return _NO_SPAN
        attributes = {k: v for k, v in (self._attributes or {}).items() if v is not None}
        self._cm = tracer.open(self._name, attributes, self._headers)
        return self._cm.__enter__()

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._cm is not None:
            self._cm.__exit__(kind, err, tb)
            self._cm = None
