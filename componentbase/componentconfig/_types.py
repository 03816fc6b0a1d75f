"""The shared config types of component-base (``k8s.io/component-base/config``), with their validation.

Every component embeds these in its own versioned config, so a user configures client connections,
leader election and debugging the same way in every component.
"""

from __future__ import annotations

import attrs

from componentbase.componentconfig._naming import json_name
from componentbase.util import field
from componentbase.util._duration import Duration

__all__ = [
    "SUPPORTED_RESOURCE_LOCKS",
    "ClientConnectionConfiguration",
    "DebuggingConfiguration",
    "LeaderElectionConfiguration",
    "set_defaults_client_connection_configuration",
    "validate_client_connection_configuration",
    "validate_leader_election_configuration",
]

#: client-go removed the ``endpoints`` and ``configmaps`` locks; only Lease objects remain.
SUPPORTED_RESOURCE_LOCKS = ("leases",)

#: client-go's JitterFactor: candidates wait retryPeriod * [1, 2.2) between tries, so renewDeadline must
#: exceed 1.2 x retryPeriod for a renewal to fit before the deadline.
JITTER_FACTOR = 1.2


def _duration(default: float) -> Duration:
    return attrs.field(default=Duration(default), converter=Duration)


@attrs.define(kw_only=True)
class ClientConnectionConfiguration:
    """How a component talks to the API server."""

    kubeconfig: str = ""
    accept_content_types: str = ""
    #: Empty until defaulted (component-base's default is protobuf); the official Python client speaks JSON.
    content_type: str = ""
    qps: float = 50.0
    burst: int = 100


@attrs.define(kw_only=True)
class LeaderElectionConfiguration:
    """Leader election among a component's replicas, on a ``coordination.k8s.io/v1`` Lease."""

    leader_elect: bool = True
    lease_duration: Duration = _duration(15)
    renew_deadline: Duration = _duration(10)
    retry_period: Duration = _duration(2)
    resource_lock: str = "leases"
    resource_name: str = ""
    resource_namespace: str = ""


@attrs.define(kw_only=True)
class DebuggingConfiguration:
    """Profiling handlers on the component's secure port."""

    enable_profiling: bool = False
    enable_contention_profiling: bool = False


def set_defaults_client_connection_configuration(cfg: ClientConnectionConfiguration) -> None:
    """component-base's recommended defaults: a qps or burst of 0 in a config file means 50 and 100.

    Without it 0 would reach the client, where client-go takes it for its own 5 and 10. An empty content
    type means protobuf, as upstream; it is recorded, not used: the official Python client speaks JSON.
    """
    if not cfg.content_type:
        cfg.content_type = "application/vnd.kubernetes.protobuf"
    if cfg.qps == 0:
        cfg.qps = 50.0
    if cfg.burst == 0:
        cfg.burst = 100


def validate_client_connection_configuration(
    cfg: ClientConnectionConfiguration, path: field.Path
) -> list[field.FieldError]:
    """Problems with a ``clientConnection``, under ``path``: reported with the rest, not one at a time."""
    errs: list[field.FieldError] = []
    if cfg.burst < 0:
        errs.append(field.invalid(path.child("burst"), cfg.burst, "must be non-negative"))
    return errs


def validate_leader_election_configuration(
    cfg: LeaderElectionConfiguration, path: field.Path
) -> list[field.FieldError]:
    """Checks only apply when leader election is on, as upstream's do."""
    errs: list[field.FieldError] = []
    if not cfg.leader_elect:
        return errs
    positive = True
    for name in ("lease_duration", "renew_deadline", "retry_period"):
        value = getattr(cfg, name)
        if value <= 0:
            positive = False
            errs.append(field.invalid(path.child(json_name(name)), value, "must be greater than zero"))
    if positive:
        if cfg.renew_deadline >= cfg.lease_duration:
            errs.append(field.invalid(path.child("renewDeadline"), cfg.renew_deadline,
                                      "must be less than leaseDuration"))
        if cfg.renew_deadline <= JITTER_FACTOR * cfg.retry_period:
            errs.append(field.invalid(path.child("renewDeadline"), cfg.renew_deadline,
                                      f"must be greater than {JITTER_FACTOR} x retryPeriod "
                                      f"({Duration(JITTER_FACTOR * cfg.retry_period)})"))
    if not cfg.resource_lock:
        errs.append(field.required(path.child("resourceLock")))
    elif cfg.resource_lock not in SUPPORTED_RESOURCE_LOCKS:
        errs.append(field.not_supported(path.child("resourceLock"), cfg.resource_lock, SUPPORTED_RESOURCE_LOCKS))
    if not cfg.resource_name:
        errs.append(field.required(path.child("resourceName")))
    if not cfg.resource_namespace:
        errs.append(field.required(path.child("resourceNamespace")))
    return errs
