"""``controller_command``: a whole controller component from one setup function, with every library flag.

For a controller that needs no config file of its own: ``--kubeconfig``, ``--master``, ``--kube-api-qps`` and
``--kube-api-burst`` (no client-side limit by default), ``--namespace``, secure serving of ``/healthz``,
``/livez``, ``/readyz`` and ``/metrics`` with delegated authentication and authorization (kube-controller-
manager's flags), the leader election and logging flags, the webhook server's (``--webhook-cert-dir``,
``--webhook-port``), ``--version``. The ``Manager`` gets the client, serves the webhooks ``setup`` registers
on ``manager.webhooks`` (on every replica), elects the leader (sync first: a hot standby) and runs what
``setup`` added to it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import attrs

from componentbase.app._command import Command
from componentbase.app._config import CompletedConfig, Config
from componentbase.app._options import Options
from componentbase.cli import flag
from componentbase.componentconfig import (
    ClientConnectionConfiguration,
    LeaderElectionConfiguration,
    LeaderElectionOptions,
    validate_leader_election_configuration,
)
from componentbase.logs import LogsOptions
from componentbase.serving import ServingOptions
from componentbase.util import field, validation
from componentbase.webhook import WebhookOptions

__all__ = ["DEFAULT_SECURE_PORT", "ControllerOptions", "controller_command"]

log = logging.getLogger("componentbase.app")

#: The HTTPS port of ``/healthz``, ``/readyz``, ``/metrics``: the one kubebuilder's scaffold serves its secure
#: metrics on (kube-controller-manager's 10257 would clash with it on a control-plane node's host network).
DEFAULT_SECURE_PORT = 8443


@attrs.define
class ControllerOptions(Options):
    """The flags of a controller without a config file of its own."""

    SECTIONS: ClassVar[tuple[str, ...]] = (
        "Misc flags", "Secure serving flags", "Authentication flags", "Authorization flags", "Leader election flags",
        "Webhook flags", "Metrics flags", "Logs flags")

    kubeconfig: str = flag("kubeconfig", "Path to a kubeconfig file; in-cluster configuration without it.",
                           default="")
    master: str = flag("master", "The address of the Kubernetes API server (overrides any value in kubeconfig)",
                       default="")
    kube_api_qps: float = flag(
        "kube-api-qps", "QPS to use while talking with kubernetes apiserver. Negative (the default): no client-side "
        "rate limit, the API server's priority and fairness limits the controller, as controller-runtime's client "
        "does by default; 0: client-go's default (5).", default=-1.0, type_label="float32")
    kube_api_burst: int = flag(
        "kube-api-burst", "Burst to use while talking with kubernetes apiserver (with a positive --kube-api-qps).",
        default=100, type_label="int32")
    namespaces: list[str] = flag(
        "namespace", "Namespace to cache and reconcile namespaced objects in; repeat the flag or separate names "
        "with commas for several (one watch each). All namespaces when not given; cluster-scoped kinds are "
        "not affected.", factory=list)
    sharded: bool = flag(
        "sharded", "Run as one shard of this controller's ring: each replica holds a shard Lease and reconciles "
        "only the objects the sharder (on the elected leader) labels with its shard; needs --leader-elect.",
        default=False)
    serving: ServingOptions = attrs.field(factory=lambda: ServingOptions.for_component(DEFAULT_SECURE_PORT,
                                                                                      "controller"))
    leader_election: LeaderElectionOptions = attrs.field(factory=LeaderElectionOptions)
    webhook: WebhookOptions = attrs.field(factory=WebhookOptions)
    logs: LogsOptions = attrs.field(factory=LogsOptions)

    def validate(self) -> list[Exception]:
        errs: list[Exception] = [*super().validate(),
                                 *validate_leader_election_configuration(self.leader_election.configuration,
                                                                         field.Path("leaderElection"))]
        if self.kube_api_burst < 0:
            errs.append(ValueError(f"--kube-api-burst {self.kube_api_burst} must not be negative"))
        if self.sharded and not self.leader_election.configuration.leader_elect:
            errs.append(ValueError("--sharded needs --leader-elect: the sharder assigning objects runs on the leader"))
        for namespace in self.namespaces:
            errs.extend(ValueError(f'--namespace "{namespace}": {e}') for e in validation.dns1123_label(namespace))
        return errs

    def apply_to(self, config: Config) -> None:
        super().apply_to(config)
        config.client_connection = ClientConnectionConfiguration(kubeconfig=self.kubeconfig, qps=self.kube_api_qps,
                                                                 burst=self.kube_api_burst)
        config.master = self.master
        config.leader_election = self.leader_election.configuration
        config.namespaces = list(dict.fromkeys(self.namespaces))
        config.sharded = self.sharded
        if config.secure_serving is not None:
            from componentbase.controller import CacheSyncCheck  # the runtime machinery: not on the --help path

            config.readyz_checks = [*config.readyz_checks, CacheSyncCheck()]  # Manager.from_config fills it

    def connect(self, config: Config) -> None:
        from componentbase.client import new_api_client  # the client: not on the --help path

        config.client = new_api_client(config.client_connection, config.master)


def controller_command(name: str, setup: Callable[[Any], None], *, short: str = "",
                       leader_elect: bool = True, lease_namespace: str = "kube-system",
                       secure_port: int = DEFAULT_SECURE_PORT,
                       shard_kinds: Sequence[tuple[str, str]] = (), shard_owned: Sequence[tuple[str, str]] = (),
                       shard_selector: str = "") -> Command:
    """A ``Command`` running the controllers ``setup(manager)`` adds to a ``componentbase.controller.Manager``.

    Leader election is on by default, on a Lease named after the component; serving on ``secure_port``
    (``--secure-port``; 0 turns it off), its generated certificate files named after the component. With
    ``--sharded``, the ``shard_kinds`` (``[("v1", "ConfigMap")]``; their objects matching ``shard_selector``) and
    the ``shard_owned`` kinds they control are sharded across the replicas on a ring named after the component.
    """
    le = LeaderElectionConfiguration(leader_elect=leader_elect, resource_name=name,
                                     resource_namespace=lease_namespace)
    options = ControllerOptions(leader_election=LeaderElectionOptions(le),
                                serving=ServingOptions.for_component(secure_port, name))

    def run(completed: CompletedConfig[Any], stop: threading.Event) -> int:
        from componentbase.controller import Manager, ShardingConfig  # the runtime: not on the --help path

        if completed.config.sharded and not shard_kinds:
            log.error("--sharded: %s names no kinds to shard (controller_command's shard_kinds)", name)
            return 1
        sharding = ShardingConfig(ring=name, kinds=shard_kinds, owned=shard_owned, selector=shard_selector) \
            if completed.config.sharded else None
        manager = Manager.from_config(completed, webhook_options=options.webhook, sharding=sharding)
        setup(manager)
        return manager.run(stop)

    run.elects_leader = True  # type: ignore[attr-defined]  # the manager elects, its caches synced first
    return Command(name, options, run, short=short or f"{name}: a controller built on componentbase.")
