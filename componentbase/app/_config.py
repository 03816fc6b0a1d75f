"""``Config`` and ``CompletedConfig``: the second and third stages of a component's life.

Flags and files become ``Options``; ``Options.config()`` builds a ``Config`` (clients, the loaded component
config, the leader-election settings); ``Config.complete()`` fills in what is derived and returns a
``CompletedConfig``, the only thing a component's ``run`` accepts, so nothing runs half-configured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

import attrs

from componentbase.componentconfig._types import (
    ClientConnectionConfiguration,
    LeaderElectionConfiguration,
)

if TYPE_CHECKING:
    import pluggy

    from componentbase.metrics import Metrics
    from componentbase.serving._authn import AuthenticationInfo
    from componentbase.serving._authz import Authorizer
    from componentbase.serving._healthz import HealthChecker
    from componentbase.serving._secure import SecureServingInfo
    from componentbase.serving.configz import Registry

__all__ = ["CompletedConfig", "Config"]

C = TypeVar("C", bound="Config")


@attrs.define(kw_only=True)
class Config:
    """Everything a component needs to run. Subclass it to add the component's own pieces."""

    #: The component's versioned config (``KubeSchedulerConfiguration``...), as loaded and defaulted.
    component_config: Any = None
    client_connection: ClientConnectionConfiguration = attrs.field(factory=ClientConnectionConfiguration)
    #: ``--master``: overrides the server of the kubeconfig.
    master: str = ""
    #: Leader election for this component; ``None`` or ``leader_elect=False`` runs without it.
    leader_election: LeaderElectionConfiguration | None = None
    #: A ``kubernetes.client.ApiClient``, built by ``Options.config()``.
    client: Any = None
    #: The lease's own client, as kube-scheduler's "leader-election" one: its own rate limit and connections,
    #: so a busy component's calls never hold up a renewal. ``None`` falls back to ``client``.
    leader_election_client: Any = None
    #: The component's plugin manager: its own hooks and the plugins given to the command.
    plugins: pluggy.PluginManager | None = None
    #: HTTPS serving (``SecureServingOptions``); ``None`` serves nothing.
    secure_serving: SecureServingInfo | None = None
    #: Delegated authentication and authorization of served requests (``ServingOptions``).
    authentication: AuthenticationInfo | None = None
    authorization: Authorizer | None = None
    #: The component's own metrics registry (``MetricsOptions``); made when serving starts if unset.
    metrics: Metrics | None = None
    #: Extra checks for ``/healthz`` and ``/livez`` (and ``/readyz``), and checks for ``/readyz`` only.
    healthz_checks: list[HealthChecker] = attrs.field(factory=list)
    readyz_checks: list[HealthChecker] = attrs.field(factory=list)
    #: What ``/configz`` serves; ``None`` is the process's default registry (the one ``Command`` fills).
    configz_registry: Registry | None = None
    #: The namespaces a ``Manager`` built from this config caches namespaced kinds from (``--namespace``);
    #: empty for all namespaces.
    namespaces: list[str] = attrs.field(factory=list)
    #: ``--sharded``: a ``Manager`` built from this config runs as one shard of its ring (docs/sharding.md).
    sharded: bool = False
    #: Set by ``run_component`` while it elects for a work not marked ``elects_leader``: the running
    #: ``LeaderElector``. A ``Manager`` built from this config then elects no second time and fences by it.
    leader_elector: Any = None

    def complete(self: C) -> CompletedConfig[C]:
        """Derive what the config implies (subclasses extend :meth:`_complete`) and seal it."""
        self._complete()
        return CompletedConfig(self)

    def _complete(self) -> None:
        """Fill derived fields; the default has nothing to derive."""


class CompletedConfig(Generic[C]):
    """A ``Config`` on which ``complete()`` ran. Only ``Config.complete`` makes one."""

    __slots__ = ("config",)

    def __init__(self, config: C) -> None:
        self.config = config

    def __repr__(self) -> str:
        return f"CompletedConfig({self.config!r})"
