"""``--dry-run`` end to end, as a user runs it: a mixed workload on a small cluster, placements checked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from componentbase_examples.scheduler.podinfo import PodInfo, resource_amount

from .builders import node, pod, taint

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]


def dry_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "componentbase_examples.scheduler", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def write(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text("\n---\n".join(json.dumps(d) for d in docs))  # JSON is YAML
    return path


def cluster_nodes() -> list[dict[str, Any]]:
    return [
        node("cp", labels={"node-role.kubernetes.io/control-plane": ""},
             taints=[taint("node-role.kubernetes.io/control-plane")]),
        node("ssd-1", cpu="4", memory="8Gi", labels={"disk": "ssd", "zone": "a"}),
        node("ssd-2", cpu="4", memory="8Gi", labels={"disk": "ssd", "zone": "b"}),
        node("hdd-1", cpu="4", memory="8Gi", labels={"disk": "hdd", "zone": "a"}),
        node("gpu-1", cpu="8", memory="32Gi", labels={"zone": "b"}, taints=[taint("gpu", "NoSchedule", "true")],
             **{"example.com/gpu": "2"}),
        node("cordoned", unschedulable=True),
    ]


def workload() -> list[dict[str, Any]]:
    pods = [pod(f"web-{i}", cpu="500m", memory="512Mi") for i in range(8)]
    pods += [pod(f"db-{i}", cpu="1", memory="1Gi", nodeSelector={"disk": "ssd"}) for i in range(4)]
    pods += [pod(f"train-{i}", cpu="2", memory="4Gi", tolerations=[{"key": "gpu", "operator": "Exists"}])
             for i in range(3)]
    for p in pods[-3:]:
        p["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    zone_b = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}}}
    pods += [pod("zonal", cpu="100m", affinity=zone_b)]
    pods += [pod("agent", ports=[{"containerPort": 9100, "hostPort": 9100}], cpu="50m") for _ in range(1)]
    pods += [pod("critical", cpu="500m", priority=1000)]
    pods += [pod("pinned", cpu="100m", nodeName="hdd-1")]
    pods += [pod("limits-only", cpu=None, memory=None)]
    pods[-1]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "3", "memory": "1Gi"}}
    return pods


def placements(stdout: str) -> dict[str, str]:
    return {line.split(" -> ")[0]: line.split(" -> ")[1] for line in stdout.splitlines() if " -> " in line}


def test_mixed_workload_lands_only_on_feasible_nodes_and_never_overcommits_and_again_the_same(
        tmp_path: Path) -> None:
    """The same nodes and pods in another process, as one file rather than a folder with a NodeList, give the
    same placements (and table): a second run of the one the rest of the test checks, not a third process."""
    nodes, pods = cluster_nodes(), workload()
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    write(manifests / "nodes.yaml", [{"apiVersion": "v1", "kind": "NodeList", "items": nodes}])
    write(manifests / "pods.yaml", pods)
    result = dry_run(f"--dry-run={manifests}")
    assert result.returncode == 0, result.stderr
    again = dry_run(f"--dry-run={write(tmp_path / 'all.yaml', [*cluster_nodes(), *workload()])}")
    assert again.returncode == 0 and again.stdout == result.stdout
    lines = result.stdout.splitlines()
    lines = lines[:next(i for i, line in enumerate(lines) if line.startswith("Scheduled ")) + 1]  # the table after
    placed = placements(result.stdout)
    by_name = {n["metadata"]["name"]: n for n in nodes}
    assert lines[0] == "default/pinned: already bound to hdd-1"
    assert lines[1] == "default/critical -> " + placed["default/critical"]  # highest priority goes first
    unschedulable = {line.split(": ")[0]: line.split(": ", 1)[1] for line in lines[1:-1] if " -> " not in line}
    assert set(placed) | set(unschedulable) == {f"default/{p['metadata']['name']}" for p in pods} - {"default/pinned"}
    assert all(m.startswith("0/6 nodes are available: ") and m.endswith(".") for m in unschedulable.values())
    assert "cp" not in placed.values() and "cordoned" not in placed.values()  # taint, cordon honoured
    assert all(placed[f"default/db-{i}"].startswith("ssd-") for i in range(4))  # node selector
    assert placed["default/zonal"] == "ssd-2"  # zone b by affinity; gpu-1 is zone b but tainted
    assert [placed.get(f"default/train-{i}") for i in range(3)] == ["gpu-1", "gpu-1", None]  # two GPUs only
    assert "4 Insufficient example.com/gpu" in unschedulable["default/train-2"]
    assert "untolerated taint {gpu: true}" not in unschedulable["default/train-2"]  # it tolerates that one
    assert all(host != "gpu-1" for name, host in placed.items() if not name.startswith("default/train"))
    # never overcommitted: sum what each node got, the pinned pod included
    used: dict[str, dict[str, int]] = {}
    for p in pods:
        name = f"default/{p['metadata']['name']}"
        host = p["spec"].get("nodeName") or placed.get(name)
        if host is None:
            continue
        spec = dict(p["spec"])
        if name == "default/limits-only":
            spec = {"containers": [{"resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}]}
        info = PodInfo({"metadata": p["metadata"], "spec": spec})
        for resource, amount in info.requests.items():
            used.setdefault(host, {}).setdefault(resource, 0)
            used[host][resource] += amount
    for host, amounts in used.items():
        alloc = by_name[host]["status"]["allocatable"]
        for resource, amount in amounts.items():
            assert amount <= resource_amount(resource, alloc.get(resource, "0")), (host, resource, amounts)
    assert lines[-1] == (f"Scheduled {len(placed)} of {len(pods) - 1} pods on 6 nodes; {len(unschedulable)} "
                         "unschedulable, 1 already bound.")


def test_the_configured_profiles_are_used(tmp_path: Path) -> None:
    path = write(tmp_path / "all.yaml", [node("a", cpu="4"), node("b", cpu="4"),
                                         *[pod(f"p{i}", cpu="1") for i in range(4)],
                                         pod("other", cpu="1", schedulerName="nobody")])
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
                   "- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
                   "        type: MostAllocated\n")
    result = dry_run(f"--config={cfg}", f"--dry-run={path}")
    assert result.returncode == 0, result.stderr
    placed = placements(result.stdout)
    assert len(set(placed.values())) == 1  # bin packing: all four on one node
    assert 'default/other: skipped: no profile has schedulerName "nobody"' in result.stdout


def test_bad_input_is_one_line_per_problem_naming_file_and_document(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("kind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: lots}}\n---\n"
                    "kind: Pod\nmetadata: {}\nspec: {}\n---\n- not an object\n---\n"
                    "kind: Deployment\nmetadata: {name: d}\n---\n"
                    "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - resources: {requests: {memory: 1Gb}}\n")
    result = dry_run(f"--dry-run={path}")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"Warning: {path}: document 4: kind Deployment is not simulated; skipped",
        f'Error: {path}: document 1 (Node n): status.allocatable.cpu: "lots": quantities must match the regular '
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        f"Error: {path}: document 2: Pod has no metadata.name",
        f"Error: {path}: document 3: not a Kubernetes object (a mapping with apiVersion and kind)",
        f"Error: {path}: document 5 (Pod default/p): spec.containers[0].resources.requests.memory: \"1Gb\": "
        "unable to parse quantity's suffix",
    ]
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: Pod\nmetadata: {name: [}\n")
    result = dry_run(f"--dry-run={broken}")
    assert result.returncode == 1 and result.stderr.startswith(f"Error: {broken}:2: invalid YAML")
    assert len(result.stderr.splitlines()) == 1
    missing = dry_run(f"--dry-run={tmp_path / 'nope'}")
    assert missing.returncode == 1
    assert missing.stderr == f'Error: --dry-run: Invalid value: "{tmp_path / "nope"}": no such file or directory\n'
