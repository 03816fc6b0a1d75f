"""virtual-kubelet's ``Opts``: its flags, with the defaults ``SetDefaultOpts`` gives them from the environment."""

from __future__ import annotations

import os
from typing import Any, ClassVar

import attrs

import componentbase
import componentbase.tracing
from componentbase import field

DEFAULT_TAINT_KEY = "virtual-kubelet.io/provider"
#: The node's ``kubernetes.io/os`` label values (Go's GOOS, what a kubelet sets), and virtual-kubelet's own spellings
#: of them (its ValidOperatingSystems, matched exactly); the label is always written in lower case.
OPERATING_SYSTEMS = ["linux", "windows", "Linux", "Windows"]


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    return int(value) if value.isdigit() else default


def _kubeconfig_default() -> str:
    env = os.environ.get("KUBECONFIG", "")
    if env:
        return env
    home = os.path.expanduser("~")
    return os.path.join(home, ".kube", "config") if home != "~" else ""


@attrs.define
class VirtualKubeletOptions(componentbase.Options):
    SECTIONS: ClassVar[tuple[str, ...]] = ("Flags", "Authentication flags", "Authorization flags",
                                           "Leader election flags", "Logs flags")

    kubeconfig: str = componentbase.flag(
        "kubeconfig", "kube config file to use for connecting to the Kubernetes API server",
        factory=_kubeconfig_default, section="Flags")
    namespace: str = componentbase.flag(
        "namespace", "kubernetes namespace (default is 'all')", default="", section="Flags",
        deprecated="Nodes must watch for pods in all namespaces. This option is now ignored.", hidden=True)
    cluster_domain: str = componentbase.flag(
        "cluster-domain", "kubernetes cluster-domain (default is 'cluster.local')", default="cluster.local",
        section="Flags")
    node_name: str = componentbase.flag(
        "nodename", "kubernetes node name", factory=lambda: os.environ.get("DEFAULT_NODE_NAME") or "virtual-kubelet",
        section="Flags")
    operating_system: str = componentbase.flag(
        "os", "Operating System (linux/windows)", default="linux", section="Flags")
    provider: str = componentbase.flag("provider", "cloud provider", default="", section="Flags")
    provider_config: str = componentbase.flag(
        "provider-config", "cloud provider configuration file", default="", section="Flags")
    metrics_addr: str = componentbase.flag(
        "metrics-addr", "address to listen for metrics/stats requests", default=":10255", section="Flags")
    listen_port: int = componentbase.flag(
        "listen-port", "port to listen on for the kubelet API", factory=lambda: _env_int("KUBELET_PORT", 10250),
        section="Flags", type_label="int32")
    taint_key: str = componentbase.flag(
        "taint", "Set node taint key", factory=lambda: os.environ.get("VK_TAINT_KEY") or DEFAULT_TAINT_KEY,
        section="Flags",
        deprecated="Taint key should now be configured using the VK_TAINT_KEY environment variable")
    disable_taint: bool = componentbase.flag(
        "disable-taint", "disable the virtual-kubelet node taint", default=False, section="Flags")
    pod_sync_workers: int = componentbase.flag(
        "pod-sync-workers", "set the number of pod synchronization workers", default=10, section="Flags")
    enable_node_lease: bool = componentbase.flag(
        "enable-node-lease", "use node leases (1.13) for node heartbeats", default=True, section="Flags",
        deprecated="leases are always enabled", hidden=True)
    trace_exporters: list[str] = componentbase.flag(
        "trace-exporter", "sets the tracing exporter to use, available exporters: ["
        + " ".join(componentbase.tracing.EXPORTERS) + "]", factory=list,
        section="Flags")
    trace_sample_rate: str = componentbase.flag(
        "trace-sample-rate", "set probability of tracing samples", default="", section="Flags")
    full_resync_period: componentbase.Duration = componentbase.flag(
        "full-resync-period", "how often to perform a full resync of pods between kubernetes and the provider",
        default=componentbase.Duration("1m"), section="Flags", type=componentbase.cli.DURATION)
    startup_timeout: componentbase.Duration = componentbase.flag(
        "startup-timeout", "How long to wait for the virtual-kubelet to start", default=componentbase.Duration(0),
        section="Flags", type=componentbase.cli.DURATION)
    stream_idle_timeout: componentbase.Duration = componentbase.flag(
        "stream-idle-timeout", "stream-idle-timeout is the maximum time a streaming connection can be idle "
        "before the connection is automatically closed", default=componentbase.Duration("30s"),
        section="Flags", type=componentbase.cli.DURATION)
    stream_creation_timeout: componentbase.Duration = componentbase.flag(
        "stream-creation-timeout", "stream-creation-timeout is the maximum time for streaming connection",
        default=componentbase.Duration("30s"), section="Flags", type=componentbase.cli.DURATION)
    leader_election: componentbase.LeaderElectionOptions = attrs.field(
        factory=lambda: componentbase.LeaderElectionOptions(componentbase.LeaderElectionConfiguration(
            leader_elect=False, resource_name="virtual-kubelet", resource_namespace="kube-node-lease")))
    logs: componentbase.LogsOptions = attrs.field(factory=componentbase.LogsOptions)
    #: Who may call the kubelet API: bearer tokens and client certificates, checked by the API server.
    authentication: componentbase.serving.AuthenticationOptions = attrs.field(
        factory=lambda: componentbase.serving.AuthenticationOptions(tolerate_lookup_failure=True))
    authorization: componentbase.serving.AuthorizationOptions = attrs.field(
        factory=componentbase.serving.AuthorizationOptions)
    #: The decoded ``--provider-config``, set when the provider choice is validated.
    provider_settings: Any = attrs.field(default=None)

    def validate(self) -> list[Exception]:
        errs = super().validate()
        if not self.node_name:
            errs.append(field.required("nodename"))
        if not 0 < self.listen_port < 65536:
            errs.append(field.invalid("listen-port", self.listen_port, "must be between 1 and 65535"))
        if self.pod_sync_workers < 1:
            errs.append(field.invalid("pod-sync-workers", self.pod_sync_workers, "must be at least 1"))
        if self.operating_system not in OPERATING_SYSTEMS:
            errs.append(field.not_supported("os", self.operating_system, OPERATING_SYSTEMS))
        for name in ("full_resync_period", "startup_timeout", "stream_idle_timeout", "stream_creation_timeout"):
            value = getattr(self, name)
            if value < 0:
                errs.append(field.invalid(name.replace("_", "-"), value, "must not be negative"))
        le = self.leader_election.configuration
        errs += componentbase.componentconfig.validate_leader_election_configuration(le, field.Path("leaderElection"))
        errs += self.kubelet_serving().validate()
        errs += componentbase.tracing.validate_tracing(self.trace_exporters, self.trace_sample_rate)
        return errs

    def new_config(self) -> componentbase.Config:
        from componentbase_examples.virtual_kubelet.config import VirtualKubeletConfig

        return VirtualKubeletConfig()

    def kubelet_serving(self) -> componentbase.SecureServingOptions:
        """The kubelet API's TLS listener, configured as upstream does: from the environment, no flags.

        ``APISERVER_CERT_LOCATION``/``APISERVER_KEY_LOCATION`` name the serving pair (else a self-signed
        one is made); the listener binds ``$VKUBELET_POD_IP`` (the node's address) or every interface.
        """
        return componentbase.SecureServingOptions(
            bind_address=os.environ.get("VKUBELET_POD_IP") or "0.0.0.0", bind_port=self.listen_port,
            tls_cert_file=os.environ.get("APISERVER_CERT_LOCATION", ""),
            tls_private_key_file=os.environ.get("APISERVER_KEY_LOCATION", ""), pair_name="virtual-kubelet")

    def apply_to(self, config: Any) -> None:
        config.options = self
        config.provider_config = self.provider_settings
        # No client-side rate limit (upstream's --kube-api-qps, unset, means client-go's 5/10): see docs.
        config.client_connection = componentbase.ClientConnectionConfiguration(kubeconfig=self.kubeconfig, qps=-1)
        config.leader_election = self.leader_election.configuration
        super().apply_to(config)  # without a server yet, authentication and authorization stay None

    def connect(self, config: Any) -> None:
        """The client first (a bad kubeconfig is the first thing to hear about), then the kubelet API's auth.

        Its pool keeps a connection per pod sync worker plus the watches, events, lease and node status:
        a smaller pool closes connections as calls return and opens new ones for the next calls.
        """
        config.client = componentbase.new_api_client(config.client_connection,
                                                     pool_maxsize=self.pod_sync_workers + 8)
        self.kubelet_serving().apply_to(config)
        # As upstream, the virtual kubelet asks its own API server about callers unless told otherwise.
        for delegated in (self.authentication, self.authorization):
            if not delegated.kubeconfig:
                delegated.kubeconfig = self.kubeconfig
            delegated.apply_to(config)
        # The node serves the kubelet API itself (its own routes, started with the node), so the
        # component serving that run_component starts for ``secure_serving`` stays off.
        config.kubelet_serving, config.secure_serving = config.secure_serving, None
