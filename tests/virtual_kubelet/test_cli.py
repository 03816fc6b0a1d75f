"""The command line: provider choice and config, startup timeout, entry points (a whole run as a process of its
own: tests/virtual_kubelet/test_signals.py)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import componentbase
from componentbase.serving import configz
from componentbase.testing import LoopbackAPIServer
from componentbase_examples.virtual_kubelet.provider_types import ProviderSpec
from componentbase_examples.virtual_kubelet.providers.mock import MockProvider
from tests.virtual_kubelet.conftest import Kube, free_ports

ROOT = Path(__file__).resolve().parents[2]


def execute(args: list[str], plugins: list[object] = ()) -> tuple[int, str]:  # type: ignore[assignment]
    from componentbase_examples.virtual_kubelet.__main__ import new_command

    cmd = new_command(plugins)
    cmd.configz_registry = configz.Registry()
    err = io.StringIO()
    return cmd.execute(args, stdout=io.StringIO(), stderr=err), err.getvalue()


@pytest.mark.unit
def test_unknown_provider_lists_the_installed_ones() -> None:
    code, err = execute(["--provider=nope"])
    assert code == 1
    assert err.splitlines() == ['Error: provider: Unsupported value: "nope": supported values: "mock", "process"']


@pytest.mark.unit
def test_missing_provider_is_required() -> None:
    code, err = execute([])
    assert code == 1 and "Error: provider: Required value: installed providers: mock, process" in err


@pytest.mark.unit
def test_provider_config_is_decoded_strictly_with_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "mock.yaml"
    bad.write_text("cpu: '4'\nmemroy: 1Gi\npods: lots\n")
    code, err = execute(["--provider=mock", f"--provider-config={bad}"])
    assert code == 1
    assert err.splitlines() == [f'Error: {bad}:2: unknown field "memroy"']
    bad.write_text("pods: lots\n")
    code, err = execute(["--provider=mock", f"--provider-config={bad}"])
    assert code == 1
    assert err.splitlines() == [f'Error: {bad}: pods: Invalid value: "lots": quantities must match the regular '
                                "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"]


@pytest.mark.integration
def test_a_program_can_ship_its_own_provider(apiserver: LoopbackAPIServer, kube: Kube) -> None:
    class Mine:
        @componentbase.hookimpl
        def virtual_kubelet_providers(self) -> list[ProviderSpec]:
            return [ProviderSpec(name="mine", factory=MockProvider)]

    code, err = execute(["--provider=nope"], plugins=[Mine()])
    assert code == 1 and 'supported values: "mine", "mock", "process"' in err


@pytest.mark.process
def test_startup_timeout_exits_1_naming_what_it_waited_for(apiserver: LoopbackAPIServer) -> None:
    apiserver.faults.set(stall=30, resources=["pods"], verbs=["list"])
    port, = free_ports(1)
    code, err = execute(["--provider=mock", f"--kubeconfig={apiserver.kubeconfig_path}", f"--listen-port={port}",
                         "--metrics-addr=", "--startup-timeout=1s"])
    apiserver.faults.clear()
    assert code == 1
    assert "timed out after 1s waiting for informers to sync: pods fields=spec.nodeName=virtual-kubelet" in err


def _fake_distribution(site: Path) -> None:
    """An installed package declaring a provider under the entry-point group."""
    dist = site / "vk_extra-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: vk-extra\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[componentbase.virtual_kubelet.providers]\nextra = vk_extra\n")
    (site / "vk_extra.py").write_text(
        "import attrs, componentbase\n"
        "from componentbase_examples.virtual_kubelet.provider_types import ProviderSpec\n"
        "from componentbase_examples.virtual_kubelet.providers.mock import MockProvider\n"
        "@attrs.define\n"
        "class ExtraConfig:\n"
        "    replicas: int = 1\n"
        "@componentbase.hookimpl\n"
        "def virtual_kubelet_providers():\n"
        "    return [ProviderSpec(name='extra', factory=MockProvider, config_type=ExtraConfig)]\n")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG",)}
    env.update(extra)
    return env


@pytest.mark.process
def test_providers_are_discovered_by_entry_point(tmp_path: Path) -> None:
    _fake_distribution(tmp_path / "site")
    result = subprocess.run([sys.executable, "-m", "componentbase_examples.virtual_kubelet", "--provider=nope"],
                            cwd=ROOT,
                            env=_env(PYTHONPATH=f"{tmp_path / 'site'}:{ROOT}"), capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 1
    assert 'supported values: "extra", "mock", "process"' in result.stderr
    # The package's provider takes its own config file, decoded strictly into its config type.
    bad = tmp_path / "extra.yaml"
    bad.write_text("replicas: many\n")
    result = subprocess.run([sys.executable, "-m", "componentbase_examples.virtual_kubelet", "--provider=extra",
                             f"--provider-config={bad}", "--nodename=vk"], cwd=ROOT,
                            env=_env(PYTHONPATH=f"{tmp_path / 'site'}:{ROOT}"), capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f'Error: {bad}:1: replicas: Invalid value: "many": must be an integer']


def _stat(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return []


def _state(pid: int) -> str:
    fields = _stat(pid)
    return fields[0] if fields else "gone"


def _children(pid: int) -> list[int]:
    """Live processes whose parent is ``pid`` (Linux /proc)."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and (f := _stat(int(p))) and int(f[1]) == pid
            and f[0] != "Z"]


@pytest.mark.process
def test_help_and_validation_do_not_import_the_client() -> None:
    """For each bundled provider, in one process (an interpreter start each cost ~0.4 CPU-s)."""
    probe = ("import sys, io; from componentbase_examples.virtual_kubelet.__main__ import new_command; "
             "c = new_command(); c.execute(['--provider=nope']); "
             "[c.execute([f'--provider={p}', '--help'], stdout=io.StringIO()) for p in ('mock', 'process')]; "
             "print('kubernetes' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False", result.stderr
