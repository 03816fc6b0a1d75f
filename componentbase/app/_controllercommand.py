"""``controller_command``: a whole controller component from one setup function, with every library flag.

For a controller that needs no config file of its own: ``--kubeconfig``, ``--master``, the leader election and
logging flags, ``--version``; the ``Manager`` gets the client, elects the leader (sync first: a hot standby)
and runs what ``setup`` added to it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import attrs

from componentbase.app._command import Command
from componentbase.app._config import CompletedConfig, Config
from componentbase.app._options import Options
from componentbase.cli import flag
from componentbase.client import new_api_client
from componentbase.componentconfig import (
    ClientConnectionConfiguration,
    LeaderElectionConfiguration,
    LeaderElectionOptions,
    validate_leader_election_configuration,
)
from componentbase.logs import LogsOptions
from componentbase.util import field

__all__ = ["ControllerOptions", "controller_command"]


@attrs.define
class ControllerOptions(Options):
    """The flags of a controller without a config file of its own."""

    kubeconfig: str = flag("kubeconfig", "Path to a kubeconfig file; in-cluster configuration without it.",
                           default="")
    master: str = flag("master", "The address of the Kubernetes API server (overrides any value in kubeconfig)",
                       default="")
    leader_election: LeaderElectionOptions = attrs.field(factory=LeaderElectionOptions)
    logs: LogsOptions = attrs.field(factory=LogsOptions)

    def validate(self) -> list[Exception]:
        return [*super().validate(),
                *validate_leader_election_configuration(self.leader_election.configuration,
                                                        field.Path("leaderElection"))]

    def apply_to(self, config: Config) -> None:
        super().apply_to(config)
        config.client_connection = ClientConnectionConfiguration(kubeconfig=self.kubeconfig)
        config.master = self.master
        config.leader_election = self.leader_election.configuration

    def connect(self, config: Config) -> None:
        config.client = new_api_client(config.client_connection, config.master)


def controller_command(name: str, setup: Callable[[Any], None], *, short: str = "",
                       leader_elect: bool = True, lease_namespace: str = "kube-system") -> Command:
    """A ``Command`` running the controllers ``setup(manager)`` adds to a ``componentbase.controller.Manager``.

    Leader election is on by default, on a Lease named after the component.
    """
    le = LeaderElectionConfiguration(leader_elect=leader_elect, resource_name=name,
                                     resource_namespace=lease_namespace)
    options = ControllerOptions(leader_election=LeaderElectionOptions(le))

    def run(completed: CompletedConfig[Any], stop: threading.Event) -> int:
        from componentbase.controller import Manager  # the runtime machinery: not on the --help path

        manager = Manager.from_config(completed)
        setup(manager)
        return manager.run(stop)

    run.elects_leader = True  # type: ignore[attr-defined]  # the manager elects: run_component must not
    return Command(name, options, run, short=short or f"{name}: a controller built on componentbase.")
