"""Preemption throughput: high-priority pods onto a full cluster, the default plugins with DefaultPreemption.

Every node (4 CPUs) is full of low-priority pods of 500m to 1500m (priorities 0 to 3, start times spread);
each high-priority pod (500m to 1500m) fits nowhere, so its first cycle fails and DefaultPreemption dry-runs
candidates (at least 100 nodes, as kube's minCandidateNodesAbsolute) and nominates one; the victims then
leave at once (their grace period over) and the pod's second cycle places it, as the scheduler does once
the deletions arrive. Measured in memory, one core, as ``scheduler_algorithm.py``: pods/s counts both
cycles and the dry runs; victims per pod is what the preemptions cost the low-priority workload.

    python benchmarks/scheduler_preemption.py [--nodes 500] [--pods 1000]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from componentbase_examples.scheduler import config, profiles
from componentbase_examples.scheduler.algorithm import FitError, SchedulingAlgorithm
from componentbase_examples.scheduler.framework import Handle, Registry
from componentbase_examples.scheduler.nominator import Nominator
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.registry import new_plugin_manager
from componentbase_examples.scheduler.snapshot import Snapshot

SIZES = ["500m", "1", "1500m"]


def make_pod(name: str, cpu: str, priority: int, node: str = "", start: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                                            "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}],
                            "priority": priority}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}"}, "spec": spec,
            "status": {"startTime": start} if start else {}}


def full_cluster(nodes: int, rng: random.Random) -> Snapshot:
    """``nodes`` nodes of 4 CPUs, each filled to the last millicore with low-priority pods."""
    snapshot = Snapshot({"metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}"}},
                         "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}
                        for i in range(nodes))
    for i in range(nodes):
        free, j = 4000, 0
        while free > 0:
            milli = min(free, rng.choice((500, 1000, 1500)))
            start = f"2024-01-01T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z"
            snapshot.add_pod(make_pod(f"low-{i}-{j}", f"{milli}m", rng.randrange(4), f"node-{i}", start))
            free, j = free - milli, j + 1
    return snapshot


class Evictions:
    """The API's part, instantly: victims are deleted and their grace period is over."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.pending: list[PodInfo] = []
        self.total = 0

    def preempt(self, pod: PodInfo, node_name: str, victims: list[PodInfo]) -> None:
        self.pending += victims
        self.total += len(victims)

    def clear_nominations(self, pods: list[PodInfo]) -> None:
        pass

    def finish(self) -> None:
        for victim in self.pending:
            self.snapshot.remove_pod(victim.key)
        self.pending.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(1)
    snapshot = full_cluster(args.nodes, rng)
    low_pods = sum(len(n.pods) for n in snapshot.nodes)
    nominator = Nominator()
    evictions = Evictions(snapshot)
    cfg = config.SCHEME.new(config.API_VERSION, config.KIND)
    assert isinstance(cfg, config.KubeSchedulerConfiguration)
    registry = Registry.from_plugin_manager(new_plugin_manager(entry_point_group=None))
    handle = Handle(snapshot, nominator=nominator, preemptor=evictions, pdbs=list)
    fw = profiles.build_frameworks(cfg, registry, handle)["default-scheduler"]
    fw.plugins["DefaultPreemption"].rng = random.Random(3)
    algorithm = SchedulingAlgorithm(snapshot, cfg.percentage_of_nodes_to_score, random.Random(2))
    algorithm.nominator = nominator
    pods = [PodInfo(make_pod(f"high-{i}", rng.choice(SIZES), 1000)) for i in range(args.pods)]

    placed = failed = cycles = preempting = 0
    preempt_time = 0.0
    start, cpu_start = time.perf_counter(), time.process_time()
    for pod in pods:
        for _ in range(2):  # the failed cycle that preempts, then the one after the victims are gone
            cycles += 1
            began = time.perf_counter()
            try:
                result = algorithm.schedule_pod(fw, {}, pod)
            except FitError as e:
                preempt_time += time.perf_counter() - began
                preempting += 1
                nominated = e.diagnosis.nominated_node_name
                if nominated is not None:
                    nominator.add(pod, nominated)
                evictions.finish()
                continue
            snapshot.assume_pod(pod, result.suggested_host)
            nominator.delete(pod.key)
            placed += 1
            break
        else:
            failed += 1
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    print(f"nodes={args.nodes} low-priority pods={low_pods} high-priority pods={len(pods)} placed={placed} "
          f"unplaced={failed} cycles={cycles}")
    print(f"preemption: {placed / elapsed:.0f} pods/s ({placed / cpu:.0f} per CPU second: the machine may be shared), "
          f"{evictions.total / max(placed, 1):.2f} victims per pod, "
          f"{preempt_time / max(preempting, 1) * 1e3:.2f} ms per failed cycle with its dry runs")


if __name__ == "__main__":
    main()
