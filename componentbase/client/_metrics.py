"""Request metrics of API calls, as client-go's ``rest_client_request_duration_seconds`` and ``_requests_total``.

The official client has no request hook and is not patched: code that calls the API wraps each call in
:func:`observe_request`, which finds the component's ``Metrics`` through the ``ApiClient`` it was given
(``Metrics.track``). It costs a dict lookup when no component tracks the client.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from componentbase.client._errors import status_of
from componentbase.metrics import metrics_for

__all__ = ["RequestObservation", "api_client_of", "host_of", "observe_request"]


def host_of(api_client: Any) -> str:
    """``host:port`` of the server ``api_client`` talks to, as client-go's ``host`` label."""
    host = getattr(getattr(api_client, "configuration", None), "host", "") or ""
    return urlsplit(host).netloc or host


class RequestObservation:
    """What :func:`observe_request` yields: set ``code`` (or call :meth:`response`) for the exact status."""

    __slots__ = ("code",)

    def __init__(self) -> None:
        self.code: str | None = None

    def response(self, resp: Any) -> Any:
        """Record ``resp.status`` (a raw response, as ``_preload_content=False`` returns) and pass it through."""
        status = getattr(resp, "status", None)
        if status is not None:
            self.code = str(status)
        return resp


def _code_of(err: BaseException) -> str:
    status = status_of(err)
    return str(status) if status else "<error>"


@contextlib.contextmanager
def observe_request(api_client: Any, verb: str) -> Iterator[RequestObservation]:
    """Time one API call made with ``api_client`` and count it by status code, as client-go does.

    ``verb`` is the HTTP method. An exception carrying ``status`` (``ApiException``) counts as that code,
    any other as ``<error>``; a call that returns without a recorded code counts as ``2xx``. Costs a dict
    lookup when no component tracks the client.
    """
    metrics = metrics_for(api_client)
    obs = RequestObservation()
    start = time.perf_counter()
    try:
        yield obs
    except BaseException as err:
        if obs.code is None:
            obs.code = _code_of(err)
        raise
    finally:
        if metrics is not None:
            metrics.observe_rest_request(verb.upper(), host_of(api_client), obs.code or "2xx",
                                         time.perf_counter() - start)


def api_client_of(method: Any) -> Any:
    """The ``ApiClient`` behind a bound method of a generated API class (``CoreV1Api(c).list_node``)."""
    return getattr(getattr(method, "__self__", None), "api_client", None)
