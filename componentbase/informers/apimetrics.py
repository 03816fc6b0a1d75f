"""The one place informers and the event recorder report their API calls to a component's metrics.

Forwards to ``componentbase.metrics.observe_request`` (client-go's ``rest_client_request_duration_seconds``
and ``rest_client_requests_total``), which finds the component's metrics through the ``ApiClient``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

__all__ = ["api_client_of", "observe_request"]


class _Unobserved:
    def response(self, resp: Any) -> Any:
        return resp


def observe_request(api_client: Any, verb: str) -> AbstractContextManager[Any]:
    """Time one call made with ``api_client``; ``verb`` is the HTTP method. Use ``obs.response(resp)``."""
    try:
        from componentbase.metrics import observe_request as observe
    except ImportError:  # a library build without metrics
        return nullcontext(_Unobserved())
    return observe(api_client, verb)


def api_client_of(method: Any) -> Any:
    """The ``ApiClient`` behind a bound method of a generated API class (``CoreV1Api(c).list_node``)."""
    return getattr(getattr(method, "__self__", None), "api_client", None)
