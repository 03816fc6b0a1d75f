"""``ComponentOptions``: the options of a component with a versioned config file, kube-scheduler's shape.

``--config`` loads the file strictly; ``--write-config-to`` writes the complete defaulted config; with no
file the defaulted config plus flags (deprecated ones included) is the config; with a file, only the flags
that say so (leader election) override it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from componentbase.app._config import Config
from componentbase.app._options import Options
from componentbase.cli import flag
from componentbase.componentconfig._leaderelectionoptions import LeaderElectionOptions
from componentbase.componentconfig._scheme import Scheme
from componentbase.logs import LogsOptions

__all__ = ["ComponentOptions"]


@attrs.define
class ComponentOptions(Options):
    """Subclass with ``SCHEME``, ``CONFIG_API_VERSION`` and ``CONFIG_KIND`` set to the component's config kind."""

    SCHEME: ClassVar[Scheme]
    CONFIG_API_VERSION: ClassVar[str]
    CONFIG_KIND: ClassVar[str]

    config_file: str = flag("config", "The path to the configuration file.", default="")
    master: str = flag("master", "The address of the Kubernetes API server (overrides any value in kubeconfig)",
                       default="")
    write_config_to: str = flag("write-config-to",
                                "If set, write the configuration values to this file and exit.", default="")
    #: The component config: defaulted at construction, replaced by ``--config`` in ``complete()``.
    component_config: Any = attrs.field(default=None)
    leader_election: LeaderElectionOptions | None = attrs.field(default=None)
    logs: LogsOptions = attrs.field(factory=LogsOptions)

    def __attrs_post_init__(self) -> None:
        if self.component_config is None:
            self.component_config = self.default_component_config()
        le = getattr(self.component_config, "leader_election", None)
        if self.leader_election is None and le is not None:
            self.leader_election = LeaderElectionOptions(attrs.evolve(le))

    @classmethod
    def default_component_config(cls) -> Any:
        """The defaulted config: what a file holding only ``apiVersion`` and ``kind`` decodes to."""
        return cls.SCHEME.new(cls.CONFIG_API_VERSION, cls.CONFIG_KIND)

    def complete(self) -> list[Exception]:
        errs = super().complete()
        if self.config_file:
            try:
                self.component_config = self.SCHEME.decode_file(self.config_file)
            except Exception as err:  # DecodeError carries one line per problem
                return [*errs, err]
        self.merge_into(self.component_config, from_file=bool(self.config_file))
        return errs

    def merge_into(self, component_config: Any, *, from_file: bool) -> None:
        """Leader-election flags go last: a flag that names a field wins over a deprecated alias of it."""
        for sub in self.sub_options():
            if sub is not self.leader_election:
                sub.merge_into(component_config, from_file=from_file)
        if self.leader_election is not None:
            self.leader_election.merge_into(component_config, from_file=from_file)

    def validate(self) -> list[Exception]:
        return [*super().validate(), *self.validate_component_config(self.component_config)]

    def validate_component_config(self, cfg: Any) -> list[Exception]:
        """The component config's own validation; components override this."""
        return []

    def write_config(self, path: str) -> None:
        self.SCHEME.write_file(path, self.component_config)

    def apply_to(self, config: Config) -> None:
        super().apply_to(config)
        cfg = self.component_config
        config.component_config = cfg
        config.master = self.master
        if getattr(cfg, "client_connection", None) is not None:
            config.client_connection = cfg.client_connection
        config.leader_election = getattr(cfg, "leader_election", None)

    def connect(self, config: Config) -> None:
        from componentbase.client import new_api_client  # the client: not on the --help path

        config.client = new_api_client(config.client_connection, config.master)
