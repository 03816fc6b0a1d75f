"""A health check that fails when this process should have stopped leading but has not died.

Mirrors client-go's HealthzAdaptor: /healthz is usually wired up before the elector exists, so the
elector is attached later; until then, and while not the leader, the check passes.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from componentbase.leaderelection._elector import LeaderElector

__all__ = ["HealthzAdaptor"]


class HealthzAdaptor:
    """``check()`` raises once our own lease has been expired for more than ``timeout`` seconds."""

    name = "leaderElection"

    def __init__(self, timeout: float) -> None:
        if timeout < 0:
            raise ValueError("timeout must not be negative")
        self.timeout = timeout
        self._mu = threading.Lock()
        self._elector: LeaderElector | None = None

    def set_leader_election(self, elector: LeaderElector) -> None:
        with self._mu:
            self._elector = elector

    def check(self) -> None:
        with self._mu:
            elector = self._elector
        if elector is not None:
            elector.check(self.timeout)
