"""The provider plugin points: how a provider is found (``virtual_kubelet_providers``) and what it does.

A provider is an object whose methods are marked ``@componentbase.hookimpl``; the hooks mirror
virtual-kubelet's ``PodLifecycleHandler``, ``PodNotifier``, ``NodeProvider`` and the kubelet API's logs and
exec handlers. Pods, statuses and nodes are the plain JSON dicts the API server speaks (camelCase keys);
a provider may keep what it is given but must copy before changing it.

Only the selected provider is registered on its own plugin manager, so every hook has at most one
implementation and is called with ``firstresult``: a provider implements only what it supports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import componentbase
from componentbase_examples.virtual_kubelet.provider_types import ExecIO, LogOptions, PortStream, ProviderSpec

Pod = dict[str, Any]
PodStatus = dict[str, Any]
Node = dict[str, Any]

hookspec = componentbase.hookspec


class RegistryHooks:
    """Declared on the command's plugin manager: plugins (and entry points) name the providers they ship."""

    @hookspec
    def virtual_kubelet_providers(self) -> list[ProviderSpec]:  # type: ignore[empty-body]
        """The providers this plugin offers, each with its name, its constructor and its config type."""


class ProviderHooks:
    """Declared on the selected provider's own plugin manager; every hook is first-result."""

    # --- PodLifecycleHandler --------------------------------------------------------------------

    @hookspec(firstresult=True)
    def create_pod(self, pod: Pod) -> None:
        """Start running ``pod``; raise to report failure (the pod controller retries with backoff)."""

    @hookspec(firstresult=True)
    def update_pod(self, pod: Pod) -> None:
        """Apply a changed spec, labels or annotations of a pod the provider already runs."""

    @hookspec(firstresult=True)
    def delete_pod(self, pod: Pod) -> None:
        """Stop ``pod`` within its grace period; raise ``PodNotFound`` if the provider never had it."""

    @hookspec(firstresult=True)
    def get_pod(self, namespace: str, name: str) -> Pod | None:
        """The pod as the provider runs it (its spec as last created or updated), or None."""

    @hookspec(firstresult=True)
    def get_pod_status(self, namespace: str, name: str) -> PodStatus | None:
        """The pod's status now; raise ``PodNotFound`` (or return None) when the provider lost it."""

    @hookspec(firstresult=True)
    def get_pods(self) -> list[Pod]:  # type: ignore[empty-body]
        """Every pod the provider runs, so a restarted virtual kubelet adopts them."""

    # --- PodNotifier ----------------------------------------------------------------------------

    @hookspec(firstresult=True)
    def notify_pods(self, callback: Callable[[Pod], None]) -> None:
        """Remember ``callback`` and call it with the whole pod whenever a pod's status changes.

        A provider without this hook is polled with ``get_pod_status`` instead, as upstream wraps a
        synchronous provider.
        """

    # --- NodeProvider ---------------------------------------------------------------------------

    @hookspec(firstresult=True)
    def configure_node(self, node: Node) -> None:
        """Fill in the node before it registers: capacity, allocatable, addresses, conditions, labels."""

    @hookspec(firstresult=True)
    def ping(self) -> None:
        """Raise when the provider is unhealthy; the node then stops heartbeating, as upstream."""

    @hookspec(firstresult=True)
    def notify_node_status(self, callback: Callable[[Node], None]) -> None:
        """Remember ``callback`` and call it with the node whenever its status changes."""

    # --- kubelet API ----------------------------------------------------------------------------

    @hookspec(firstresult=True)
    def get_container_logs(self, namespace: str, pod: str, container: str,
                           opts: LogOptions) -> Iterator[bytes] | None:
        """The container's log as chunks of bytes; with ``opts.follow`` the iterator waits for more."""

    @hookspec(firstresult=True)
    def run_in_container(self, namespace: str, pod: str, container: str, command: list[str],
                         io: ExecIO) -> int | None:
        """Run ``command`` in the container, wired to ``io``; return its exit code."""

    @hookspec(firstresult=True)
    def attach_to_container(self, namespace: str, pod: str, container: str, io: ExecIO) -> int | None:
        """Wire ``io`` to the container's main process (its stdin, its stdout/stderr) until either ends."""

    @hookspec(firstresult=True)
    def port_forward(self, namespace: str, pod: str, port: int, stream: PortStream) -> None:
        """Carry ``stream``'s bytes to and from ``port`` in the pod until either side closes."""

    @hookspec(firstresult=True)
    def get_stats_summary(self) -> dict[str, Any] | None:
        """The kubelet's ``stats/v1alpha1`` Summary (node and pods, CPU and memory) for ``/stats/summary``
        and ``/metrics/resource``; raise ``StatsUnavailable`` when it cannot be measured now."""

    # --- life cycle -----------------------------------------------------------------------------

    @hookspec(firstresult=True)
    def shutdown(self) -> None:
        """The virtual kubelet is exiting: release everything (a process provider kills its children)."""


def hook_names() -> list[str]:
    return [name for name in vars(ProviderHooks) if not name.startswith("_")]

