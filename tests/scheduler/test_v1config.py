"""KubeSchedulerConfiguration v1 defaulting and validation, case by case from kube-scheduler's
pkg/scheduler/apis/config/v1/defaults_test.go and validation/validation_test.go."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from typing import Any

import pytest

import componentbase
from componentbase.serving import configz
from componentbase_examples.scheduler import config, profiles
from componentbase_examples.scheduler.__main__ import new_command

from .builders import load_config

pytestmark = pytest.mark.unit

V1 = "kubescheduler.config.k8s.io/v1"
HEADER = f"apiVersion: {V1}\nkind: KubeSchedulerConfiguration\n"

#: kube-scheduler's default multiPoint set (v1 getDefaultPlugins), in its order, with its weights: a plugin
#: upstream names no weight for has none in the defaulted v1 config (defaults_test.go), not 0.
KUBE_MULTI_POINT: list[tuple[str, int | None]] = [
    ("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None), ("NodeName", None),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", None), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None), ("NodeVolumeLimits", None), ("VolumeBinding", None), ("VolumeZone", None),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 2), ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", None),
    ("NodeDeclaredFeatures", None),
]
CPU_MEMORY = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
#: kube's defaulted pluginConfig (defaults_test.go's pluginConfigs), by plugin, apiVersion and kind left out.
KUBE_PLUGIN_CONFIG: dict[str, dict[str, Any]] = {
    "DefaultPreemption": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
    "DynamicResources": {"filterTimeout": "10s", "bindingTimeout": "10m0s"},
    "InterPodAffinity": {"hardPodAffinityWeight": 1},
    "NodeAffinity": {},
    "NodeResourcesBalancedAllocation": {"resources": CPU_MEMORY},
    "NodeResourcesFit": {"scoringStrategy": {"type": "LeastAllocated", "resources": CPU_MEMORY}},
    "PodTopologySpread": {"defaultingType": "System"},
    # StorageCapacityScoring is beta and on in 1.37: SetDefaults_VolumeBindingArgs adds its shape
    "VolumeBinding": {"bindTimeoutSeconds": 600, "shape": [{"utilization": 0, "score": 10},
                                                           {"utilization": 100, "score": 0}]},
}
HERE = {name for name, _ in profiles.DEFAULT_MULTI_POINT}


def test_the_default_set_is_kube_scheduler_1_37s_whole() -> None:
    """Every plugin of 1.37's default set is here (DynamicResources and NodeDeclaredFeatures included), in its
    order and with its weight."""
    assert list(profiles.DEFAULT_MULTI_POINT) == KUBE_MULTI_POINT


def _semantic(value: Any) -> Any:
    """What Go's omitempty leaves out (null, false, empty lists and maps) dropped, to compare with kube's."""
    if isinstance(value, dict):
        kept = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, False, [], {}, "")}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def _written(tmp_path: Path, text: str | None = None) -> dict[str, Any]:
    args = [f"--write-config-to={tmp_path / 'out.yaml'}"]
    if text is not None:
        (tmp_path / "in.yaml").write_text(HEADER + text)
        args.append(f"--config={tmp_path / 'in.yaml'}")
    cmd = new_command()
    cmd.configz_registry = configz.Registry()
    err = io.StringIO()
    assert cmd.execute(args, stdout=io.StringIO(), stderr=err) == 0, err.getvalue()
    return componentbase.componentconfig.decode_as((tmp_path / "out.yaml").read_text(), dict)  # type: ignore[no-any-return]


def _errors(text: str) -> list[str]:
    """The command's error lines for a config file, the file's name left out."""
    cmd = new_command()
    cmd.configz_registry = configz.Registry()
    err = io.StringIO()
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "c.yaml"
        source.write_text(HEADER + text)
        code = cmd.execute([f"--config={source}"], stdout=io.StringIO(), stderr=err)
    assert code == 1
    return [line.removeprefix("Error: ").replace(f"{source}:", "") for line in err.getvalue().splitlines()
            if line.startswith("Error: ")]


def test_written_defaults_are_kube_schedulers(tmp_path: Path) -> None:
    """--write-config-to of the defaults equals kube-scheduler's, for the plugins this scheduler has."""
    written = _written(tmp_path)
    top = {k: v for k, v in written.items() if k != "profiles"}
    assert _semantic(top) == {
        "apiVersion": V1, "kind": "KubeSchedulerConfiguration", "parallelism": 16,
        "enableProfiling": True, "enableContentionProfiling": True,
        "leaderElection": {"leaderElect": True, "leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "2s",
                           "resourceLock": "leases", "resourceName": "kube-scheduler",
                           "resourceNamespace": "kube-system"},
        "clientConnection": {"qps": 50.0, "burst": 100, "contentType": "application/vnd.kubernetes.protobuf"},
        "podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 10}  # percentageOfNodesToScore: 0
    assert written["percentageOfNodesToScore"] == 0
    (profile,) = written["profiles"]
    assert profile["schedulerName"] == "default-scheduler"
    # A plugin kube names no weight for has no weight key at all (v1's omitempty), not "weight: null".
    assert [(p["name"], p.get("weight", "absent")) for p in profile["plugins"]["multiPoint"]["enabled"]] == \
        [(n, "absent" if w is None else w) for n, w in KUBE_MULTI_POINT if n in HERE]
    assert all(not _semantic(s) for point, s in profile["plugins"].items() if point != "multiPoint")
    expected = [{"name": n, "args": {"apiVersion": V1, "kind": f"{n}Args", **args}}
                for n, args in KUBE_PLUGIN_CONFIG.items() if n in HERE]
    assert [_semantic(pc) for pc in profile["pluginConfig"]] == [_semantic(pc) for pc in expected]
    (inter_pod,) = [pc for pc in profile["pluginConfig"] if pc["name"] == "InterPodAffinity"]
    assert inter_pod["args"]["ignorePreferredTermsOfExistingPods"] is False


def test_two_profiles_keep_their_own_plugins_and_args() -> None:
    """defaults_test's "two profiles": unknown args kept first, the bind point's own plugins and disabled kept."""
    cfg = load_config("profiles:\n- pluginConfig: [{name: FooPlugin}]\n"
                      "- schedulerName: custom-scheduler\n  plugins:\n    bind:\n      enabled: [{name: BarPlugin}]\n"
                      "      disabled: [{name: DefaultBinder}]\n")
    first, second = cfg.profiles
    assert first.scheduler_name == "" and second.scheduler_name == "custom-scheduler"  # two: no default name
    assert (first.plugin_config[0].name, first.plugin_config[0].args) == ("FooPlugin", {})
    assert [pc.name for pc in first.plugin_config][1:] == [n for n in KUBE_PLUGIN_CONFIG if n in HERE]
    assert second.plugins is not None
    assert [p.name for p in second.plugins.multi_point.enabled] == [n for n, _ in KUBE_MULTI_POINT if n in HERE]
    assert [(p.name, p.weight) for p in second.plugins.bind.enabled] == [("BarPlugin", None)]
    assert [p.name for p in second.plugins.bind.disabled] == ["DefaultBinder"]


def test_null_and_zero_values_are_defaulted_as_kube_does() -> None:
    cfg = load_config("parallelism: null\npercentageOfNodesToScore: null\npodInitialBackoffSeconds: null\n"
                      "podMaxBackoffSeconds: null\nenableProfiling: null\nprofiles: null\nextenders: null\n"
                      "clientConnection: {qps: 0, burst: 0, contentType: ''}\n")
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (16, 0)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1, 10)
    assert (cfg.enable_profiling, cfg.enable_contention_profiling) == (True, True)
    cc = cfg.client_connection
    assert (cc.qps, cc.burst, cc.content_type) == (50.0, 100, "application/vnd.kubernetes.protobuf")
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler"] and cfg.extenders == []
    assert load_config("clientConnection: {contentType: application/json}\n").client_connection.content_type == \
        "application/json"


def test_contention_profiling_follows_profiling_unless_given() -> None:
    cfg = load_config("enableProfiling: false\n")
    assert (cfg.enable_profiling, cfg.enable_contention_profiling) == (False, False)
    cfg = load_config("enableProfiling: false\nenableContentionProfiling: true\n")
    assert cfg.enable_contention_profiling is True


def _args(cfg: config.KubeSchedulerConfiguration, name: str) -> dict[str, Any]:
    (pc,) = [pc for pc in cfg.profiles[0].plugin_config if pc.name == name]
    return pc.args


def test_plugin_args_are_defaulted_as_kube_does() -> None:
    """A resource weight of 0 (or none) is 1, no resources are cpu and memory, null means unset."""
    cfg = load_config("""profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 0}, {name: example.com/gpu}, {name: memory, weight: 5}]
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: cpu, weight: 0}, {name: memory}]}
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: null}
  - name: PodTopologySpread
    args: {defaultingType: ""}
""")
    fit = _args(cfg, "NodeResourcesFit")
    assert fit["kind"] == "NodeResourcesFitArgs" and fit["apiVersion"] == V1
    assert fit["scoringStrategy"]["type"] == "MostAllocated"
    assert fit["scoringStrategy"]["resources"] == [
        {"name": "cpu", "weight": 1}, {"name": "example.com/gpu", "weight": 1}, {"name": "memory", "weight": 5}]
    assert _args(cfg, "NodeResourcesBalancedAllocation")["resources"] == CPU_MEMORY
    assert _args(cfg, "InterPodAffinity")["hardPodAffinityWeight"] == 1
    assert _args(cfg, "PodTopologySpread")["defaultingType"] == "System"
    cfg = load_config("profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: null}\n"
                      "  - name: NodeResourcesBalancedAllocation\n    args: {resources: []}\n")
    assert _semantic(_args(cfg, "NodeResourcesFit")["scoringStrategy"]) == {"type": "LeastAllocated",
                                                                           "resources": CPU_MEMORY}
    assert _args(cfg, "NodeResourcesBalancedAllocation")["resources"] == CPU_MEMORY


def test_defaulting_is_idempotent(tmp_path: Path) -> None:
    """A written config loads back to the same config: defaulting twice changes nothing."""
    text = ("profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: NodeResourcesFit, weight: 5}]\n"
            "      disabled: [{name: NodePorts}]\n    score:\n      disabled: [{name: '*'}]\n")
    cfg = load_config(text)
    again = config.SCHEME.decode(config.SCHEME.encode(cfg))
    assert again == cfg
    assert cfg.profiles[0].plugins is not None
    multi = cfg.profiles[0].plugins.multi_point
    assert ("NodeResourcesFit", 5) in [(p.name, p.weight) for p in multi.enabled]
    assert "NodePorts" not in [p.name for p in multi.enabled] and [p.name for p in multi.disabled] == ["NodePorts"]


def test_int32_and_int64_overflow_is_refused_when_decoded() -> None:
    errors = _errors("parallelism: 2147483648\npodInitialBackoffSeconds: 9223372036854775808\n"
                     "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: -2147483649\n"
                     "  plugins:\n    score:\n      enabled: [{name: NodeAffinity, weight: 4294967296}]\n")
    assert errors == [
        "3: parallelism: Invalid value: 2147483648: cannot unmarshal number into Go value of type int32",
        "4: podInitialBackoffSeconds: Invalid value: 9223372036854775808: "
        "cannot unmarshal number into Go value of type int64",
        "7: profiles[0].percentageOfNodesToScore: Invalid value: -2147483649: "
        "cannot unmarshal number into Go value of type int32",
        "10: profiles[0].plugins.score.enabled[0].weight: Invalid value: 4294967296: "
        "cannot unmarshal number into Go value of type int32",
    ]
    cfg = load_config("parallelism: 2147483647\n")
    assert cfg.parallelism == 2**31 - 1


def test_field_paths_are_kubes_for_plugin_config_and_scoring_shape() -> None:
    errors = _errors("""profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      ignoredResources: ["bad name"]
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio:
          shape: [{utilization: 50, score: 11}, {utilization: 10, score: 5}]
  - name: NodeResourcesFit
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: cpu, weight: 2}, {name: cpu}]}
""")
    prefix = "profiles[0].pluginConfig"
    assert errors == [
        f'{prefix}[1]: Duplicate value: "NodeResourcesFit"',  # the config's own checks, then the plugins'
        f'{prefix}[0].args.ignoredResources[0]: Invalid value: "bad name": name part must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
        "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        f"{prefix}[0].args.scoringStrategy.shape[1].utilization: Invalid value: 10: "
        "values must be sorted in increasing order",
        f"{prefix}[0].args.scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
        f'{prefix}[2].args.resources[0].weight: Invalid value: 2: must be 1',
        f'{prefix}[2].args.resources[1].name: Duplicate value: "cpu"',
    ]


def test_extenders_and_delay_cache_until_active_are_accepted() -> None:
    cfg = load_config("""delayCacheUntilActive: true
extenders:
- urlPrefix: http://127.0.0.1:8081/extender
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 2
  bindVerb: bind
  enableHTTPS: true
  tlsConfig: {insecure: true, serverName: ext}
  httpTimeout: 3s
  nodeCacheCapable: true
  managedResources: [{name: example.com/foo, ignoredByScheduler: true}]
  ignorable: true
""")
    assert cfg.delay_cache_until_active is True
    (ext,) = cfg.extenders
    assert (ext.url_prefix, ext.filter_verb, ext.prioritize_verb, ext.weight, ext.bind_verb) == \
        ("http://127.0.0.1:8081/extender", "filter", "prioritize", 2, "bind")
    assert ext.enable_https and ext.tls_config is not None and ext.tls_config.server_name == "ext"
    assert float(ext.http_timeout) == 3.0 and ext.node_cache_capable and ext.ignorable
    assert [(r.name, r.ignored_by_scheduler) for r in ext.managed_resources] == [("example.com/foo", True)]
    assert config.validate(cfg) == []
    assert config.SCHEME.decode(config.SCHEME.encode(cfg)) == cfg


@pytest.mark.parametrize(("extenders", "expected"), [
    ("[{urlPrefix: 'http://127.0.0.1:8081/extender', prioritizeVerb: prioritize, weight: -2}]",
     "extenders[0].weight: Invalid value: -2: must have a positive weight applied to it"),
    ("[{urlPrefix: 'http://127.0.0.1:8081/extender', prioritizeVerb: prioritize}]",
     "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"),
    ("[{urlPrefix: a, bindVerb: bind}, {urlPrefix: b, bindVerb: bind}]",
     'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind'),
    ("[{urlPrefix: a, managedResources: [{name: foo.com/bar}]}, "
     "{urlPrefix: b, bindVerb: bind, managedResources: [{name: foo.com/bar}]}]",
     'extenders[1].managedResources[0].name: Invalid value: "foo.com/bar": duplicate extender managed resource name'),
    ("[{urlPrefix: a, managedResources: [{name: kubernetes.io/foo}]}]",
     'extenders[0].managedResources[0].name: Invalid value: "kubernetes.io/foo": '
     "is an invalid extended resource name"),
    ("[{urlPrefix: a, managedResources: [{name: cpu}]}]",
     'extenders[0].managedResources[0].name: Invalid value: "cpu": is an invalid extended resource name'),
])
def test_extender_validation_is_kubes(extenders: str, expected: str) -> None:
    assert _errors(f"extenders: {extenders}\n") == [expected]


def test_plugin_args_overflow_is_refused_with_the_args_path() -> None:
    errors = _errors("""profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 2147483648}
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources: [{name: cpu, weight: 9223372036854775808}]
        requestedToCapacityRatio: {shape: [{utilization: 4294967296, score: 1}]}
""")
    assert errors == [
        "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 2147483648: "
        "cannot unmarshal number into Go value of type int32",
        "profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight: Invalid value: 9223372036854775808: "
        "cannot unmarshal number into Go value of type int64",
        "profiles[0].pluginConfig[1].args.scoringStrategy.requestedToCapacityRatio.shape[0].utilization: "
        "Invalid value: 4294967296: cannot unmarshal number into Go value of type int32",
    ]
