"""kube-scheduler's ``schedulePod``: filter enough feasible nodes, score them, pick the best, or explain why not.

Semantics kept from upstream: the node count searched (``numFeasibleNodesToFind``), the round-robin start
index that moves by the nodes processed each cycle, PreFilter narrowing and skipping, the one-feasible-node
shortcut, weighted normalized scores, the reservoir tie-break among the top scores, and the ``FitError``
message, reasons histogrammed and sorted as strings (so ``10 Insufficient cpu`` sorts before ``2 ...``).
Filtering runs the plugins in batches over a chunk of nodes; the chunk is cut afterwards exactly where
the node-by-node search would have stopped, so the result and the next start index are upstream's.
PostFilter (DefaultPreemption) runs when no node fits, its message joining the FitError; the pods nominated
to nodes of the pod's priority or higher count on their nodes while it is filtered (``nominator``).
"""

from __future__ import annotations

import contextlib
import logging
import random
from collections.abc import Sequence
from typing import Any

import attrs

from componentbase_examples.scheduler.extender import HTTPExtender, add_extender_scores, filter_with_extenders
from componentbase_examples.scheduler.framework import (
    MAX_NODE_SCORE,
    SKIPPED_FILTERS,
    Code,
    CycleState,
    Framework,
    NodeToStatus,
    PluginError,
    PostFilterResult,
    PreFilterResult,
    Status,
)
from componentbase_examples.scheduler.nominator import Nominator
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.scoresum import WeightedSum, as_bytes, select_host, valid_scores
from componentbase_examples.scheduler.snapshot import NodeInfo, Snapshot

log = logging.getLogger("componentbase_examples.scheduler")

__all__ = ["FitError", "NoNodesAvailable", "ScheduleResult", "SchedulingAlgorithm", "num_feasible_nodes_to_find"]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
#: Smallest chunk filtered at once: enough to amortize the per-plugin call, small enough to waste little.
MIN_CHUNK = 64


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes end the search: all below 100 nodes, else a percentage (adaptive when 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    found = num_all_nodes * percentage // 100
    return max(found, MIN_FEASIBLE_NODES_TO_FIND)


class NoNodesAvailable(Exception):
    def __init__(self) -> None:
        super().__init__("no nodes available to schedule pods")


@attrs.define
class Diagnosis:
    """Why nodes were rejected: per-node statuses, a status for nodes PreFilter excluded, plugin messages."""

    node_to_status: dict[str, Status] = attrs.field(factory=dict)
    absent_status: Status | None = None
    unschedulable_plugins: set[str] = attrs.field(factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    #: What PostFilter decided of the pod's nomination: a node, ``""`` to clear it, ``None`` to leave it.
    nominated_node_name: str | None = None


class FitError(Exception):
    """The pod fits no node; ``str()`` is kube-scheduler's ``FailedScheduling`` message."""

    def __init__(self, pod: PodInfo, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__(self.message())

    def message(self) -> str:
        d = self.diagnosis
        text = f"0/{self.num_all_nodes} nodes are available:"
        if d.pre_filter_msg:
            text += f" {d.pre_filter_msg}."
        else:
            counts: dict[str, int] = {}
            for status in d.node_to_status.values():
                for reason in status.reasons:
                    counts[reason] = counts.get(reason, 0) + 1
            absent = self.num_all_nodes - len(d.node_to_status)
            if absent > 0 and d.absent_status is not None:
                for reason in d.absent_status.reasons:
                    counts[reason] = counts.get(reason, 0) + absent
            histogram = sorted(f"{n} {reason}" for reason, n in counts.items())
            if histogram:
                text += f" {', '.join(histogram)}."
        if d.post_filter_msg:
            text += f" {d.post_filter_msg}."  # kube's separator, after a message that may end in "." itself
        return text


@attrs.frozen
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int


class SchedulingAlgorithm:
    """Schedules one pod at a time over a ``Snapshot``; keeps the round-robin index between cycles."""

    def __init__(self, snapshot: Snapshot, percentage_of_nodes_to_score: int = 0,
                 rng: random.Random | None = None) -> None:
        self.snapshot = snapshot
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.next_start_node_index = 0
        self.rng = rng or random.Random()
        #: The config's HTTP extenders: they filter after the plugins and add to the plugins' scores.
        self.extenders: list[HTTPExtender] = []
        #: Pods nominated by preemption; they count on their nodes while lower or equal pods are filtered.
        self.nominator: Nominator | None = None

    def schedule_pod(self, fw: Framework, state: CycleState, pod: PodInfo) -> ScheduleResult:
        """The node for ``pod``; raises ``FitError`` (or ``NoNodesAvailable``). Holds the snapshot's lock."""
        with self.snapshot.lock:
            nodes = self.snapshot.nodes
            if not nodes:
                raise NoNodesAvailable()
            nominated = self.nominator.placed(self.snapshot, pod) if self.nominator else contextlib.nullcontext()
            with nominated:
                feasible, diagnosis = self.find_nodes_that_fit(fw, state, pod, nodes)
                if not feasible:
                    self._post_filter(fw, state, pod, diagnosis)
                    raise FitError(pod, len(nodes), diagnosis)
            evaluated = len(feasible) + len(diagnosis.node_to_status)
            if len(feasible) == 1:
                return ScheduleResult(feasible[0].name, evaluated, 1)
            totals = prioritize(fw, state, pod, feasible, self.extenders)
            return ScheduleResult(feasible[self.select(totals)].name, evaluated, len(feasible))

    def _post_filter(self, fw: Framework, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> None:
        """kube's ``RunPostFilterPlugins``: the first success or unresolvable verdict ends it; rejections'
        messages add up; the last nomination decided stands."""
        if not fw.post_filter:
            return
        statuses = NodeToStatus(diagnosis.node_to_status, diagnosis.absent_status)
        messages: list[str] = []
        for _, post_filter in fw.post_filter:
            result = post_filter(state=state, pod=pod, statuses=statuses)
            status = result.status if isinstance(result, PostFilterResult) else result
            if isinstance(result, PostFilterResult) and result.nominated_node_name is not None:
                diagnosis.nominated_node_name = result.nominated_node_name
            if not isinstance(status, Status):
                continue
            if status.is_success():
                messages = []
                break
            if status.code == Code.ERROR:  # kube logs it; the pod's message keeps only the filters' reasons
                log.error("Status after running PostFilter plugins for pod %s/%s: %s", pod.namespace, pod.name,
                          status.message())
                break
            messages.append(status.message())
            if not status.is_rejected() or status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                break
        diagnosis.post_filter_msg = ", ".join(m for m in messages if m)

    def num_nodes_to_find(self, fw: Framework, num_nodes: int) -> int:
        if not fw.score and not any(e.filter_verb or e.prioritize_verb for e in self.extenders):
            return min(1, num_nodes)  # nothing ranks them: the first that fits will do, as upstream
        percentage = fw.percentage_of_nodes_to_score
        if percentage is None:
            percentage = self.percentage_of_nodes_to_score
        return num_feasible_nodes_to_find(percentage, num_nodes)

    def find_nodes_that_fit(self, fw: Framework, state: CycleState, pod: PodInfo,
                            all_nodes: list[NodeInfo]) -> tuple[list[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        outcome = run_pre_filter(fw, state, pod, all_nodes)
        if isinstance(outcome, Status):
            diagnosis.pre_filter_msg = outcome.message()
            diagnosis.absent_status = outcome
            if outcome.plugin:
                diagnosis.unschedulable_plugins.add(outcome.plugin)
            return [], diagnosis
        skipped, narrowed, narrowing_plugins = outcome
        state[SKIPPED_FILTERS] = skipped
        nodes = all_nodes
        if narrowed is not None:
            by_name = {n.name: n for n in all_nodes}
            nodes = [by_name[name] for name in sorted(narrowed) if name in by_name]
            reason = f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing_plugins))}]"
            diagnosis.absent_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)
            diagnosis.unschedulable_plugins.update(narrowing_plugins)
        filters = [(name, fn) for name, fn in fw.filter if name not in skipped]
        nominated = self._nominated_node_fits(filters, state, pod, narrowed)
        if nominated is not None:
            return [nominated], diagnosis
        to_find = self.num_nodes_to_find(fw, len(nodes))
        feasible, processed = self._filter(filters, state, pod, nodes, to_find, diagnosis)
        if all_nodes:
            self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        if self.extenders and feasible:
            feasible = filter_with_extenders(self.extenders, pod, feasible, diagnosis.node_to_status,
                                             diagnosis.unschedulable_plugins)
        return feasible, diagnosis

    def _nominated_node_fits(self, filters: list[tuple[str, Any]], state: CycleState, pod: PodInfo,
                             narrowed: frozenset[str] | None) -> NodeInfo | None:
        """kube's ``evaluateNominatedNode``: the node the pod preempted on, if it passes every filter now
        (it is then chosen without searching or scoring the others)."""
        name = self.nominator.node_of(pod.key) if self.nominator else ""
        node = self.snapshot.get(name) if name else None
        if node is None or (narrowed is not None and name not in narrowed):
            return None
        rejected: dict[str, Status] = {}
        passed = [node]
        for _, fn in filters:
            passed = fn(state=state, pod=pod, nodes=passed, rejected=rejected)
            if not passed:
                return None
        return node

    def _filter(self, filters: list[tuple[str, Any]], state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
                to_find: int, diagnosis: Diagnosis) -> tuple[list[NodeInfo], int]:
        total = len(nodes)
        if total == 0:
            return [], 0
        start = self.next_start_node_index % total
        if not filters:
            return _rotated(nodes, start, 0, to_find), min(to_find, total)
        feasible: list[NodeInfo] = []
        processed = 0
        # each node is filtered once per cycle and rejected by one plugin at most: the plugins write their
        # verdicts straight into the diagnosis, and a plugin rejected some when the count grew
        statuses = diagnosis.node_to_status
        while processed < total and len(feasible) < to_find:
            need = to_find - len(feasible)
            chunk = _rotated(nodes, start, processed, processed + max(need, MIN_CHUNK))
            passed = chunk
            for name, fn in filters:
                if not passed:
                    break
                before = len(statuses)
                passed = fn(state=state, pod=pod, nodes=passed, rejected=statuses)
                if len(statuses) != before:
                    diagnosis.unschedulable_plugins.add(name)
            used = len(chunk)
            if len(passed) > need:  # the search stops at the need-th feasible node: the rest were not searched
                passed = passed[:need]
                used = chunk.index(passed[-1]) + 1
                for n in chunk[used:]:
                    statuses.pop(n.name, None)
            feasible += passed
            processed += used
        return feasible, processed

    def select(self, totals: list[int]) -> int:
        """The index of a highest total, each of the tied ones equally likely: kube's ``selectHost``."""
        return select_host(totals, self.rng.random)


def _rotated(nodes: list[NodeInfo], start: int, lo: int, hi: int) -> list[NodeInfo]:
    """Items ``lo:hi`` of ``nodes`` rotated to begin at ``start``, without copying the whole rotation."""
    total = len(nodes)
    hi = min(hi, total)
    a, b = start + lo, start + hi
    if b <= total:
        return nodes[a:b]
    if a >= total:
        return nodes[a - total:b - total]
    return nodes[a:] + nodes[:b - total]


def run_pre_filter(fw: Framework, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
                   ) -> Status | tuple[set[str], frozenset[str] | None, list[str]]:
    """Run PreFilter: a rejecting ``Status``, or (plugins whose Filter is skipped, narrowed names, narrowers)."""
    skipped: set[str] = set()
    narrowed: frozenset[str] | None = None
    narrowing: list[str] = []
    for name, pre_filter in fw.pre_filter:
        result = pre_filter(state=state, pod=pod, nodes=nodes)
        if isinstance(result, Status):
            if result.is_skip():
                skipped.add(name)
                continue
            if not result.is_success():
                result.plugin = result.plugin or name
                return result
        elif isinstance(result, PreFilterResult) and result.node_names is not None:
            narrowing.append(name)
            narrowed = result.node_names if narrowed is None else narrowed & result.node_names
            if not narrowed:
                plugins = " ".join(narrowing)
                msg = (f"node(s) didn't satisfy plugin {plugins}" if len(narrowing) == 1 else
                       f"node(s) didn't satisfy plugin(s) [{plugins}] simultaneously")
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg, plugin=name)
    return skipped, narrowed, narrowing


class ScoreError(Exception):
    """A PreScore or Score plugin failed, or gave a score outside 0..100 after normalizing: the cycle fails
    with kube's message and no traceback, as kube reports a plugin's error status."""


def prioritize(fw: Framework, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
               extenders: Sequence[HTTPExtender] = ()) -> list[int]:
    """The weighted sum of every score plugin's normalized scores, one total per node, plus the extenders'."""
    if not fw.score and not extenders:
        return [1] * len(nodes)
    skipped: set[str] = set()
    for name, pre_score in fw.pre_score:
        result = pre_score(state=state, pod=pod, nodes=nodes)
        if isinstance(result, Status):
            if result.is_skip():
                skipped.add(name)
            elif not result.is_success():
                raise ScoreError(f'running PreScore plugin "{name}": {result.message()}')
    plugins = [plugin for plugin in fw.score if plugin.name not in skipped]
    weighted_sum = WeightedSum(len(nodes), MAX_NODE_SCORE * sum(max(p.weight, 0) for p in plugins))
    for plugin in plugins:
        try:
            scores = plugin.score(state=state, pod=pod, nodes=nodes)
        except PluginError as e:  # e.g. its PreScore is disabled in the profile (StateNotFound)
            raise ScoreError(f'running Score plugins: plugin "{plugin.name}" failed with: {e}') from e
        if plugin.normalize is not None:
            plugin.normalize(state=state, pod=pod, nodes=nodes, scores=scores)
        raw = as_bytes(scores)
        if not valid_scores(scores, raw):
            raise ScoreError(f"plugin {plugin.name!r} returns an invalid score, it should in the range of "
                             f"[0, {MAX_NODE_SCORE}] after normalizing")
        if len(scores) != len(nodes):
            raise ScoreError(f"plugin {plugin.name!r} returns {len(scores)} scores for {len(nodes)} nodes")
        if any(scores):  # all zeros (ImageLocality with no image anywhere) add nothing
            weighted_sum.add(scores, raw, plugin.weight)
    totals = weighted_sum.totals()
    if extenders:
        add_extender_scores(extenders, pod, nodes, totals)
    return totals

