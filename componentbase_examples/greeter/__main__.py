"""``python -m componentbase_examples.greeter``: a whole component on componentbase's public API, in one page."""

from __future__ import annotations

import logging
import threading
from typing import Any, ClassVar

import attrs

import componentbase
from componentbase import field

log = logging.getLogger("hello")
SCHEME = componentbase.Scheme()


@attrs.define(kw_only=True)
class HelloConfiguration:
    """``hello.example.com/v1alpha1``: what a config file for this component holds."""

    greeting: str = "Hello"
    name: str = "world"
    interval: componentbase.Duration = attrs.field(default=componentbase.Duration("1s"),
                                                   converter=componentbase.Duration)
    client_connection: componentbase.ClientConnectionConfiguration = attrs.field(
        factory=componentbase.ClientConnectionConfiguration)
    leader_election: componentbase.LeaderElectionConfiguration = attrs.field(
        factory=lambda: componentbase.LeaderElectionConfiguration(
            leader_elect=False, resource_name="hello", resource_namespace="default"))


SCHEME.register(HelloConfiguration, "hello.example.com/v1alpha1", "HelloConfiguration")


@attrs.define
class HelloFlags(componentbase.Options):
    """A flag section of our own; the flags override the config file, like leader election's."""

    name: str = componentbase.flag("name", "Who to greet (overrides the config file).", default="",
                                   section="Hello flags")

    def merge_into(self, component_config: Any, *, from_file: bool) -> None:
        if self.name:
            component_config.name = self.name


@attrs.define
class HelloOptions(componentbase.ComponentOptions):
    SCHEME: ClassVar[componentbase.Scheme] = SCHEME
    CONFIG_API_VERSION: ClassVar[str] = "hello.example.com/v1alpha1"
    CONFIG_KIND: ClassVar[str] = "HelloConfiguration"

    hello: HelloFlags = attrs.field(factory=HelloFlags)

    def validate_component_config(self, cfg: Any) -> list[Exception]:
        errs: list[Exception] = []
        if cfg.interval <= 0:
            errs.append(field.invalid("interval", cfg.interval, "must be greater than zero"))
        errs += componentbase.componentconfig.validate_leader_election_configuration(cfg.leader_election,
                                                                     field.Path("leaderElection"))
        return errs

    def connect(self, config: componentbase.Config) -> None:
        if config.component_config.leader_election.leader_elect:  # only leader election needs a cluster
            super().connect(config)


def run(completed: componentbase.CompletedConfig[Any], stop: threading.Event) -> int:
    cfg: HelloConfiguration = completed.config.component_config
    while not stop.is_set():
        log.info("%s, %s!", cfg.greeting, cfg.name)
        stop.wait(cfg.interval)
    return 0


if __name__ == "__main__":
    componentbase.Command("hello", HelloOptions(), run, short="hello greets, once a second.").main()
