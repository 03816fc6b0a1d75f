"""``kubescheduler.config.k8s.io/v1`` ``KubeSchedulerConfiguration``: its fields, defaults and validation.

The fields are kube's v1 types: Go pointers read ``null`` as unset (``pointer``), Go ``int32``/``int64``
refuse a number out of their range when the file is decoded (``Int32``/``Int64``), as kube's decoder does.
Defaulting is kube's ``SetDefaults_KubeSchedulerConfiguration``; filling each profile with the default
plugins and their args is in ``v1defaults``, which needs the plugins' args types. The profile's types are in
``profileconfig`` (re-exported here), below both, so neither imports the other in a circle.
"""

from __future__ import annotations

import attrs

import componentbase
from componentbase import field
from componentbase.componentconfig import Int32, Int64, pointer
from componentbase_examples.scheduler import v1defaults
from componentbase_examples.scheduler.extenderconfig import Extender, validate_extenders
from componentbase_examples.scheduler.profileconfig import (
    API_VERSION,
    EXTENSION_POINTS,
    KubeSchedulerProfile,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
)

__all__ = ["API_VERSION", "DEFAULT_SCHEDULER_NAME", "EXTENSION_POINTS", "KIND", "SCHEME", "KubeSchedulerConfiguration",
           "KubeSchedulerProfile", "Plugin", "PluginConfig", "PluginSet", "Plugins", "set_defaults", "validate"]

KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

SCHEME = componentbase.Scheme()


def _leader_election() -> componentbase.LeaderElectionConfiguration:
    return componentbase.LeaderElectionConfiguration(resource_name="kube-scheduler",
                                                     resource_namespace="kube-system")


@attrs.define(kw_only=True)
class KubeSchedulerConfiguration:
    parallelism: Int32 = pointer(Int32(16))
    leader_election: componentbase.LeaderElectionConfiguration = attrs.field(factory=_leader_election)
    client_connection: componentbase.ClientConnectionConfiguration = attrs.field(
        factory=componentbase.ClientConnectionConfiguration)
    enable_profiling: bool = pointer(True)
    #: ``None`` until defaulted: kube turns it on only when profiling is on.
    enable_contention_profiling: bool | None = None
    percentage_of_nodes_to_score: Int32 = pointer(Int32(0))
    pod_initial_backoff_seconds: Int64 = pointer(Int64(1))
    pod_max_backoff_seconds: Int64 = pointer(Int64(10))
    profiles: list[KubeSchedulerProfile] = pointer(factory=list)
    extenders: list[Extender] = pointer(factory=list)
    #: Accepted as kube's: a replica fills its caches before it campaigns whatever this says (a hot standby).
    delay_cache_until_active: bool = False


def set_defaults(cfg: KubeSchedulerConfiguration) -> None:
    """kube-scheduler's v1 defaulting: one default profile filled with the default plugins and their args,
    the lease named after the component, protobuf as content type, qps 50 and burst 100 for 0."""
    componentbase.componentconfig.set_defaults_client_connection_configuration(cfg.client_connection)
    if not cfg.profiles:
        cfg.profiles.append(KubeSchedulerProfile())
    if len(cfg.profiles) == 1 and not cfg.profiles[0].scheduler_name:
        cfg.profiles[0].scheduler_name = DEFAULT_SCHEDULER_NAME
    for profile in cfg.profiles:
        v1defaults.set_defaults_profile(profile)
    le = cfg.leader_election
    le.resource_name = le.resource_name or "kube-scheduler"
    le.resource_namespace = le.resource_namespace or "kube-system"
    if cfg.enable_contention_profiling is None:
        cfg.enable_contention_profiling = cfg.enable_profiling


SCHEME.register(KubeSchedulerConfiguration, API_VERSION, KIND, set_defaults)


def validate(cfg: KubeSchedulerConfiguration) -> list[componentbase.FieldError]:
    """kube-scheduler's ``ValidateKubeSchedulerConfiguration``: every problem, each with its field path and
    kube's words, in kube's order (the profiles' plugins and args are checked against the registered plugins,
    by ``profiles.validate``)."""
    errs: list[componentbase.FieldError] = []
    root = field.Path()
    errs += componentbase.componentconfig.validate_client_connection_configuration(cfg.client_connection,
                                                                                   root.child("clientConnection"))
    errs += _leader_election_errors(cfg.leader_election)
    if cfg.parallelism <= 0:
        errs.append(field.invalid(root.child("parallelism"), cfg.parallelism,
                                  "should be an integer value greater than zero"))
    profiles = root.child("profiles")
    if not cfg.profiles:
        errs.append(field.required(profiles))
    first: dict[str, field.Path] = {}
    for i, profile in enumerate(cfg.profiles):
        path = profiles.index(i)
        if not profile.scheduler_name:
            errs.append(field.required(path.child("schedulerName")))
        if profile.percentage_of_nodes_to_score is not None:
            _check_percentage(errs, path.child("percentageOfNodesToScore"), profile.percentage_of_nodes_to_score)
        names: set[str] = set()
        for j, pc in enumerate(profile.plugin_config):
            if pc.name in names:
                errs.append(field.duplicate(path.child("pluginConfig").index(j), pc.name))
            names.add(pc.name)
        if profile.scheduler_name in first:  # kube names the earlier profile's field as the duplicate value
            errs.append(field.duplicate(path.child("schedulerName"), first[profile.scheduler_name]))
        first[profile.scheduler_name] = path.child("schedulerName")
    _check_percentage(errs, root.child("percentageOfNodesToScore"), cfg.percentage_of_nodes_to_score)
    if cfg.pod_initial_backoff_seconds <= 0:
        errs.append(field.invalid(root.child("podInitialBackoffSeconds"), cfg.pod_initial_backoff_seconds,
                                  "must be greater than 0"))
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        errs.append(field.invalid(root.child("podMaxBackoffSeconds"), cfg.pod_max_backoff_seconds,
                                  "must be greater than or equal to PodInitialBackoffSeconds"))
    errs += validate_extenders(root.child("extenders"), cfg.extenders)
    return errs


def _leader_election_errors(le: componentbase.LeaderElectionConfiguration) -> list[componentbase.FieldError]:
    """component-base's checks, then kube-scheduler's own on the lock: only ``leases``, and only when electing
    (component-base names no lock values; the library's list of them says it its own way)."""
    path = field.Path("leaderElection")
    lock = str(path.child("resourceLock"))
    errs = [e for e in componentbase.componentconfig.validate_leader_election_configuration(le, path)
            if not (e.field == lock and e.type == field.ErrorType.NOT_SUPPORTED)]
    if le.leader_elect and le.resource_lock != "leases":
        errs.append(field.invalid(path.child("resourceLock"), le.resource_lock, 'resourceLock value must be "leases"'))
    return errs


def _check_percentage(errs: list[componentbase.FieldError], path: field.Path, value: int) -> None:
    if value < 0 or value > 100:
        errs.append(field.invalid(path, value, "not in valid range [0-100]"))
