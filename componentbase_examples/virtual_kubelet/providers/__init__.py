"""The providers shipped with the example: ``mock`` and ``process``, offered through the registry hook."""

from __future__ import annotations

import componentbase
from componentbase_examples.virtual_kubelet.provider_types import ProviderSpec

__all__ = ["BuiltinProviders"]


class BuiltinProviders:
    """The plugin the command registers first; packages add theirs through the entry-point group."""

    @componentbase.hookimpl
    def virtual_kubelet_providers(self) -> list[ProviderSpec]:
        from componentbase_examples.virtual_kubelet.providers.mock import SPEC as MOCK
        from componentbase_examples.virtual_kubelet.providers.process.provider import SPEC as PROCESS

        return [MOCK, PROCESS]
