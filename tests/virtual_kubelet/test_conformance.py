"""The importable provider conformance suite, run against both bundled providers as a provider author would."""

from __future__ import annotations

from pathlib import Path

import pytest

from componentbase_examples.virtual_kubelet.conformance import ProviderConformance

#: The process provider runs its containers as child processes. One node per class (the suite's class-scoped
#: fixture): the module stays on one worker.
pytestmark = [pytest.mark.process, pytest.mark.xdist_group("vk-conformance")]


class TestMockProvider(ProviderConformance):
    provider = "mock"


class TestProcessProvider(ProviderConformance):
    provider = "process"

    def config_text(self, tmp_path: Path) -> str:
        return f"root: {tmp_path / 'root'}\n"  # the node's own pods' folder: none is taken up by another
