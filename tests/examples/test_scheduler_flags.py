"""Every kube-scheduler flag (v1.36's --help, the JSON logging flags included) is accepted with kube's default;
flags with no effect here say so in their help and warn once when set; a usage error exits 1 as cli.Run does."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

import componentbase
from componentbase.serving import configz
from componentbase_examples.scheduler.__main__ import new_command

pytestmark = pytest.mark.unit

#: kube-scheduler v1.36's flags (kubernetes.io's generated reference, plus the JSON logging flags its binary has).
KUBE_SCHEDULER_FLAGS = """
allow-metric-labels allow-metric-labels-manifest authentication-kubeconfig authentication-skip-lookup
authentication-token-webhook-cache-ttl authentication-tolerate-lookup-failure authorization-always-allow-paths
authorization-kubeconfig authorization-webhook-cache-authorized-ttl authorization-webhook-cache-unauthorized-ttl
bind-address cert-dir client-ca-file config contention-profiling disable-http2-serving disabled-metrics
emulated-version feature-gates help http2-max-streams-per-connection kube-api-burst kube-api-content-type
kube-api-qps kubeconfig leader-elect leader-elect-lease-duration leader-elect-renew-deadline
leader-elect-resource-lock leader-elect-resource-name leader-elect-resource-namespace leader-elect-retry-period
log-flush-frequency log-json-info-buffer-size log-json-split-stream log-text-info-buffer-size log-text-split-stream
logging-format master min-compatibility-version permit-address-sharing permit-port-sharing
pod-max-in-unschedulable-pods-duration profiling requestheader-allowed-names requestheader-client-ca-file
requestheader-extra-headers-prefix requestheader-group-headers requestheader-uid-headers
requestheader-username-headers secure-port show-hidden-metrics-for-version tls-cert-file tls-cipher-suites
tls-curve-preferences tls-min-version tls-private-key-file tls-sni-cert-key v version vmodule write-config-to
""".split()

#: Each flag this scheduler accepts but cannot honour, with a value to set it to.
INERT = {
    "disable-http2-serving": "true", "http2-max-streams-per-connection": "100", "permit-address-sharing": "true",
    "tls-sni-cert-key": "a.crt,a.key:*.example.com", "tls-curve-preferences": "23,29",
    "requestheader-allowed-names": "front-proxy", "requestheader-client-ca-file": "ca.crt",
    "requestheader-extra-headers-prefix": "x-extra-", "requestheader-group-headers": "x-group",
    "requestheader-uid-headers": "x-uid", "requestheader-username-headers": "x-user",
    "log-flush-frequency": "1s", "log-text-info-buffer-size": "2Ki", "log-text-split-stream": "true",
    "log-json-info-buffer-size": "1M", "log-json-split-stream": "true", "emulated-version": "kube=1.33",
    "min-compatibility-version": "1.32",
}


def execute(args: list[str]) -> tuple[int, str, str]:
    cmd = new_command()
    cmd.configz_registry = configz.Registry()
    out, err = io.StringIO(), io.StringIO()
    code = cmd.execute(args, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_every_kube_scheduler_flag_is_accepted() -> None:
    _, out, _ = execute(["--help"])
    ours = set(re.findall(r"^\s+(?:-\w, )?--([a-z0-9-]+)", out, re.MULTILINE))
    assert sorted(set(KUBE_SCHEDULER_FLAGS) - ours) == []
    # the simulation is this scheduler's own; the lock-object flags are kept for old command lines
    assert sorted(ours - set(KUBE_SCHEDULER_FLAGS)) == ["dry-run", "lock-object-name", "lock-object-namespace"]


@pytest.mark.parametrize(("usage", "default"), [
    ("--requestheader-extra-headers-prefix strings", "(default [x-remote-extra-])"),
    ("--requestheader-group-headers strings", "(default [x-remote-group])"),
    ("--requestheader-username-headers strings", "(default [x-remote-user])"),
    ("--log-flush-frequency duration", "(default 5s)"),
    ("--pod-max-in-unschedulable-pods-duration duration", "(default 5m0s)"),
    ("--kube-api-content-type string", '(default "application/vnd.kubernetes.protobuf")'),
    ("--emulated-version strings", "Options are: kube=1.31..1.34(default:1.34)"),
])
def test_kube_defaults_are_shown(usage: str, default: str) -> None:
    _, out, _ = execute(["--help"])
    line = next(line for line in out.splitlines() if usage in line)
    block = out[out.index(line):].split("\n      --", 1)[0]
    assert default in block


def test_flags_without_effect_say_so_and_warn_once(tmp_path: Path) -> None:
    _, out, _ = execute(["--help"])
    for name in INERT:
        block = out[out.index(f"--{name} "):].split("\n      --", 1)[0]
        assert "[No effect here: " in block, name
    args = [f"--{name}={value}" for name, value in INERT.items()]
    args += ["--log-flush-frequency=2s", f"--write-config-to={tmp_path / 'out.yaml'}"]
    code, _, err = execute(args)
    assert code == 0, err
    for name in INERT:
        assert err.count(f"Flag --{name} has no effect here: ") == 1, (name, err)


def test_effective_flags_do_not_warn(tmp_path: Path) -> None:
    code, _, err = execute(["--permit-port-sharing", "--pod-max-in-unschedulable-pods-duration=1m",
                            "--allow-metric-labels-manifest=" + str(tmp_path / "m.yaml"),
                            f"--write-config-to={tmp_path / 'out.yaml'}"])
    assert code == 1 and err.splitlines()[-1].startswith(
        f"Error: --allow-metric-labels-manifest: failed to read allow list manifest {tmp_path / 'm.yaml'}: ")
    assert "no effect" not in err


@pytest.mark.parametrize(("arg", "message"), [
    ("--no-such-flag", "Error: unknown flag: --no-such-flag"),
    ("--tls-sni-cert-key=onlyone", 'Error: invalid argument "onlyone" for "--tls-sni-cert-key" flag: '
                                   "expected comma separated certificate and key file paths"),
    ("--log-text-info-buffer-size=lots", 'Error: invalid argument "lots" for "--log-text-info-buffer-size" flag: '),
    ("--tls-curve-preferences=x", 'Error: invalid argument "x" for "--tls-curve-preferences" flag: '),
])
def test_a_usage_error_exits_1_as_kube_scheduler(arg: str, message: str) -> None:
    code, _, err = execute([arg])
    errors = [line for line in err.splitlines() if not line.startswith("Flag --")]  # the no-effect warning
    assert code == 1 and errors[0].startswith(message) and errors[1] == "Run 'kube-scheduler --help' for usage."


@pytest.mark.parametrize(("arg", "message"), [
    ("--emulated-version=wardle=1.2", "Error: --emulated-version: component not registered: wardle"),
    ("--emulated-version=1.20", "Error: --emulated-version: 1.20 is outside the supported range 1.31..1.34"),
    ("--min-compatibility-version=kube=one", "Error: --min-compatibility-version: illegal version string 'one': "
                                             "must be major.minor"),
])
def test_compatibility_versions_are_validated(arg: str, message: str) -> None:
    code, _, err = execute([arg])
    assert code == 1 and message in err.splitlines()


def test_metric_labels_manifest_is_read_and_the_flag_wins(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text('allowListMapping:\n  "m1,l1": "a,b"\n  "m2,l2": "c"\n')
    metrics = componentbase.metrics.MetricsOptions()
    fss = componentbase.cli.NamedFlagSets()
    metrics.add_flags(fss)
    fss.parse([f"--allow-metric-labels-manifest={manifest}", "--allow-metric-labels=m2,l2='d,e'"])
    assert metrics.validate() == []
    assert metrics.allow_labels() == {"m1,l1": ["a", "b"], "m2,l2": ["d", "e"]}
    manifest.write_text("allowListMapping: [1]\n")
    assert [str(e) for e in metrics.validate()] == [
        f"--allow-metric-labels-manifest: {manifest}: want allowListMapping, a map of strings"]
