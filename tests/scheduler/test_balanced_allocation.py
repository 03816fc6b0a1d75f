"""NodeResourcesBalancedAllocation against kube-scheduler 1.37's own table (balanced_allocation_test.go's
TestNodeResourcesBalancedAllocation after kubernetes#135573, which scores the change in a node's balance the
pod makes): the expected scores are upstream's, not ours. The two DRA extended-resource cases are left out
(no DRA here)."""

from __future__ import annotations

from typing import Any

import pytest

import componentbase
from componentbase_examples.scheduler.algorithm import prioritize
from componentbase_examples.scheduler.framework import SKIP, CycleState, Status
from componentbase_examples.scheduler.podinfo import PodInfo

from .builders import Cluster, load_config, node

pytestmark = pytest.mark.unit

GPU = "nvidia.com/gpu"
WITH_GPU = ("profiles:\n- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n"
            f"      resources: [{{name: cpu, weight: 1}}, {{name: memory, weight: 1}}, {{name: {GPU}, weight: 1}}]\n")
NO_PRE_SCORE = "profiles:\n- plugins:\n    preScore:\n      disabled: [{name: NodeResourcesBalancedAllocation}]\n"


def make_node(name: str, milli_cpu: int, memory: int, gpu: int = 0) -> dict[str, Any]:
    """upstream's ``makeNode(name, milliCPU, memory, extended)``."""
    n = node(name, cpu=f"{milli_cpu}m", memory=str(memory))
    if gpu:
        n["status"]["allocatable"][GPU] = str(gpu)
    return n


def make_pod(*containers: dict[str, str], node_name: str = "") -> dict[str, Any]:
    """upstream's ``st.MakePod().Req(...).Req(...)``: one container per request list."""
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": "app", "resources": {"requests": r}}
                                           for i, r in enumerate(containers)]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{node_name}", "namespace": "default"},
            "spec": spec}


def cpu_and_memory(cpu: str, memory: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory}


REQUESTED = make_pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"))
CPU_ONLY_ON = make_pod({"cpu": "1000m"}, {"cpu": "2000m"}, node_name="node1")
BOTH_ON_2 = make_pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"), node_name="node2")

CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], str, list[int]]] = [
    # Node1 CPU 0 -> 3000/4000, memory 0 -> 5000/10000: 100 -> 87, 68; node2 50%/50%: 100 -> 100, 75
    ("nothing scheduled, resources requested, differently sized nodes", REQUESTED,
     [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)], [], "", [68, 75]),
    ("resources requested, pods scheduled with resources", REQUESTED,
     [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)], [CPU_ONLY_ON, BOTH_ON_2], "", [73, 74]),
    ("resources requested, pods scheduled with resources, differently sized nodes", REQUESTED,
     [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)], [CPU_ONLY_ON, BOTH_ON_2], "", [73, 70]),
    ("resources requested, pods scheduled with resources, nodes to reach min/max score",
     make_pod({"memory": "2000"}, {"memory": "3000"}),
     [make_node("node1", 3000, 5000), make_node("node2", 3000, 5000)], [CPU_ONLY_ON], "", [100, 50]),
    ("requested resources at node capacity", make_pod({"cpu": "1000m"}, {"cpu": "2000m"}),
     [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)], [CPU_ONLY_ON, BOTH_ON_2], "", [62, 62]),
    ("scalar resource is included in the score computation if pod requests the scalar resource",
     make_pod({"cpu": "0", "memory": "0", GPU: "1"}),
     [make_node("node1", 3500, 40000, gpu=8), make_node("node2", 3500, 40000, gpu=8)],
     [make_pod(cpu_and_memory("1000m", "2000"), {"cpu": "2000m", "memory": "3000", GPU: "3"}, node_name="node1"),
      BOTH_ON_2], WITH_GPU, [75, 76]),
    ("scalar resource is not included in the score computation if pod doesn't request the scalar resource",
     REQUESTED, [make_node("node1", 3500, 40000, gpu=8), make_node("node2", 3500, 40000)], [], WITH_GPU, [56, 56]),
    ("resources requested, pods scheduled with resources if PreScore not called", REQUESTED,
     [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)], [CPU_ONLY_ON, BOTH_ON_2], NO_PRE_SCORE,
     [73, 74]),
]


def cluster_of(nodes: list[dict[str, Any]], existing: list[dict[str, Any]], cfg: str) -> Cluster:
    cluster = Cluster(nodes, load_config(cfg) if cfg else None)
    for p in existing:
        cluster.snapshot.add_pod(p)
    return cluster


@pytest.mark.parametrize(("pod", "nodes", "existing", "cfg", "expected"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_upstream_table(pod: dict[str, Any], nodes: list[dict[str, Any]], existing: list[dict[str, Any]],
                        cfg: str, expected: list[int]) -> None:
    cluster = cluster_of(nodes, existing, cfg)
    fw, info, infos = cluster.framework, PodInfo(pod), cluster.snapshot.nodes
    state: dict[str, Any] = {}
    for name, pre in fw.pre_score:
        if name == "NodeResourcesBalancedAllocation":
            assert pre(state=state, pod=info, nodes=infos) is None
    (plugin,) = [s for s in fw.score if s.name == "NodeResourcesBalancedAllocation"]
    assert plugin.score(state=state, pod=info, nodes=infos) == expected


def test_a_best_effort_pod_is_skipped_in_pre_score() -> None:
    # "nothing scheduled, nothing requested, skip in PreScore"
    cluster = cluster_of([make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)], [], "")
    (pre,) = [fn for name, fn in cluster.framework.pre_score if name == "NodeResourcesBalancedAllocation"]
    status = pre(state={}, pod=PodInfo(make_pod()), nodes=cluster.snapshot.nodes)
    assert isinstance(status, Status) and status.is_skip()


def test_the_framework_does_not_call_score_after_pre_score_skips() -> None:
    """runtime/framework.go's RunScorePlugins leaves out the plugins whose PreScore returned Skip."""
    calls: list[str] = []

    class Skipper:
        name = "Skipper"

        @componentbase.hookimpl
        def scheduler_pre_score(self, state: Any, pod: PodInfo, nodes: list[Any]) -> Status:
            return SKIP

        @componentbase.hookimpl
        def scheduler_score(self, state: Any, pod: PodInfo, nodes: list[Any]) -> list[int]:
            calls.append("score")
            return [100] * len(nodes)

    cfg = load_config("profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: Skipper, weight: 7}]\n")
    cluster = Cluster([make_node("node1", 4000, 10000)], cfg, plugins=(Skipper(),))
    info = PodInfo(make_pod(cpu_and_memory("1000m", "2000")))
    totals = prioritize(cluster.framework, CycleState(), info, cluster.snapshot.nodes)
    assert calls == []
    without = Cluster([make_node("node1", 4000, 10000)])
    assert totals == prioritize(without.framework, CycleState(), info, without.snapshot.nodes)
