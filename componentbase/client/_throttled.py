"""client-go's client-side rate limit on the official client: each request waits for a token first.

Imported only where a client is built: it imports ``kubernetes``, which is slow to import.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes.client import ApiClient

from componentbase.client._errors import ThrottledTimeout
from componentbase.logs import V
from componentbase.util._duration import format_duration
from componentbase.util._flowcontrol import TokenBucket

__all__ = ["ThrottledApiClient", "api_client", "guarded"]

log = logging.getLogger("componentbase.client")

#: client-go's thresholds: a longer wait is logged at V(3); a wait over a second at info, at most every 5 s.
LONG_THROTTLE = 0.05
EXTRA_LONG_THROTTLE = 1.0
EXTRA_LONG_LOG_INTERVAL = 5.0


def _total(timeout: Any) -> float | None:
    """The whole time a ``_request_timeout`` allows: a number, or a (connect, read) pair."""
    if isinstance(timeout, (int, float)):
        return float(timeout)
    if isinstance(timeout, tuple):
        parts = [float(t) for t in timeout if isinstance(t, (int, float))]
        return sum(parts) if parts else None
    return None


class ThrottledApiClient(ApiClient):
    """An ``ApiClient`` whose calls (watches included, as in client-go) take a token from ``limiter``.

    ``guard(method, url)``, when given, is asked right before each call leaves (after its token wait) and
    refuses it by raising: the controller manager fences a deposed leader's writes with it.
    """

    def __init__(self, configuration: Any, limiter: TokenBucket | None,
                 guard: Callable[[str, str], None] | None = None) -> None:
        super().__init__(configuration)
        self.limiter = limiter
        self.guard = guard
        self._log_lock = threading.Lock()
        self._logged_at = float("-inf")

    def call_api(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        if self.limiter is not None:
            timeout = _total(kwargs.get("_request_timeout"))
            waited = self.limiter.accept(timeout)
            if waited is None:
                raise ThrottledTimeout(f"client rate limiter: waiting for a token would exceed the request's "
                                      f"{format_duration(timeout or 0)} timeout ({method} {url})")
            if waited > LONG_THROTTLE:
                self._log_wait(waited, method, url)
        if self.guard is not None:
            self.guard(method, url)
        return super().call_api(method, url, *args, **kwargs)

    def _log_wait(self, waited: float, method: str, url: str) -> None:
        level = V(3)
        if waited > EXTRA_LONG_THROTTLE:
            with self._log_lock:
                now = time.monotonic()
                if now - self._logged_at >= EXTRA_LONG_LOG_INTERVAL:
                    self._logged_at = now
                    level = logging.INFO
        log.log(level, "Waited for %s due to client-side throttling, not priority and fairness, request: %s:%s",
                format_duration(waited), method, url)


#: client-go's ``DefaultQPS`` and ``DefaultBurst``, for a qps or burst of 0.
DEFAULT_QPS = 5.0
DEFAULT_BURST = 10


def guarded(api_client: Any, guard: Callable[[str, str], None]) -> Any:
    """A client like ``api_client`` (its configuration, headers, rate limiter) whose calls pass ``guard`` first.

    It has connections of its own; closing it leaves ``api_client`` open.
    """
    limiter = api_client.limiter if isinstance(api_client, ThrottledApiClient) else None
    clone = ThrottledApiClient(api_client.configuration, limiter, guard)
    clone.default_headers.update(api_client.default_headers)
    clone.user_agent = api_client.user_agent
    return clone


def api_client(configuration: Any, qps: float, burst: int) -> Any:
    """As client-go's ``RESTClientFor``: 0 means its defaults (5 qps, burst 10), a negative qps no limit."""
    qps = qps or DEFAULT_QPS
    if qps < 0:
        return ApiClient(configuration)
    return ThrottledApiClient(configuration, TokenBucket(qps, burst or DEFAULT_BURST))
