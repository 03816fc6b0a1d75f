"""The importable provider conformance suite, run against both bundled providers as a provider author would."""

from __future__ import annotations

from pathlib import Path

import pytest

from componentbase_examples.virtual_kubelet.conformance import ProviderConformance

pytestmark = pytest.mark.process  # the process provider runs its containers as child processes


class TestMockProvider(ProviderConformance):
    provider = "mock"


class TestProcessProvider(ProviderConformance):
    provider = "process"

    def config_text(self, tmp_path: Path) -> str:
        return f"root: {tmp_path / 'root'}\n"  # each test its own pods' folder: none is taken up by the next
