"""A small component of our own, built only on the public API, that serves: the scheduler cannot run yet.

Its config holds a secret (``bearerToken``) so ``/configz`` redaction can be seen, and its work waits
for the stop event, so a test controls how long it runs.
"""

from __future__ import annotations

import io
import threading
from typing import Any, ClassVar

import attrs

import componentbase

from .conftest import Background

SCHEME = componentbase.Scheme()


@attrs.define(kw_only=True)
class TinyConfiguration:
    name: str = "tiny"
    bearer_token: str = "tiny-secret-token"
    password: str = ""
    client_connection: componentbase.ClientConnectionConfiguration = attrs.field(
        factory=componentbase.ClientConnectionConfiguration)
    leader_election: componentbase.LeaderElectionConfiguration = attrs.field(
        factory=lambda: componentbase.LeaderElectionConfiguration(
            leader_elect=False, resource_name="tiny", resource_namespace="default",
            lease_duration=componentbase.Duration("2s"), renew_deadline=componentbase.Duration("1s"),
            retry_period=componentbase.Duration("200ms")))


SCHEME.register(TinyConfiguration, "tiny.example.com/v1", "TinyConfiguration")


@attrs.define
class TinyFlags(componentbase.Options):
    kubeconfig: str = componentbase.flag("kubeconfig", "Path to the kubeconfig.", default="")
    api_token: str = componentbase.flag("api-token", "A secret the component is given.", default="", secret=True)

    def merge_into(self, component_config: Any, *, from_file: bool) -> None:
        component_config.client_connection.kubeconfig = self.kubeconfig


@attrs.define
class TinyOptions(componentbase.ComponentOptions):
    SCHEME: ClassVar[componentbase.Scheme] = SCHEME
    CONFIG_API_VERSION: ClassVar[str] = "tiny.example.com/v1"
    CONFIG_KIND: ClassVar[str] = "TinyConfiguration"

    tiny: TinyFlags = attrs.field(factory=TinyFlags)
    serving: componentbase.ServingOptions = attrs.field(
        factory=lambda: componentbase.ServingOptions.for_component(10999, "tiny"))
    registry: componentbase.serving.configz.Registry = attrs.field(factory=componentbase.serving.configz.Registry)

    def new_config(self) -> componentbase.Config:
        return componentbase.Config(configz_registry=self.registry)


class Running:
    """``tiny`` running in a thread: ``stop()`` ends it and returns its exit code."""

    def __init__(self, args: list[str], work: Any = None) -> None:
        self.options = TinyOptions()
        self.stop_event = threading.Event()
        self.working = threading.Event()
        self.completed: componentbase.CompletedConfig[Any] | None = None
        self.err = io.StringIO()

        def run(completed: componentbase.CompletedConfig[Any], stop: threading.Event) -> int:
            self.completed = completed
            self.working.set()
            if work is not None:
                return int(work(completed, stop))
            stop.wait()
            return 0

        self.command = componentbase.Command("tiny", self.options, run, configz_registry=self.options.registry)
        self.bg = Background(lambda: self.command.execute(args, stdout=io.StringIO(), stderr=self.err,
                                                          stop=self.stop_event))

    def stop(self, timeout: float = 15.0) -> int:
        self.stop_event.set()
        return int(self.bg.join(timeout))
