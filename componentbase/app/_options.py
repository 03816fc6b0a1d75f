"""``Options``: what a component is told on its command line, and how it becomes a ``Config``.

The component's own options are a ``cli.Options`` group (their flags, sub-options, validation) that also
knows how to build the component's ``Config``: the first stage of the pipeline flags -> ``Options`` ->
``Config`` -> ``CompletedConfig`` -> ``run``.
"""

from __future__ import annotations

import attrs

from componentbase.app._config import Config
from componentbase.cli import Options as OptionGroup

__all__ = ["Options"]


@attrs.define
class Options(OptionGroup):
    """The base of a component's options: an option group whose :meth:`config` builds the ``Config``."""

    def new_config(self) -> Config:
        """The empty ``Config`` this component fills; override to return a subclass."""
        return Config()

    def config(self) -> Config:
        """Build the ``Config``: apply every option to a new one, then connect what needs connecting."""
        config = self.new_config()
        self.apply_to(config)
        self.connect(config)
        self.connect_leader_election(config)
        return config

    def connect(self, config: Config) -> None:
        """Build clients once the config is known; the default connects nothing."""

    def connect_leader_election(self, config: Config) -> None:
        """The lease's own client, as kube-scheduler's "leader-election" one, from ``clientConnection``.

        Only when the component has a client and elects a leader. A component whose ``connect`` builds its
        client some other way overrides this (or sets ``config.leader_election_client`` itself).
        """
        le = config.leader_election
        if config.client is None or config.leader_election_client is not None or le is None or not le.leader_elect:
            return
        from componentbase.client import new_api_client  # the client: not on the --help path

        client = new_api_client(config.client_connection, config.master, pool_maxsize=2)
        client.user_agent = f"{client.user_agent}/leader-election"
        config.leader_election_client = client

