"""kube-scheduler's options: its config file, leader election, and its deprecated flags."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

import componentbase
from componentbase_examples.scheduler import config, features
from componentbase_examples.scheduler.simulation_options import SimulationOptions

DEPRECATED = "Deprecated flags"
IGNORED_WITH_CONFIG = "This parameter is ignored if a config file is specified in --config."
#: Informers a scheduler with the default plugins watches: Pods, Nodes, Namespaces, Services,
#: ReplicationControllers, ReplicaSets, StatefulSets, PodDisruptionBudgets, PVCs, PVs, StorageClasses, CSINodes.
_WATCHES = 12


@attrs.define
class DeprecatedOptions(componentbase.Options):
    """Flags kube-scheduler keeps for old command lines; they apply only when no ``--config`` is given."""

    kubeconfig: str = componentbase.flag(
        "kubeconfig", "DEPRECATED: path to kubeconfig file with authorization and master location information. "
        + IGNORED_WITH_CONFIG,
        default="",
        section=DEPRECATED, deprecated=IGNORED_WITH_CONFIG)
    kube_api_qps: float = componentbase.flag(
        "kube-api-qps", "DEPRECATED: QPS to use while talking with kubernetes apiserver. " + IGNORED_WITH_CONFIG,
        default=50.0, section=DEPRECATED, deprecated=IGNORED_WITH_CONFIG)
    kube_api_burst: int = componentbase.flag(
        "kube-api-burst", "DEPRECATED: burst to use while talking with kubernetes apiserver. " + IGNORED_WITH_CONFIG,
        default=100, section=DEPRECATED, deprecated=IGNORED_WITH_CONFIG, type_label="int32")
    kube_api_content_type: str = componentbase.flag(
        "kube-api-content-type", "DEPRECATED: content type of requests sent to apiserver. " + IGNORED_WITH_CONFIG,
        default="application/vnd.kubernetes.protobuf", section=DEPRECATED, deprecated=IGNORED_WITH_CONFIG)
    lock_object_name: str = componentbase.flag(
        "lock-object-name", "DEPRECATED: define the name of the lock object. "
        "Will be removed in favor of leader-elect-resource-name.",
        default="kube-scheduler", section=DEPRECATED, deprecated="use --leader-elect-resource-name instead.")
    lock_object_namespace: str = componentbase.flag(
        "lock-object-namespace", "DEPRECATED: define the namespace of the lock object. "
        "Will be removed in favor of leader-elect-resource-namespace.",
        default="kube-system", section=DEPRECATED,
        deprecated="use --leader-elect-resource-namespace instead.")
    profiling: bool = componentbase.flag(
        "profiling", "DEPRECATED: enable profiling via web interface host:port/debug/pprof/. " + IGNORED_WITH_CONFIG,
        default=True, section=DEPRECATED, deprecated=IGNORED_WITH_CONFIG)
    pod_max_in_unschedulable_pods_duration: componentbase.Duration = componentbase.flag(
        "pod-max-in-unschedulable-pods-duration", "DEPRECATED: the maximum time a pod can stay in unschedulablePods. "
        "If a pod stays in unschedulablePods for longer than this value, the pod will be moved from "
        "unschedulablePods to backoffQ or activeQ. This flag is deprecated and will be removed in a future version.",
        default=componentbase.Duration("5m"), section=DEPRECATED, type=componentbase.cli.DURATION,
        deprecated="This flag is deprecated and will be removed in a future version.")
    contention_profiling: bool = componentbase.flag(
        "contention-profiling", "DEPRECATED: enable block profiling, if profiling is enabled. "
        + IGNORED_WITH_CONFIG, default=True, section=DEPRECATED, deprecated=IGNORED_WITH_CONFIG)

    def merge_into(self, component_config: Any, *, from_file: bool) -> None:
        if from_file:
            return
        cfg: config.KubeSchedulerConfiguration = component_config
        cc = cfg.client_connection
        cc.kubeconfig = self.kubeconfig
        cc.qps = self.kube_api_qps
        cc.burst = self.kube_api_burst
        cc.content_type = self.kube_api_content_type
        cfg.leader_election.resource_name = self.lock_object_name
        cfg.leader_election.resource_namespace = self.lock_object_namespace
        cfg.enable_profiling = self.profiling
        cfg.enable_contention_profiling = self.contention_profiling


@attrs.define
class SchedulerOptions(componentbase.ComponentOptions):
    SCHEME: ClassVar[componentbase.Scheme] = config.SCHEME
    CONFIG_API_VERSION: ClassVar[str] = config.API_VERSION
    CONFIG_KIND: ClassVar[str] = config.KIND
    SECTIONS: ClassVar[tuple[str, ...]] = (
        "Misc flags", "Secure serving flags", "Authentication flags", "Authorization flags", DEPRECATED,
        "Leader election flags", "Feature gate flags", "Metrics flags", "Logs flags")

    serving: componentbase.ServingOptions = attrs.field(
        factory=lambda: componentbase.ServingOptions.for_component(10259, "kube-scheduler"))
    deprecated: DeprecatedOptions = attrs.field(factory=DeprecatedOptions)
    feature_gates: componentbase.FeatureGateOptions = attrs.field(
        factory=lambda: componentbase.FeatureGateOptions(gate=features.FEATURE_GATE))
    simulation: SimulationOptions = attrs.field(factory=SimulationOptions)

    def complete(self) -> list[Exception]:
        """Without ``--config`` the defaults are taken again now that ``--feature-gates`` is applied: kube-scheduler
        defaults its config after parsing flags, and a gate decides defaults (StorageCapacityScoring's shape)."""
        if not self.config_file:
            self.component_config = self.default_component_config()
        return super().complete()

    def validate_component_config(self, cfg: Any) -> list[Exception]:
        return list(config.validate(cfg))

    def connect(self, built: componentbase.Config) -> None:
        """One keep-alive connection per binder thread, plus one per watch (the lease and Events have their own).

        Each informer's watch holds a connection for as long as it runs: Pods, Nodes and Namespaces, the four
        kinds PodTopologySpread's default constraints read, PodDisruptionBudgets, and the volume plugins' four
        kinds; with 8 spare the pool was too small and urllib3 warned "Connection pool is full, discarding
        connection" under load.
        """
        cfg: config.KubeSchedulerConfiguration = self.component_config
        built.client = componentbase.new_api_client(built.client_connection, built.master,
                                                    pool_maxsize=cfg.parallelism + _WATCHES + 4)

    def config(self) -> componentbase.Config:
        """A ``--dry-run`` needs no client, lease or server: only the component config."""
        if not self.simulation.dry_run:
            return super().config()
        cfg = self.new_config()
        cfg.component_config = self.component_config
        return cfg
