"""How often the node heartbeats and how patiently it retries; upstream's defaults, shortened in tests."""

from __future__ import annotations

import attrs

from componentbase.util import Backoff

__all__ = ["Timings"]


@attrs.frozen(kw_only=True)
class Timings:
    """Seconds, all of them. No flags: upstream has none for these either."""

    #: How often the provider is pinged (upstream ``DefaultPingInterval``), and how long a ping may take.
    ping_interval: float = 10.0
    ping_timeout: float = 10.0
    #: Node status is written this often, and whenever the provider says the node changed.
    status_interval: float = 60.0
    #: The node Lease's ``leaseDurationSeconds``; it is renewed every quarter of it unless set.
    lease_duration: int = 40
    lease_renew_interval: float | None = None
    #: Providers without ``notify_pods`` are asked for every pod's status this often.
    status_poll_interval: float = 5.0
    #: A pod the provider does not know is failed only if it ran, or is older than this.
    lost_pod_grace: float = 60.0
    #: Backoff for failed API calls (and, per pod, for failed provider calls).
    retry_initial: float = 0.2
    retry_max: float = 7.0
    #: The longest any single API call may take.
    request_timeout: float = 10.0

    def retry_backoff(self) -> Backoff:
        """Doubling from ``retry_initial`` to ``retry_max``, no jitter; upstream doubles before the first wait."""
        return Backoff(duration=min(2 * self.retry_initial, self.retry_max), factor=2.0, jitter=0.0,
                       cap=self.retry_max)

    @property
    def renew_interval(self) -> float:
        return self.lease_renew_interval if self.lease_renew_interval is not None else self.lease_duration * 0.25
