"""``python -m componentbase_examples.virtual_kubelet --provider NAME``: a virtual kubelet; a provider runs the pods."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

import componentbase
from componentbase_examples.virtual_kubelet.hookspecs import RegistryHooks
from componentbase_examples.virtual_kubelet.options import VirtualKubeletOptions
from componentbase_examples.virtual_kubelet.provider import ENTRY_POINT_GROUP
from componentbase_examples.virtual_kubelet.providers import BuiltinProviders
from componentbase_examples.virtual_kubelet.selection import ProviderSelection, describe_providers


def run(completed: componentbase.CompletedConfig[Any], stop: threading.Event) -> int:
    from componentbase_examples.virtual_kubelet.app import run_node

    return run_node(completed, stop)


run.elects_leader = True  # type: ignore[attr-defined]  # its Manager elects (with --leader-elect): not run_component


DESCRIPTION = """virtual-kubelet provides a virtual kubelet interface for your kubernetes cluster.

It registers a Node, keeps its Lease and status, and runs the pods scheduled to it through a provider
chosen with --provider: providers come built in or from packages (entry point group
componentbase.virtual_kubelet.providers). It serves the kubelet API (logs, exec) on --listen-port."""


class _Command(componentbase.Command):
    """The command whose --help lists the providers installed (only then: loading them all takes time)."""

    def help_text(self, width: int | None = None) -> str:
        self.long = f"{DESCRIPTION}\n\n{describe_providers(self.plugins)}"
        return super().help_text(width)


def new_command(plugins: Iterable[object] = ()) -> componentbase.Command:
    """The command; ``plugins`` may offer more providers (as packages do through the entry-point group)."""
    cmd = _Command("virtual-kubelet", VirtualKubeletOptions(), run,
                   short="virtual-kubelet provides a virtual kubelet interface for your kubernetes cluster.",
                   hookspecs=[RegistryHooks], plugins=[BuiltinProviders(), *plugins],
                   entry_point_group=ENTRY_POINT_GROUP)
    cmd.plugins.register(ProviderSelection(cmd.plugins))
    return cmd


if __name__ == "__main__":
    new_command().main()
