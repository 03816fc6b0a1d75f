"""The providers shipped with the example: ``mock`` and ``process``, offered through the registry hook."""

from __future__ import annotations

import componentbase
from componentbase_examples.virtual_kubelet.provider_types import ProviderContext, ProviderSpec

__all__ = ["BuiltinProviders"]


def _process_provider(context: ProviderContext) -> object:
    """The process provider, imported when a node starts with it: its processes, probes and stats are the
    runtime, which ``--help`` (listing the providers) and config validation need not load."""
    from componentbase_examples.virtual_kubelet.providers.process.provider import ProcessProvider

    return ProcessProvider(context)


class BuiltinProviders:
    """The plugin the command registers first; packages add theirs through the entry-point group."""

    @componentbase.hookimpl
    def virtual_kubelet_providers(self) -> list[ProviderSpec]:
        from componentbase_examples.virtual_kubelet.providers.mock import SPEC as MOCK
        from componentbase_examples.virtual_kubelet.providers.process.config import ProcessConfig, validate_config

        return [MOCK, ProviderSpec(name="process", factory=_process_provider, config_type=ProcessConfig,
                                   validate=validate_config)]
