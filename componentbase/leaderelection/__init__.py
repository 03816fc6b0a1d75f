"""Leader election on a ``coordination.k8s.io/v1`` Lease, as client-go's ``tools/leaderelection``.

Importing this package does not import the Kubernetes client; the lock loads it on first use.
See ``docs/leaderelection.md``.
"""

from __future__ import annotations

from componentbase.leaderelection._config import (
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElectionConfigError,
    default_identity,
)
from componentbase.leaderelection._elector import (
    LeaderElectionHealthError,
    LeaderElector,
)
from componentbase.leaderelection._healthz import HealthzAdaptor
from componentbase.leaderelection._leaselock import (
    LeaseLock,
    LockConflict,
    LockNotFound,
    LockTimeout,
)
from componentbase.leaderelection._record import (
    LeaderElectionRecord,
    record_from_spec,
    record_to_spec,
    wire_lease_duration,
)
from componentbase.leaderelection._registry import DuplicateElectorError

__all__ = [
    "DuplicateElectorError",
    "HealthzAdaptor",
    "LeaderCallbacks",
    "LeaderElectionConfig",
    "LeaderElectionConfigError",
    "LeaderElectionHealthError",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "LockConflict",
    "LockNotFound",
    "LockTimeout",
    "default_identity",
    "record_from_spec",
    "record_to_spec",
    "wire_lease_duration",
]
