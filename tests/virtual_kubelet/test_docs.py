"""The provider written out in docs/virtual-kubelet.md runs as it says."""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest

from componentbase.testing import LoopbackAPIServer, eventually
from tests.virtual_kubelet.conftest import Command, Kube, free_ports, ready

pytestmark = pytest.mark.process

DOC = Path(__file__).resolve().parents[2] / "docs" / "virtual-kubelet.md"


def test_the_documented_provider_runs_pods(apiserver: LoopbackAPIServer, kube: Kube,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    code = re.search(r"```py\n(.*?)```", DOC.read_text(), re.S)  # a module to install: fenced py, not run alone
    assert code is not None
    module = types.ModuleType("myprovider")
    exec(compile(code.group(1), str(DOC), "exec"), module.__dict__)
    monkeypatch.setenv("VKUBELET_POD_IP", "127.0.0.1")
    port, = free_ports(1)
    command = Command(["--provider=echo", f"--kubeconfig={apiserver.kubeconfig_path}", "--nodename=vk",
                       f"--listen-port={port}", "--metrics-addr="], plugins=[module])
    try:
        eventually(lambda: ready(kube.node()) or command.code, 20, what="the node to be Ready")
        assert kube.node()["status"]["capacity"] == {"cpu": "4", "memory": "8Gi", "pods": "10"}
        kube.create_pod("a", [{"name": "c", "image": "x"}])
        eventually(lambda: kube.phase("a") == "Running", what="the pod to run")
    finally:
        assert command.stop() == 0, command.err.getvalue()
