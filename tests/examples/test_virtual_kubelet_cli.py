"""The example virtual kubelet's command line: virtual-kubelet's flags, env defaults and deprecations."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from componentbase.serving import configz

ROOT = Path(__file__).resolve().parents[2]


def execute(args: list[str]) -> tuple[int, str, str]:
    from componentbase_examples.virtual_kubelet.__main__ import new_command

    cmd = new_command()
    cmd.configz_registry = configz.Registry()
    out, err = io.StringIO(), io.StringIO()
    return cmd.execute(args, stdout=out, stderr=err), out.getvalue(), err.getvalue()


@pytest.mark.unit
def test_help_shows_upstream_defaults_and_hides_hidden_flags() -> None:
    code, out, _ = execute(["--help"])
    assert code == 0
    for expected in ('--nodename string', '(default "virtual-kubelet")', '--os string',
                     '(default "linux")', '--cluster-domain string', '(default "cluster.local")',
                     '--metrics-addr string', '(default ":10255")', '--listen-port int32',
                     '(default 10250)', '--pod-sync-workers int', '(default 10)',
                     '--full-resync-period duration', '(default 1m0s)', '--stream-idle-timeout duration',
                     '(default 30s)', '--stream-creation-timeout duration', "--disable-taint",
                     "--startup-timeout duration", "--trace-exporter strings", "--trace-sample-rate string",
                     "--provider string", "--provider-config string", "--taint string"):
        assert expected in out
    assert "--namespace" not in out and "--enable-node-lease" not in out


@pytest.mark.process
def test_env_defaults() -> None:
    probe = ("from componentbase_examples.virtual_kubelet.options import VirtualKubeletOptions as O; o = O(); "
             "print(o.node_name, o.listen_port, o.taint_key)")
    env = {"DEFAULT_NODE_NAME": "vk-7", "KUBELET_PORT": "11250", "VK_TAINT_KEY": "example.com/vk",
           "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.stdout.split() == ["vk-7", "11250", "example.com/vk"], result.stderr


@pytest.mark.unit
def test_deprecated_flags_warn_hidden_ones_too(tmp_path: Path) -> None:
    code, _, err = execute(["--provider=mock", "--namespace=ns", "--enable-node-lease", "--taint=x",
                            f"--kubeconfig={tmp_path / 'none'}"])
    lines = err.splitlines()
    assert "Flag --namespace has been deprecated, Nodes must watch for pods in all namespaces. " \
           "This option is now ignored." in lines
    assert "Flag --enable-node-lease has been deprecated, leases are always enabled" in lines
    assert "Flag --taint has been deprecated, Taint key should now be configured using the VK_TAINT_KEY " \
           "environment variable" in lines
    assert code == 1
    assert f"Error: invalid configuration: stat {tmp_path / 'none'}: no such file or directory" in lines


@pytest.mark.unit
@pytest.mark.parametrize(("args", "line"), [
    (["--os=Plan9"], 'Error: os: Unsupported value: "Plan9": supported values: "linux", "windows", "Linux", "Windows"'),
    (["--pod-sync-workers=0"], "Error: pod-sync-workers: Invalid value: 0: must be at least 1"),
    (["--listen-port=70000"], "Error: listen-port: Invalid value: 70000: must be between 1 and 65535"),
    (["--nodename="], "Error: nodename: Required value"),
    (["--full-resync-period=-1s"], 'Error: full-resync-period: Invalid value: "-1s": must not be negative'),
    (["--leader-elect", "--leader-elect-retry-period=9s"],
     'Error: leaderElection.renewDeadline: Invalid value: "10s": must be greater than 1.2 x retryPeriod (10.8s)'),
])
def test_validation(args: list[str], line: str) -> None:
    code, _, err = execute(args)
    assert code == 1
    assert line in err.splitlines()


@pytest.mark.unit
def test_bad_duration_flag_exits_1() -> None:
    code, _, err = execute(["--full-resync-period=soon"])
    assert code == 1
    assert err.splitlines()[0] == ('Error: invalid argument "soon" for "--full-resync-period" flag: '
                                   'time: invalid duration "soon"')


@pytest.mark.unit
@pytest.mark.parametrize("value", ["linux", "Linux", "windows", "Windows"])
def test_os_takes_the_node_label_values_and_upstream_spellings(value: str, tmp_path: Path) -> None:
    code, _, err = execute([f"--os={value}", f"--kubeconfig={tmp_path / 'none'}"])
    assert code == 1 and not [line for line in err.splitlines() if line.startswith("Error: os:")]


@pytest.mark.unit
def test_os_defaults_to_the_node_label_value() -> None:
    from componentbase_examples.virtual_kubelet.options import VirtualKubeletOptions

    assert VirtualKubeletOptions().operating_system == "linux"
    code, _, err = execute(["--os=LINUX"])
    assert code == 1 and 'Error: os: Unsupported value: "LINUX"' in err
