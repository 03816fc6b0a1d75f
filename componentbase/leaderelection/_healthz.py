"""A health check that fails when this process should have stopped leading but has not died.

Mirrors client-go's HealthzAdaptor: /healthz is usually wired up before the elector exists, so the
elector is attached later; until then, and while not the leader, the check passes.
"""

from __future__ import annotations

import threading
from typing import Protocol

__all__ = ["HealthzAdaptor"]


class _Elector(Protocol):
    """What the check needs of a ``LeaderElector`` (a protocol: the elector's config names this adaptor)."""

    def check(self, max_tolerable_expired: float) -> None: ...


class HealthzAdaptor:
    """``check()`` raises once our own lease has been expired for more than ``timeout`` seconds."""

    name = "leaderElection"

    def __init__(self, timeout: float) -> None:
        if timeout < 0:
            raise ValueError("timeout must not be negative")
        self.timeout = timeout
        self._mu = threading.Lock()
        self._elector: _Elector | None = None

    def set_leader_election(self, elector: _Elector) -> None:
        with self._mu:
            self._elector = elector

    def check(self) -> None:
        with self._mu:
            elector = self._elector
        if elector is not None:
            elector.check(self.timeout)
