"""Finding the provider ``--provider`` names and calling it through its own plugin manager."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pluggy

from componentbase_examples.virtual_kubelet.hookspecs import Node, Pod, PodStatus, ProviderHooks
from componentbase_examples.virtual_kubelet.provider_types import (
    ExecIO,
    LogOptions,
    PortStream,
    ProviderContext,
    ProviderSpec,
)

__all__ = ["ENTRY_POINT_GROUP", "Provider", "installed_providers"]

#: Packages ship providers by declaring a plugin under this entry-point group.
ENTRY_POINT_GROUP = "componentbase.virtual_kubelet.providers"


def installed_providers(plugins: pluggy.PluginManager) -> dict[str, ProviderSpec]:
    """Every provider the command's plugins offer, by name; the first plugin to claim a name keeps it."""
    found: dict[str, ProviderSpec] = {}
    for specs in reversed(plugins.hook.virtual_kubelet_providers()):  # pluggy calls the last registered first
        for spec in specs or ():
            found.setdefault(spec.name, spec)
    return dict(sorted(found.items()))


class Provider:
    """The selected provider object behind a plugin manager holding only it."""

    def __init__(self, name: str, impl: object) -> None:
        self.name = name
        self.impl = impl
        self._pm = pluggy.PluginManager("componentbase")
        self._pm.add_hookspecs(ProviderHooks)
        self._pm.register(impl, name=name)
        self._pm.check_pending()  # a misspelt hook is an error now, not a silent no-op
        self.hook: Any = self._pm.hook

    @classmethod
    def build(cls, spec: ProviderSpec, context: ProviderContext) -> Provider:
        return cls(spec.name, spec.factory(context))

    def implements(self, hook: str) -> bool:
        return bool(getattr(self._pm.hook, hook).get_hookimpls())

    # Thin typed calls, so the controllers read like upstream's interface.

    def create_pod(self, pod: Pod) -> None:
        self.hook.create_pod(pod=pod)

    def update_pod(self, pod: Pod) -> None:
        self.hook.update_pod(pod=pod)

    def delete_pod(self, pod: Pod) -> None:
        self.hook.delete_pod(pod=pod)

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        result: Pod | None = self.hook.get_pod(namespace=namespace, name=name)
        return result

    def get_pod_status(self, namespace: str, name: str) -> PodStatus | None:
        result: PodStatus | None = self.hook.get_pod_status(namespace=namespace, name=name)
        return result

    def get_pods(self) -> list[Pod]:
        return list(self.hook.get_pods() or ())

    def notify_pods(self, callback: Callable[[Pod], None]) -> None:
        self.hook.notify_pods(callback=callback)

    def configure_node(self, node: Node) -> None:
        self.hook.configure_node(node=node)

    def ping(self) -> None:
        self.hook.ping()

    def notify_node_status(self, callback: Callable[[Node], None]) -> None:
        self.hook.notify_node_status(callback=callback)

    def get_container_logs(self, namespace: str, pod: str, container: str, opts: LogOptions) -> Iterator[bytes]:
        chunks: Iterator[bytes] | None = self.hook.get_container_logs(
            namespace=namespace, pod=pod, container=container, opts=opts)
        return iter(chunks or ())

    def run_in_container(self, namespace: str, pod: str, container: str, command: list[str], io: ExecIO) -> int:
        code = self.hook.run_in_container(namespace=namespace, pod=pod, container=container, command=command, io=io)
        return int(code or 0)

    def attach_to_container(self, namespace: str, pod: str, container: str, io: ExecIO) -> int:
        code = self.hook.attach_to_container(namespace=namespace, pod=pod, container=container, io=io)
        return int(code or 0)

    def port_forward(self, namespace: str, pod: str, port: int, stream: PortStream) -> None:
        self.hook.port_forward(namespace=namespace, pod=pod, port=port, stream=stream)

    def get_stats_summary(self) -> dict[str, Any]:
        summary: dict[str, Any] | None = self.hook.get_stats_summary()
        return summary or {}

    def shutdown(self) -> None:
        self.hook.shutdown()

