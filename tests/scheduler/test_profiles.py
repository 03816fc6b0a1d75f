"""Profiles: which plugins run where, config validation on the command line, plugins from programs and packages."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import attrs
import pytest

import componentbase
from componentbase import field
from componentbase.serving import configz
from componentbase_examples.scheduler import profiles
from componentbase_examples.scheduler.__main__ import new_command
from componentbase_examples.scheduler.framework import Code, Plugin, Status
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

from .builders import Cluster, load_config, node, pod, registry

ROOT = Path(__file__).resolve().parents[2]
HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def enabled(text: str = "", *plugins: object) -> dict[str, list[tuple[str, int]]]:
    cfg = load_config(text)
    resolved, errs = profiles.resolve(cfg.profiles[0], registry(*plugins), field.Path("profiles").index(0))
    assert not errs, errs
    return resolved.enabled


def names(points: dict[str, list[tuple[str, int]]], point: str) -> list[str]:
    return [n for n, _ in points[point]]


@pytest.mark.unit
def test_default_profile_is_kube_schedulers_for_the_plugins_here() -> None:
    points = enabled()
    assert names(points, "queueSort") == ["PrioritySort"]
    volumes = ["VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"]
    assert names(points, "preFilter") == ["NodeName", "NodeAffinity", "NodePorts", *volumes, "PodTopologySpread",
                                          "InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"]
    assert names(points, "filter") == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                                       "NodePorts", "NodeResourcesFit", *volumes, "PodTopologySpread",
                                       "InterPodAffinity", "NodeDeclaredFeatures"]
    assert names(points, "reserve") == ["VolumeBinding"] and names(points, "preBind") == ["VolumeBinding"]
    assert points["score"] == [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
                               ("VolumeBinding", 1), ("PodTopologySpread", 2), ("InterPodAffinity", 2),
                               ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1)]
    assert names(points, "bind") == ["DefaultBinder"]


@pytest.mark.unit
def test_disable_one_or_all_and_reconfigure_weights() -> None:
    points = enabled("profiles:\n- plugins:\n    filter:\n      disabled: [{name: NodePorts}]\n"
                     "    score:\n      disabled: [{name: '*'}]\n      enabled: [{name: NodeAffinity, weight: 7}]\n")
    assert "NodePorts" not in names(points, "filter") and "NodePorts" in names(points, "preFilter")
    assert points["score"] == [("NodeAffinity", 7)]
    points = enabled("profiles:\n- plugins:\n    score:\n      enabled: [{name: NodeResourcesFit, weight: 5}]\n")
    assert points["score"][0] == ("NodeResourcesFit", 5)  # an override goes first, with its weight
    points = enabled("profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: NodeResourcesFit}]\n")
    assert "NodeResourcesFit" not in names(points, "filter") + names(points, "score")


class OnlyLabeled(Plugin):
    """A third party's filter: nodes must carry the label its args name."""

    name = "OnlyLabeled"

    @attrs.define(kw_only=True)
    class Args:
        label: str = "allowed"

        def validate(self, path: field.Path) -> list[Exception]:
            return [] if self.label else [field.required(path.child("label"))]

    @componentbase.hookimpl
    def scheduler_filter(self, nodes: list[NodeInfo], rejected: dict[str, Status]) -> list[NodeInfo]:
        label = self.args.label
        for n in nodes:
            if label not in n.labels:
                rejected[n.name] = Status(Code.UNSCHEDULABLE, f"node(s) lacked label {label}")
        return [n for n in nodes if label in n.labels]


@pytest.mark.unit
def test_a_program_passes_its_own_plugin_and_enables_it_by_multi_point() -> None:
    cfg = load_config("profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: OnlyLabeled}]\n"
                      "  pluginConfig:\n  - name: OnlyLabeled\n    args: {label: gpu}\n")
    cluster = Cluster([node("plain"), node("gpu", labels={"gpu": "1"})], cfg, plugins=(OnlyLabeled,))
    assert names(enabled("profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: OnlyLabeled}]\n",
                         OnlyLabeled), "filter")[-1] == "OnlyLabeled"
    assert cluster.schedule(pod("p")) == "gpu"
    assert cluster.fit_message(pod("q", nodeName="plain")) == \
        "0/2 nodes are available: 1 node(s) didn't match the requested node name, 1 node(s) lacked label gpu."


def run_command(args: list[str], plugins: tuple[object, ...] = ()) -> tuple[int, str]:
    cmd = new_command(plugins)
    cmd.configz_registry = configz.Registry()
    err = io.StringIO()
    code = cmd.execute(args, stdout=io.StringIO(), stderr=err)
    return code, err.getvalue()


@pytest.mark.unit
def test_config_validation_names_each_bad_plugin_and_arg(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(HEADER + textwrap.dedent("""\
        profiles:
        - plugins:
            score:
              enabled: [{name: NodeResourcesFit}, {name: Foo}, {name: NodeName}]
            queueSort:
              enabled: [{name: OnlyLabeled}]
          pluginConfig:
          - name: NodeResourcesFit
            args:
              scoringStrategy: {type: Bogus, resources: [{name: cpu, weight: 200}]}
          - name: NodeAffinity
            args: {bogus: 1}
          - name: Nope
          - name: OnlyLabeled
            args: {label: ""}
        """))
    code, err = run_command([f"--config={cfg}", f"--write-config-to={tmp_path / 'out.yaml'}"], (OnlyLabeled,))
    assert code == 1 and not (tmp_path / "out.yaml").exists()
    assert err.splitlines() == [
        'Error: profiles[0].plugins.queueSort.enabled[0].name: Invalid value: "OnlyLabeled": '
        'plugin "OnlyLabeled" does not extend QueueSortPlugin plugin',
        'Error: profiles[0].plugins.score.enabled[1].name: Invalid value: "Foo": ScorePlugin "Foo" does not exist',
        'Error: profiles[0].plugins.score.enabled[2].name: Invalid value: "NodeName": '
        'plugin "NodeName" does not extend ScorePlugin plugin',
        'Error: profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Bogus": '
        'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        'Error: profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: 200: '
        'resource weight of cpu not in valid range (0, 100]',
        'Error: profiles[0].pluginConfig[1].args: unknown field "bogus"',
        'Error: profiles[0].pluginConfig[2].name: Invalid value: "Nope": plugin "Nope" does not exist',
        'Error: profiles[0].pluginConfig[3].args.label: Required value',
    ]


@pytest.mark.unit
def test_the_same_config_is_fine_once_the_plugin_is_registered_and_args_are_right(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(HEADER + "profiles:\n- plugins:\n    filter:\n      enabled: [{name: OnlyLabeled}]\n"
                   "  pluginConfig:\n  - name: OnlyLabeled\n    args: {apiVersion: kubescheduler.config.k8s.io/v1, "
                   "kind: OnlyLabeledArgs, label: x}\n")
    code, err = run_command([f"--config={cfg}", f"--write-config-to={tmp_path / 'out.yaml'}"], (OnlyLabeled,))
    assert code == 0 and "Error" not in err
    code, err = run_command([f"--config={cfg}", f"--write-config-to={tmp_path / 'out.yaml'}"])
    assert code == 1 and 'FilterPlugin "OnlyLabeled" does not exist' in err


@pytest.mark.process
def test_unknown_plugin_via_the_real_command_line(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(HEADER + "profiles:\n- schedulerName: first\n  plugins:\n    score:\n"
                   "      enabled: [{name: NodeAffinity}, {name: Foo}]\n"
                   "- schedulerName: second\n  plugins:\n    bind:\n      disabled: [{name: '*'}]\n")
    result = subprocess.run([sys.executable, "-m", "componentbase_examples.scheduler", f"--config={cfg}",
                             f"--write-config-to={tmp_path / 'out.yaml'}"], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        'Error: profiles[0].plugins.score.enabled[1].name: Invalid value: "Foo": ScorePlugin "Foo" does not exist',
        "Error: profiles[1].plugins.bind.enabled: Required value: at least one bind plugin is needed",
    ]
    assert "Traceback" not in result.stderr


ENTRY_POINT_PLUGIN = '''
import componentbase
from componentbase_examples.scheduler.framework import Plugin


class PreferBig(Plugin):
    """Scores nodes by their allocatable CPU."""

    name = "PreferBig"

    @componentbase.hookimpl
    def scheduler_score(self, nodes):
        return [n.alloc_cpu for n in nodes]

    @componentbase.hookimpl
    def scheduler_normalize_score(self, scores):
        top = max(scores) or 1
        scores[:] = [100 * s // top for s in scores]
'''


@pytest.mark.process
def test_a_package_adds_a_plugin_through_the_entry_point(tmp_path: Path) -> None:
    (tmp_path / "preferbig.py").write_text(ENTRY_POINT_PLUGIN)
    dist = tmp_path / "preferbig-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: preferbig\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[componentbase.scheduler.plugins]\nPreferBig = preferbig:PreferBig\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(HEADER + "profiles:\n- plugins:\n    score:\n      disabled: [{name: '*'}]\n"
                   "      enabled: [{name: PreferBig, weight: 5}]\n")
    manifests = tmp_path / "m.yaml"
    manifests.write_text("\n---\n".join(
        f"{{kind: Node, apiVersion: v1, metadata: {{name: {n}}}, status: {{allocatable: {{cpu: '{c}', "
        f"memory: 64Gi, pods: '110'}}}}}}" for n, c in (("small", 2), ("big", 32), ("mid", 8))) +
        "\n---\n" + "\n---\n".join(f"{{kind: Pod, apiVersion: v1, metadata: {{name: p{i}}}, spec: {{containers: "
                                   f"[{{name: c, image: x}}]}}}}" for i in range(3)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    result = subprocess.run([sys.executable, "-m", "componentbase_examples.scheduler", f"--config={cfg}",
                             f"--dry-run={manifests}"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:3] == ["default/p0 -> big", "default/p1 -> big", "default/p2 -> big"]
    without = subprocess.run([sys.executable, "-m", "componentbase_examples.scheduler", f"--config={cfg}",
                              f"--dry-run={manifests}"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert without.returncode == 1 and 'ScorePlugin "PreferBig" does not exist' in without.stderr


@pytest.mark.unit
def test_registry_refuses_two_plugins_of_one_name(tmp_path: Path) -> None:
    class Impostor(Plugin):
        name = "NodeName"

        @componentbase.hookimpl
        def scheduler_filter(self, nodes: list[NodeInfo]) -> list[NodeInfo]:
            return nodes

    code, err = run_command([f"--write-config-to={tmp_path / 'config.yaml'}"], (Impostor,))
    assert code == 1 and err == "Error: a plugin named NodeName already exists\n"


@pytest.mark.unit
def test_instances_are_plugins_too() -> None:
    class Counter:
        name = "Counter"
        seen: list[str] = []  # noqa: RUF012

        @componentbase.hookimpl
        def scheduler_post_bind(self, pod: PodInfo, node_name: str) -> None:
            self.seen.append(f"{pod.name}@{node_name}")

    counter = Counter()
    cfg = load_config("profiles:\n- plugins:\n    postBind:\n      enabled: [{name: Counter}]\n")
    cluster = Cluster([node("n")], cfg, plugins=(counter,))
    info = PodInfo(pod("p"))
    host = cluster.schedule(pod("p"))
    bound: list[Any] = []
    cluster.framework.plugins["DefaultBinder"].handle.binder = lambda p, n: bound.append((p.name, n))
    assert cluster.framework.run_bind({}, info, host) is None
    assert bound == [("p", "n")] and counter.seen == ["p@n"]


@pytest.mark.unit
@pytest.mark.parametrize("extra", ["", "  percentageOfNodesToScore: 20\n"])
def test_profiles_must_share_a_queue_sort(extra: str) -> None:
    cfg = load_config("profiles:\n- schedulerName: a\n" + extra + "- schedulerName: b\n  plugins:\n"
                      "    queueSort:\n      disabled: [{name: '*'}]\n")
    errs = profiles.validate(cfg, registry())
    assert [str(e) for e in errs] == ['profiles[1].plugins.queueSort: Invalid value: []: '
                                      'queueSort must be the same for all profiles']
