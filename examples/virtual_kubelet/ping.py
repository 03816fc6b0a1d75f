"""The provider's health, checked on a timer (upstream's ``nodePingController``).

Heartbeats read the last result instead of pinging themselves, so a slow provider delays no heartbeat
and never has two pings in flight; a ping that does not return within its timeout counts as failed.
"""

from __future__ import annotations

import logging
import threading

from examples.virtual_kubelet.provider import Provider

__all__ = ["PingMonitor"]

log = logging.getLogger("examples.virtual_kubelet.node")


class PingMonitor:
    def __init__(self, provider: Provider, interval: float, timeout: float) -> None:
        self.provider = provider
        self.interval = interval
        self.timeout = timeout
        self._lock = threading.Lock()
        self._error: str | None = None
        self._first = threading.Event()
        self._inflight: threading.Thread | None = None
        self._result: list[str | None] = []

    def error(self, stop: threading.Event) -> str | None:
        """Why the provider is unhealthy (None: it is healthy); waits for the first ping."""
        while not self._first.wait(0.05):
            if stop.is_set():
                return "stopping"
        with self._lock:
            return self._error

    def _ping(self, box: list[str | None]) -> None:
        try:
            self.provider.ping()
            box.append(None)
        except Exception as err:
            box.append(f"{type(err).__name__}: {err}")

    def check(self) -> None:
        """One ping, bounded by the timeout; a ping still running from last time is not doubled."""
        if self._inflight is None or not self._inflight.is_alive():
            self._result = []
            self._inflight = threading.Thread(target=self._ping, args=(self._result,), name="provider-ping",
                                              daemon=True)
            self._inflight.start()
        self._inflight.join(self.timeout)
        error = self._result[0] if self._result else f"ping did not return within {self.timeout:g}s"
        with self._lock:
            changed = error != self._error
            self._error = error
        if changed and error is not None:
            log.error("Provider ping failed, not heartbeating: %s", error)
        elif changed and self._first.is_set():
            log.info("Provider ping succeeds again")
        self._first.set()

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.check()
            stop.wait(self.interval)
