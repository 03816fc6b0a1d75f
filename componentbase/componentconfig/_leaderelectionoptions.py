"""The "Leader election flags" section, bound to a ``LeaderElectionConfiguration``.

Upstream's ``BindLeaderElectionFlags``: the same flag names, help and defaults in every component.
"""

from __future__ import annotations

from typing import Any

import attrs

from componentbase.cli import _flags as cliflags
from componentbase.cli._options import Options
from componentbase.componentconfig._types import LeaderElectionConfiguration

__all__ = ["LeaderElectionOptions"]

SECTION = "Leader election flags"


@attrs.define
class LeaderElectionOptions(Options):
    """``--leader-elect-*`` flags. Built from the component's defaulted config, so help shows its defaults.

    Only the flags given on the command line override the component config, whether it came from
    ``--config`` or from the defaults, as kube-scheduler does.
    """

    configuration: LeaderElectionConfiguration = attrs.field(factory=LeaderElectionConfiguration)
    _flags: dict[str, cliflags.Flag] = attrs.field(factory=dict, init=False, repr=False)

    def add_flags(self, fss: cliflags.NamedFlagSets) -> None:
        fs = fss.flag_set(SECTION)
        c = self.configuration
        add = self._flags.__setitem__
        add("leader_elect", fs.bool(
            "leader-elect", c, "leader_elect",
            "Start a leader election client and gain leadership before executing the main loop. "
            "Enable this when running replicated components for high availability."))
        add("lease_duration", fs.duration(
            "leader-elect-lease-duration", c, "lease_duration",
            "The duration that non-leader candidates will wait after observing a leadership renewal until "
            "attempting to acquire leadership of a led but unrenewed leader slot. This is effectively the "
            "maximum duration that a leader can be stopped before it is replaced by another candidate. "
            "This is only applicable if leader election is enabled."))
        add("renew_deadline", fs.duration(
            "leader-elect-renew-deadline", c, "renew_deadline",
            "The interval between attempts by the acting master to renew a leadership slot before it stops "
            "leading. This must be less than the lease duration. "
            "This is only applicable if leader election is enabled."))
        add("retry_period", fs.duration(
            "leader-elect-retry-period", c, "retry_period",
            "The duration the clients should wait between attempting acquisition and renewal of a "
            "leadership. This is only applicable if leader election is enabled."))
        add("resource_lock", fs.string(
            "leader-elect-resource-lock", c, "resource_lock",
            "The type of resource object that is used for locking during leader election. "
            "Supported options are 'leases'."))
        add("resource_name", fs.string(
            "leader-elect-resource-name", c, "resource_name",
            "The name of resource object that is used for locking during leader election."))
        add("resource_namespace", fs.string(
            "leader-elect-resource-namespace", c, "resource_namespace",
            "The namespace of resource object that is used for locking during leader election."))

    def override(self, target: LeaderElectionConfiguration) -> None:
        """Copy into ``target`` the flags given on the command line; the others keep ``target``'s values."""
        for attr, flag in self._flags.items():
            if flag.changed:
                setattr(target, attr, getattr(self.configuration, attr))

    def merge_into(self, component_config: Any, *, from_file: bool) -> None:
        """Given flags override the file and the defaults alike (kube-scheduler's ApplyLeaderElectionTo)."""
        target = getattr(component_config, "leader_election", None)
        if isinstance(target, LeaderElectionConfiguration):
            self.override(target)
