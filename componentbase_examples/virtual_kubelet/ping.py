"""The provider's health, checked on a timer (upstream's ``nodePingController``).

Heartbeats read the last result instead of pinging themselves, so a slow provider delays no heartbeat
and never has two pings in flight; a ping that does not return within its timeout counts as failed.
The ping runs on a one-worker ``TaskPool``, so a hung provider holds that worker, not the monitor.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from componentbase.tracing import span
from componentbase.util import wait_until
from componentbase.workqueue import TaskPool
from componentbase_examples.virtual_kubelet.provider import Provider

__all__ = ["PingMonitor"]

log = logging.getLogger("componentbase_examples.virtual_kubelet.node")


class PingMonitor:
    """``run(stop)`` pings every ``interval``; ``on_change`` is called when the result changes (and first)."""

    def __init__(self, provider: Provider, interval: float, timeout: float) -> None:
        self.provider = provider
        self.interval = interval
        self.timeout = timeout
        self.on_change: Callable[[], None] = lambda: None
        self._lock = threading.Lock()
        self._error: str | None = None
        self._first = threading.Event()
        self._inflight: threading.Event | None = None
        self._result: list[str | None] = []

    def error(self, stop: threading.Event) -> str | None:
        """Why the provider is unhealthy (None: it is healthy); waits for the first ping, or ``stop``."""
        if not wait_until(self._first.is_set, stop):
            return "stopping"
        return self.last_error()

    def pinged(self) -> bool:
        """Whether the first ping has an answer (or timed out)."""
        return self._first.is_set()

    def last_error(self) -> str | None:
        """The last ping's error, without waiting (None before the first ping, too)."""
        with self._lock:
            return self._error

    def _ping(self, box: list[str | None], done: threading.Event) -> None:
        try:
            with span("node.pingNode"):
                self.provider.ping()
            box.append(None)
        except Exception as err:
            box.append(f"{type(err).__name__}: {err}")
        finally:
            done.set()

    def check(self, pool: TaskPool) -> None:
        """One ping, bounded by the timeout; a ping still running from last time is not doubled."""
        if self._inflight is None or self._inflight.is_set():
            done, box = threading.Event(), list[str | None]()
            self._inflight, self._result = done, box
            pool.submit(lambda: self._ping(box, done))
        finished = self._inflight.wait(self.timeout)
        error = self._result[0] if finished and self._result else f"ping did not return within {self.timeout:g}s"
        with self._lock:
            changed = error != self._error or not self._first.is_set()
            self._error = error
        if changed and error is not None:
            log.error("Provider ping failed, not heartbeating: %s", error)
        elif changed and self._first.is_set():
            log.info("Provider ping succeeds again")
        self._first.set()
        if changed:
            self.on_change()

    def run(self, stop: threading.Event) -> None:
        pool = TaskPool(1, "provider-ping")
        try:
            while True:
                self.check(pool)
                if stop.wait(self.interval):
                    return
        finally:
            pool.close(self.timeout)
