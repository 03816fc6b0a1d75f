"""``--dry-run``: schedule manifests in memory with the configured profiles, as cluster-capacity does.

The pods are queued and popped in the profiles' QueueSort order (priority first, then file order), each
runs the profile named by its ``schedulerName`` through the same algorithm and plugins as in a cluster,
and each placement is assumed and bound in the snapshot, so it counts against its node for the pods
after it. Pods that already name a node count there from the start. Ties break with a fixed seed, so
the same input always gives the same placements. A pod that preempts others (DefaultPreemption) has its
victims removed at once, as if they ended their grace period there and then, and is placed on the node
it was nominated to.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any, TextIO

import pluggy

from componentbase_examples.scheduler import config, manifests, profiles
from componentbase_examples.scheduler.algorithm import FitError, NoNodesAvailable, SchedulingAlgorithm
from componentbase_examples.scheduler.framework import CycleState, Framework, Handle, Registry, RegistryError, Status
from componentbase_examples.scheduler.nominator import Nominator
from componentbase_examples.scheduler.plugins.volumes import StaticStore
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.queue import SchedulingQueue
from componentbase_examples.scheduler.report import capacity_table, unschedulable_by_reason
from componentbase_examples.scheduler.snapshot import Snapshot

__all__ = ["dry_run", "simulate"]

_TERMINAL = ("Succeeded", "Failed")


def dry_run(path: str, cfg: config.KubeSchedulerConfiguration, pm: pluggy.PluginManager, out: TextIO,
            err: TextIO) -> int:
    """Load ``path``, simulate, print; 1 (with one line per problem on ``err``) if the input is bad."""
    found = manifests.load(path)
    for warning in found.warnings:
        err.write(f"Warning: {warning}\n")
    if found.errors:
        for problem in found.errors:
            err.write(f"Error: {problem}\n")
        return 1
    try:
        registry = Registry.from_plugin_manager(pm)
    except RegistryError as e:
        err.write(f"Error: {e}\n")
        return 1
    return simulate(cfg, registry, found.nodes, found.pods, out, err, storage=found.storage)


def simulate(cfg: config.KubeSchedulerConfiguration, registry: Registry, nodes: list[dict[str, Any]],
             pods: list[dict[str, Any]], out: TextIO, err: TextIO, seed: int = 0,
             storage: Iterable[dict[str, Any]] = ()) -> int:
    """Schedule ``pods`` over ``nodes``; ``storage`` (PVCs, PVs, StorageClasses, CSINodes) is what the volume
    plugins read, and the PVs and claims they choose stay assumed, so later pods see them taken."""
    snapshot = Snapshot(nodes)
    stores: dict[str, StaticStore] = {}
    for obj in storage:
        stores.setdefault(obj["kind"], StaticStore()).put(obj)
    evictions = _Evictions(snapshot)
    handle = Handle(snapshot, binder=_bound, informer=lambda _, kind: stores.setdefault(kind, StaticStore()),
                    nominator=Nominator(), preemptor=evictions)
    try:
        frameworks = profiles.build_frameworks(cfg, registry, handle)
    except (profiles.ProfileError, ValueError, TypeError) as e:
        for line in str(e).splitlines():
            err.write(f"Error: {line}\n")
        return 1
    algorithm = SchedulingAlgorithm(snapshot, cfg.percentage_of_nodes_to_score, random.Random(seed))
    tick = iter(range(1, 1 << 62))
    first = next(iter(frameworks.values()))
    queue = SchedulingQueue(less=first.queue_sort, clock=lambda: float(next(tick)))
    bound = 0
    for pod in pods:
        info = PodInfo(pod)
        if (pod.get("status") or {}).get("phase") in _TERMINAL:
            continue
        if info.node_name:
            snapshot.add_pod(info)
            bound += 1
            out.write(f"{info.namespace}/{info.name}: already bound to {info.node_name}\n")
        else:
            queue.add(info)
    scheduled = failed = preempted = 0
    reasons: dict[str, str] = {}  # unschedulable pod -> why
    while (queued := queue.pop(timeout=0)) is not None:
        info = queued.pod
        fw = frameworks.get(info.scheduler_name)
        name = f"{info.namespace}/{info.name}"
        if fw is None:
            reasons[name] = f'skipped: no profile has schedulerName "{info.scheduler_name}"'
            out.write(f"{name}: {reasons[name]}\n")
            failed += 1
            continue
        outcome = _schedule_one(algorithm, snapshot, fw, info)
        if evictions.victims:
            outcome = _schedule_one(algorithm, snapshot, fw, info)  # the victims are gone: it fits now
            outcome += f" (preempted {', '.join(f'{v.namespace}/{v.name}' for v in evictions.victims)})"
            preempted += len(evictions.victims)
            evictions.victims.clear()
        if outcome.startswith("-> "):
            scheduled += 1
            out.write(f"{name} {outcome}\n")
        else:
            failed += 1
            reasons[name] = outcome
            out.write(f"{name}: {outcome}\n")
        queue.done(info.key)
    total = scheduled + failed
    already = f", {bound} already bound" if bound else ""
    already += f", {preempted} preempted" if preempted else ""
    out.write(f"Scheduled {scheduled} of {total} pods on {len(snapshot)} nodes; {failed} unschedulable{already}.\n")
    for line in ["", *capacity_table(snapshot.nodes), *([""] if reasons else []), *unschedulable_by_reason(reasons)]:
        out.write(line + "\n")
    return 0


class _Evictions:
    """The simulation's preemptor: victims leave the snapshot at once."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.victims: list[PodInfo] = []

    def preempt(self, pod: PodInfo, node_name: str, victims: list[PodInfo]) -> None:
        for victim in victims:
            self.snapshot.remove_pod(victim.key)
        self.victims += victims

    def clear_nominations(self, pods: list[PodInfo]) -> None:
        """Nothing to write: the nominator already forgot them."""


def _bound(pod: PodInfo, node_name: str) -> None:
    """The simulation's binder: the assumed pod is the placement, nothing is left to do."""


def _schedule_one(algorithm: SchedulingAlgorithm, snapshot: Snapshot, fw: Framework, info: PodInfo) -> str:
    """``-> node`` when placed, else the reason, as one line."""
    state = CycleState()
    try:
        result = algorithm.schedule_pod(fw, state, info)
    except (FitError, NoNodesAvailable) as e:
        return str(e)
    except Exception as e:  # a plugin's bug fails this pod, not the simulation
        return f"error: {e}"
    host = result.suggested_host
    snapshot.assume_pod(info, host)
    status: Status | None = fw.run_reserve(state, info, host)
    if status is None:
        status = fw.run_bind(state, info, host)
        if status is not None:
            fw.run_unreserve(state, info, host)
    if status is not None:
        snapshot.forget_pod(info.key)
        return f"error: {status.plugin}: {status.message()}" if status.plugin else f"error: {status.message()}"
    return f"-> {host}"
