"""What a leader elector needs to know, validated the way client-go's ``NewLeaderElector`` does."""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from componentbase.leaderelection._leaselock import (
    LeaseLock,
    ResourceLock,
)
from componentbase.util import REAL_CLOCK, Clock

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

    from componentbase.componentconfig._types import LeaderElectionConfiguration
    from componentbase.leaderelection._healthz import HealthzAdaptor

__all__ = [
    "JITTER_FACTOR",
    "LeaderCallbacks",
    "LeaderElectionConfig",
    "LeaderElectionConfigError",
    "LeaderStatusObserver",
    "default_identity",
]

#: client-go's JitterFactor: candidates wait retryPeriod * (1 + 1.2 * rand) between tries.
JITTER_FACTOR = 1.2

#: Called with (lease name, leading) whenever this process starts or stops leading; export it as 1/0.
LeaderStatusObserver = Callable[[str, bool], None]


class LeaderElectionConfigError(ValueError):
    """The config cannot give the safety guarantees; ``errors`` lists every reason."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("invalid leader election config: " + "; ".join(errors))
        self.errors = errors


def default_identity() -> str:
    """``<hostname>_<uuid4>``: unique per process start, so a restarted replica is a new candidate."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@attrs.frozen(kw_only=True)
class LeaderCallbacks:
    """``on_started_leading(stop)`` runs in its own thread; ``stop`` is set the moment leadership ends.

    ``on_stopped_leading`` is called whenever ``run`` returns, even if this process never led (as in
    client-go). ``on_new_leader`` gets each newly observed holder, in order, off the election thread.
    """

    on_started_leading: Callable[[threading.Event], None]
    on_stopped_leading: Callable[[], None]
    on_new_leader: Callable[[str], None] | None = None


@attrs.frozen(kw_only=True)
class LeaderElectionConfig:
    """Timings are float seconds, sub-second allowed.

    ``request_timeout`` bounds each API call; it defaults to ``min(lease_duration - renew_deadline,
    renew_deadline / 2)`` so a slow call leaves room for another attempt before the deadline. While
    leading, calls are also cut off at the renew deadline itself, so no value of it can delay giving
    up past ``renew_deadline``. ``stop_grace`` is how long the elector waits
    for ``on_started_leading`` to return after setting its stop event (default ``renew_deadline``);
    when the work does not return in time the lease is not released, so others wait for it to expire.
    ``clock`` (client-go's ``Clock``) judges expiry and deadlines and stamps the record's times.
    """

    lock: ResourceLock
    identity: str
    callbacks: LeaderCallbacks
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = False
    name: str = ""
    request_timeout: float | None = None
    stop_grace: float | None = None
    watchdog: HealthzAdaptor | None = None
    status_observer: LeaderStatusObserver | None = None
    clock: Clock = REAL_CLOCK

    @property
    def lease_name(self) -> str:
        return self.name or self.lock.describe()

    @property
    def effective_request_timeout(self) -> float:
        if self.request_timeout is not None:
            return self.request_timeout
        return min(self.lease_duration - self.renew_deadline, self.renew_deadline / 2)

    @property
    def effective_stop_grace(self) -> float:
        return self.renew_deadline if self.stop_grace is None else self.stop_grace

    def errors(self) -> list[str]:
        """Every reason this config is unsafe or incomplete; empty when valid."""
        errs = [f"{n} must be greater than zero" for n in ("lease_duration", "renew_deadline", "retry_period")
                if not getattr(self, n) > 0]
        if self.lease_duration <= self.renew_deadline:
            errs.append("lease_duration must be greater than renew_deadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            errs.append(f"renew_deadline must be greater than retry_period*{JITTER_FACTOR}")
        if self.request_timeout is not None and not self.request_timeout > 0:
            errs.append("request_timeout must be greater than zero")
        if self.stop_grace is not None and self.stop_grace < 0:
            errs.append("stop_grace must not be negative")
        if self.lock is None:
            errs.append("lock must not be None")
        if not self.identity:
            errs.append("identity must not be empty")
        cbs = self.callbacks
        if cbs is None or not callable(cbs.on_started_leading):
            errs.append("on_started_leading callback must not be None")
        if cbs is None or not callable(cbs.on_stopped_leading):
            errs.append("on_stopped_leading callback must not be None")
        return errs

    def validate(self) -> None:
        errs = self.errors()
        if errs:
            raise LeaderElectionConfigError(errs)

    @classmethod
    def from_configuration(
        cls,
        cfg: LeaderElectionConfiguration,
        api_client: ApiClient,
        callbacks: LeaderCallbacks,
        identity: str | None = None,
        release_on_cancel: bool = False,
        name: str = "",
        watchdog: HealthzAdaptor | None = None,
        status_observer: LeaderStatusObserver | None = None,
    ) -> LeaderElectionConfig:
        """Build from a component's ``LeaderElectionConfiguration``; only the ``leases`` lock exists."""
        errs = []
        if cfg.resource_lock != "leases":
            errs.append(f'resource lock "{cfg.resource_lock}" is not supported: use "leases"')
        if not cfg.resource_name or not cfg.resource_namespace:
            errs.append("resource_name and resource_namespace are required")
        if errs:
            raise LeaderElectionConfigError(errs)
        config = cls(
            lock=LeaseLock(cfg.resource_namespace, cfg.resource_name, api_client),
            identity=identity or default_identity(),
            callbacks=callbacks,
            lease_duration=float(cfg.lease_duration),
            renew_deadline=float(cfg.renew_deadline),
            retry_period=float(cfg.retry_period),
            release_on_cancel=release_on_cancel,
            name=name or cfg.resource_name,
            watchdog=watchdog,
            status_observer=status_observer,
        )
        config.validate()
        return config
