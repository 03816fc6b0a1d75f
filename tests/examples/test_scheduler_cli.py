"""The example kube-scheduler's command line: kube-scheduler's flags, config file and validation."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

import componentbase
from componentbase.serving import configz
from componentbase_examples.scheduler.__main__ import new_command
from componentbase_examples.scheduler.config import KubeSchedulerConfiguration, KubeSchedulerProfile

ROOT = Path(__file__).resolve().parents[2]


def execute(args: list[str]) -> tuple[int, str, str, componentbase.Command]:
    cmd = new_command()
    cmd.configz_registry = configz.Registry()
    out, err = io.StringIO(), io.StringIO()
    code = cmd.execute(args, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue(), cmd


def written(tmp_path: Path, *args: str) -> KubeSchedulerConfiguration:
    target = tmp_path / "out.yaml"
    code, _, err, _ = execute([*args, f"--write-config-to={target}"])
    assert code == 0, err
    cfg = new_command().options.SCHEME.decode_file(target)  # type: ignore[attr-defined]
    assert isinstance(cfg, KubeSchedulerConfiguration)
    return cfg


@pytest.mark.unit
def test_help_sections_in_kube_scheduler_order() -> None:
    code, out, _, _ = execute(["--help"])
    assert code == 0
    sections = [line for line in out.splitlines() if line.endswith(" flags:")]
    assert sections == ["Misc flags:", "Secure serving flags:", "Authentication flags:", "Authorization flags:",
                        "Deprecated flags:", "Leader election flags:", "Feature gate flags:", "Metrics flags:",
                        "Logs flags:", "Simulation flags:", "Global flags:"]
    assert "--leader-elect-lease-duration duration" in out and "(default 15s)" in out
    assert '--leader-elect-resource-name string        The name of resource object' in out


@pytest.mark.unit
def test_defaults_written_and_loaded_back_unchanged(tmp_path: Path) -> None:
    cfg = written(tmp_path)
    assert cfg.parallelism == 16 and cfg.pod_initial_backoff_seconds == 1 and cfg.pod_max_backoff_seconds == 10
    le = cfg.leader_election
    assert (le.leader_elect, str(le.lease_duration), str(le.renew_deadline), str(le.retry_period)) == \
        (True, "15s", "10s", "2s")
    assert (le.resource_lock, le.resource_name, le.resource_namespace) == ("leases", "kube-scheduler", "kube-system")
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler"]
    text = (tmp_path / "out.yaml").read_text()
    assert text.startswith("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    again = written(tmp_path, f"--config={tmp_path / 'out.yaml'}")
    assert again == cfg


@pytest.mark.unit
def test_deprecated_flags_apply_only_without_config(tmp_path: Path) -> None:
    cfg = written(tmp_path, "--kubeconfig=/k", "--kube-api-qps=7", "--lock-object-name=old", "--profiling=false")
    assert (cfg.client_connection.kubeconfig, cfg.client_connection.qps) == ("/k", 7.0)
    assert cfg.leader_election.resource_name == "old" and cfg.enable_profiling is False
    source = tmp_path / "in.yaml"
    source.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "parallelism: 4\n")
    cfg = written(tmp_path, f"--config={source}", "--kubeconfig=/k", "--lock-object-name=old")
    assert cfg.parallelism == 4 and cfg.client_connection.kubeconfig == ""
    assert cfg.leader_election.resource_name == "kube-scheduler"


@pytest.mark.unit
def test_a_zero_qps_or_burst_in_the_file_means_the_component_defaults(tmp_path: Path) -> None:
    source = tmp_path / "in.yaml"
    source.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "clientConnection:\n  qps: 0\n  burst: 0\n")
    cc = written(tmp_path, f"--config={source}").client_connection
    assert (cc.qps, cc.burst) == (50.0, 100)
    source.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "clientConnection:\n  qps: -1\n  burst: 5\n")
    cc = written(tmp_path, f"--config={source}").client_connection
    assert (cc.qps, cc.burst) == (-1.0, 5)


@pytest.mark.unit
def test_leader_election_flags_override_the_file_and_beat_deprecated_aliases(tmp_path: Path) -> None:
    source = tmp_path / "in.yaml"
    source.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "leaderElection:\n  leaseDuration: 30s\n  resourceName: from-file\n")
    cfg = written(tmp_path, f"--config={source}", "--leader-elect-renew-deadline=20s")
    assert (str(cfg.leader_election.lease_duration), str(cfg.leader_election.renew_deadline)) == ("30s", "20s")
    assert cfg.leader_election.resource_name == "from-file"
    cfg = written(tmp_path, "--lock-object-name=old", "--leader-elect-resource-name=new")
    assert cfg.leader_election.resource_name == "new"


@pytest.mark.unit
def test_durations_keep_every_nanosecond_from_flags_and_files(tmp_path: Path) -> None:
    """Go's int64 nanoseconds, past float64's 2**53: a flag and a file value are written back as given."""
    most, odd = "2562047h47m16.854775807s", "2501h59m59.254740993s"  # 1<<63 - 1 and 1<<53 + 1 nanoseconds
    cfg = written(tmp_path, f"--leader-elect-lease-duration={most}", "--leader-elect-renew-deadline=9007199254740993ns")
    le = cfg.leader_election
    assert (str(le.lease_duration), le.lease_duration.nanoseconds) == (most, (1 << 63) - 1)
    assert (str(le.renew_deadline), le.renew_deadline.nanoseconds) == (odd, (1 << 53) + 1)
    assert f"leaseDuration: {most}\n" in (tmp_path / "out.yaml").read_text()
    source = tmp_path / "in.yaml"
    source.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      f"leaderElection:\n  leaseDuration: {most}\n  renewDeadline: 9007199254740993ns\n")
    assert written(tmp_path, f"--config={source}").leader_election == le
    code, _, err, _ = execute(["--leader-elect-lease-duration=2562047h47m16.854775808s"])
    assert code == 1 and 'time: invalid duration "2562047h47m16.854775808s"' in err


@pytest.mark.unit
def test_validation_reports_every_problem_with_its_path(tmp_path: Path) -> None:
    source = tmp_path / "bad.yaml"
    source.write_text("""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 0
percentageOfNodesToScore: 101
podInitialBackoffSeconds: 5
podMaxBackoffSeconds: 2
leaderElection:
  renewDeadline: 20s
  resourceLock: endpoints
profiles:
- schedulerName: a
- schedulerName: a
""")
    code, _, err, _ = execute([f"--config={source}"])
    assert code == 1
    assert err.splitlines() == [  # kube-scheduler's ValidateKubeSchedulerConfiguration: its order and words
        'Error: leaderElection.renewDeadline: Invalid value: "20s": must be less than leaseDuration',
        'Error: leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"',
        "Error: parallelism: Invalid value: 0: should be an integer value greater than zero",
        "Error: profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName",
        "Error: percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        "Error: podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds",
    ]


@pytest.mark.unit
def test_strict_decoding_names_file_line_and_field(tmp_path: Path) -> None:
    source = tmp_path / "strict.yaml"
    source.write_text("""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
foo: 1
leaderElection:
  leaderElect: true
  leaderElect: false
  leaseDuration: 15
""")
    code, _, err, _ = execute([f"--config={source}"])
    assert code == 1
    lines = err.splitlines()
    assert f'Error: {source}:3: unknown field "foo"' in lines
    assert f'Error: {source}:6: key "leaderElect" already set in map' in lines
    assert any(line.startswith(f"Error: {source}:7: leaderElection.leaseDuration: Invalid value: 15") for line in lines)
    code, _, err, _ = execute([f"--config={tmp_path / 'missing.yaml'}"])
    assert code == 1 and "no such file or directory" in err


@pytest.mark.unit
@pytest.mark.parametrize(("body", "problem"), [
    ("parallelism: " + "[" * 5000 + "]" * 5000, ":3: exceeded max depth of 100"),
    ("".join(f"x{i}: &a{i} " + "[" * 90 + (f"*a{i - 1}" if i else "1") + "]" * 90 + "\n" for i in range(40)),
     ":4: exceeded max depth of 100 once aliases are expanded"),
    ("leaderElection: &a\n  <<: *a", ":4: anchor 'a' value contains itself"),
    ("".join(f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}" if i else "v"] * 9) + "]\n" for i in range(9)),
     ":8: document contains excessive aliasing: more than 100000 values once aliases are expanded"),
], ids=["deep", "deep-through-aliases", "holds-itself", "billion-laughs"])
def test_deep_or_cyclic_config_is_one_line_naming_the_file(tmp_path: Path, body: str, problem: str) -> None:
    source = tmp_path / "in.yaml"
    source.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body + "\n")
    code, _, err, _ = execute([f"--config={source}", f"--write-config-to={tmp_path / 'out.yaml'}"])
    assert (code, err.splitlines()) == (1, [f"Error: {source}{problem}"])


@pytest.mark.unit
def test_no_profiles_is_required_and_names_unique() -> None:
    from componentbase_examples.scheduler.config import validate

    cfg = KubeSchedulerConfiguration(profiles=[])
    assert [str(e) for e in validate(cfg)] == ["profiles: Required value"]  # kube's field.Required(path, "")
    cfg = KubeSchedulerConfiguration(profiles=[KubeSchedulerProfile(scheduler_name="")])
    assert [str(e) for e in validate(cfg)] == ["profiles[0].schedulerName: Required value"]


#: What ``--help`` and ``--version`` must not import (issue 28): the runtime, whose imports made the scheduler's
#: --help 11x a bare interpreter. Plugins (beyond the args types the defaulted config holds), the scheduling
#: framework, providers' runtime, the server side of serving, informers, the client, the loopback server.
RUNTIME = ("kubernetes", "urllib3", "cryptography", "prometheus_client", "ssl", "componentbase.client",
           "componentbase.informers", "componentbase.controller", "componentbase.workqueue",
           "componentbase.leaderelection", "componentbase.app._run", "componentbase.serving._server",
           "componentbase.serving._start", "componentbase.testing.apiserver.loopback",
           "componentbase_examples.scheduler.framework", "componentbase_examples.scheduler.scheduler",
           "componentbase_examples.virtual_kubelet.app",
           "componentbase_examples.virtual_kubelet.providers.process.provider")
ARGS_TYPES = ("args", "podtopologyspreadargs", "resourcespec")


@pytest.mark.process
def test_help_and_version_of_every_console_script_import_none_of_the_runtime(tmp_path: Path) -> None:
    """Every ``componentbase-*`` console script's ``--help`` and ``--version``, then the scheduler's
    ``--write-config-to``, run one after another in one fresh interpreter, each checked on what is imported by
    then: modules only accumulate, so none there after a path means that path did not import it either. Module
    names, not time: benchmarks/startup.py measures the time."""
    probe = (
        "import contextlib, importlib.metadata, io, sys\n"
        "scripts = sorted((e for e in importlib.metadata.entry_points(group='console_scripts')\n"
        "                  if e.name.startswith('componentbase-')), key=lambda e: e.name)\n"
        f"paths = [(e, [a]) for e in scripts for a in ('--help', '--version')]\n"
        f"paths += [(e, ['--write-config-to={tmp_path}/config.yaml']) for e in scripts\n"
        "          if e.name == 'componentbase-scheduler']\n"
        "for script, args in paths:\n"
        "    sys.argv = [script.name, *args]\n"
        "    try:\n"
        "        with contextlib.redirect_stdout(io.StringIO()):\n"
        "            script.load()()\n"
        "    except SystemExit as e:\n"
        "        code = e.code\n"
        "    print('PATH', script.name, args[0].split('=')[0], 'CODE', code, 'LOADED', *sorted(sys.modules),\n"
        "          file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    paths = {tuple(line.split()[1:3]): line.split() for line in result.stderr.splitlines() if line.startswith("PATH ")}
    scripts = ["componentbase-apiserver", "componentbase-demo", "componentbase-hello", "componentbase-scheduler",
               "componentbase-virtual-kubelet", "componentbase-widgets"]
    assert sorted(paths) == sorted([*((s, a) for s in scripts for a in ("--help", "--version")),
                                    ("componentbase-scheduler", "--write-config-to")]), result.stderr
    for (script, args), words in paths.items():
        assert words[3:5] == ["CODE", "0"], (script, args, result.stderr)
        loaded = words[words.index("LOADED") + 1:]
        if args == "--write-config-to":  # validation loads the plugins and the config codec; not the client
            assert not [m for m in loaded if m.split(".")[0] in ("kubernetes", "urllib3")]
            continue
        runtime = [m for m in loaded if any(m == r or m.startswith(r + ".") for r in RUNTIME)]
        plugins = [m for m in loaded if m.startswith("componentbase_examples.scheduler.plugins.")
                   and m.rsplit(".", 1)[1] not in ARGS_TYPES]
        assert (runtime, plugins) == ([], []), f"{script} {args} imported the runtime"
        assert "cattrs" not in loaded and "ruamel" not in loaded  # no config file read: no config codec


@pytest.mark.unit
def test_run_without_a_cluster_says_so(tmp_path: Path) -> None:
    code, _, err, _ = execute(["--leader-elect=false", "--master=", "--kubeconfig=" + str(tmp_path / "none")])
    assert code == 1
    assert "Error: unable to read kubeconfig" in err or "Error: invalid configuration" in err


@pytest.mark.unit
@pytest.mark.parametrize(("text", "problem"), [
    (b"{\n", "yaml: line 2: expected the node content, but found '<stream end>'"),
    (b"[]\n", "not a kubeconfig (TypeError: "),  # what the official loader tripped over follows
    (b"apiVersion: v1\nclusters: 5\n", "not a kubeconfig (TypeError: "),
    (b"\x7fELF\xd0\x00", "not UTF-8 text (byte 4)"),
    (b'{"apiVersion": "v1", "kind": "Config", "current-context": "c", "users": [{"name": "u", "user": {}}],'
     b' "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}], "clusters": [{"name": "k",'
     b' "cluster": {"server": "https://127.0.0.1:1", "certificate-authority-data": "!!notbase64"}}]}',
     "a *-data field is not base64: "),
], ids=["not-yaml", "a-list", "clusters-a-number", "binary", "ca-data-not-base64"])
def test_a_kubeconfig_that_is_not_one_is_a_one_line_error_naming_the_file(tmp_path: Path, text: bytes,
                                                                          problem: str) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_bytes(text)
    code, _, err, _ = execute(["--leader-elect=false", f"--kubeconfig={kubeconfig}"])
    assert code == 1
    assert err.splitlines()[-1].startswith(f'Error: error loading config file "{kubeconfig}": {problem}')
    assert "Traceback" not in err


@pytest.mark.unit
def test_pod_topology_spread_constraints_of_the_wrong_types_are_named(tmp_path: Path) -> None:
    source = tmp_path / "in.yaml"
    source.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
                      "  - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints:\n"
                      "      - {maxSkew: 1, topologyKey: [zone], whenUnsatisfiable: {a: 1}}\n"
                      "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,\n"
                      "         matchLabelKeys: [1]}\n")
    code, _, err, _ = execute([f"--config={source}", f"--write-config-to={tmp_path / 'out.yaml'}"])
    path = "Error: profiles[0].pluginConfig[0].args.defaultConstraints"
    assert code == 1
    assert [line.split(": Invalid value:")[0] for line in err.splitlines() if line.startswith("Error:")] == [
        f"{path}[0].topologyKey", f"{path}[0].whenUnsatisfiable", f"{path}[1].matchLabelKeys"]
    assert "Traceback" not in err


@pytest.mark.unit
def test_a_control_character_in_a_key_is_escaped_not_a_line_break(tmp_path: Path) -> None:
    """Found by the CLI fuzz test: U+001E in a JSON key split the one-line error in two (Python counts it as a
    line break); it is written as Go's %q writes it."""
    source = tmp_path / "odd.json"
    source.write_text('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", '
                      '"clientConnection": {"\\u001e00": null}}')
    code, _, err, _ = execute([f"--config={source}"])
    assert code == 1
    assert err.splitlines() == [f'Error: {source}:1: unknown field "clientConnection.\\x1e00"']
