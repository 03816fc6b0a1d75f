"""DefaultPreemption (PostFilter): when a pod fits nowhere, make room by evicting pods of lower priority,
as kube-scheduler's plugin of that name (``defaultpreemption`` and ``framework/preemption``).

1. Eligibility: a pod with ``preemptionPolicy: Never`` does not preempt; nor does one whose nominated node
   still has a lower-priority pod terminating because the scheduler preempted it (it waits for that).
2. Candidates: the nodes Filter rejected as ``Unschedulable`` (not unresolvable: a taint or a node selector
   stays whatever is evicted), from a random offset, until ``max(minCandidateNodesPercentage % of them,
   minCandidateNodesAbsolute)`` are found (with at least one that violates no PodDisruptionBudget).
   On each, a dry run: every pod of lower priority is taken off the node; if the pod then passes the
   filters (with the nominated pods of its priority or higher counted), victims are *reprieved* one by one,
   the most important first (priority, then earliest start), budget-violating ones before the others, and
   each that still lets the pod fit stays. What is left are the victims.
3. The node: fewest budget violations, lowest highest-priority victim, smallest sum of priorities, fewest
   victims, latest start of the highest-priority victims (``victims.pick_one_node``).
4. The pod is nominated to it (``status.nominatedNodeName``), lower-priority pods nominated there lose
   their nomination, and the ``Handle``'s preemptor evicts the victims (DisruptionTarget condition, then a
   graceful delete, and a ``Preempted`` event). The pod itself waits among the unschedulable pods for them
   to go; meanwhile its nomination keeps lower-priority pods off the room they leave.

The dry run works on the live snapshot (the cycle holds its lock): victims are removed and put back with
the snapshot's own bookkeeping, so every plugin sees the node as it would be, and a plugin that keeps
PreFilter state (PodTopologySpread, InterPodAffinity) has its PreFilter run again over the changed
cluster, rather than kube's AddPod/RemovePod extensions; plugins whose PreFilter skipped the pod stay
skipped. Candidates are tried one after another, not in parallel.
"""

from __future__ import annotations

import random
from typing import Any

import componentbase
from componentbase_examples.scheduler.algorithm import Diagnosis, FitError, run_pre_filter
from componentbase_examples.scheduler.extender import ExtenderError
from componentbase_examples.scheduler.extenderpreemption import preempt_with_extenders
from componentbase_examples.scheduler.framework import (
    SKIPPED_FILTERS,
    Code,
    CycleState,
    Framework,
    Handle,
    NodeToStatus,
    Plugin,
    PostFilterResult,
    Status,
)
from componentbase_examples.scheduler.plugins.args import DefaultPreemptionArgs
from componentbase_examples.scheduler.plugins.victims import (
    Candidate,
    importance_key,
    pick_one_node,
    split_by_pdb_violation,
    terminating_by_preemption,
)
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo, Snapshot

__all__ = ["DefaultPreemption", "DefaultPreemptionArgs"]

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING = "not eligible due to a terminating pod on the nominated node."
RUNNING = "waiting for the preemption for this pod to be finished"


class DefaultPreemption(Plugin):
    name = "DefaultPreemption"
    Args = DefaultPreemptionArgs

    def __init__(self, args: DefaultPreemptionArgs | None, handle: Handle) -> None:
        super().__init__(args or DefaultPreemptionArgs(), handle)
        #: Chooses where the candidate search starts (kube's ``getOffsetRand``); tests may seed it.
        self.rng = random.Random()

    @componentbase.hookimpl
    def scheduler_post_filter(self, state: CycleState, pod: PodInfo, statuses: NodeToStatus) -> PostFilterResult:
        if self.handle.metrics is not None:
            self.handle.metrics.preemption_attempt()
        result = self.preempt(state, pod, statuses)
        message = result.status.message()
        if message:  # kube's PostFilter prefixes whatever preemption says
            status = Status(result.status.code, f"preemption: {message}", plugin=self.name)
            return PostFilterResult(status, result.nominated_node_name)
        return result

    def preempt(self, state: CycleState, pod: PodInfo, statuses: NodeToStatus) -> PostFilterResult:
        """kube's ``Evaluator.Preempt``: dry-run candidates, narrowed by the extenders with a ``preemptVerb``."""
        snapshot = self.handle.snapshot
        eligible, why = self.eligible(pod, statuses)
        if not eligible:
            return PostFilterResult(Status(Code.UNSCHEDULABLE, why))
        potential = [n for n in snapshot.nodes if _code(statuses.status_of(n.name)) == Code.UNSCHEDULABLE]
        dry_run = NodeToStatus()
        candidates: list[Candidate] = []
        if potential:
            candidates = self.find_candidates(state, pod, potential, dry_run)
        if not candidates:
            diagnosis = Diagnosis(node_to_status=dry_run,
                                  absent_status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_HELPFUL))
            message = FitError(pod, len(snapshot.nodes), diagnosis).message()
            self._clear_nomination(pod)
            return PostFilterResult(Status(Code.UNSCHEDULABLE, message), "")
        if self.handle.extenders:
            try:
                candidates = self._with_extenders(pod, candidates)
            except ExtenderError as e:
                return PostFilterResult(Status(Code.ERROR, str(e)))
        best = pick_one_node(candidates)
        if best is None:
            return PostFilterResult(Status(Code.UNSCHEDULABLE, "no candidate node for preemption"))
        self.prepare_candidate(best, pod)
        return PostFilterResult(Status(Code.SUCCESS), best.name)

    def _with_extenders(self, pod: PodInfo, candidates: list[Candidate]) -> list[Candidate]:
        """kube's ``callExtenders``: the candidates (and victims) every preempting extender keeps."""
        victims = {c.name: (list(c.victims), c.num_pdb_violations) for c in candidates}
        kept = preempt_with_extenders(self.handle.extenders, pod, victims, self.handle.snapshot)
        return [Candidate(name, tuple(pods), violations) for name, (pods, violations) in kept.items()]

    def eligible(self, pod: PodInfo, statuses: NodeToStatus) -> tuple[bool, str]:
        """kube's ``PodEligibleToPreemptOthers``."""
        if pod.spec.get("preemptionPolicy") == "Never":
            return False, NEVER
        running = getattr(self.handle.preemptor, "is_running", None)
        if running is not None and running(pod.key):  # kube keeps such a pod out of the active queue
            return False, RUNNING
        nominated = self._nominated_node(pod)
        if not nominated or _code(statuses.status_of(nominated)) == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return True, ""
        node = self.handle.snapshot.get(nominated)
        if node is not None and any(p.priority < pod.priority and terminating_by_preemption(p)
                                    for p in node.pods.values()):
            return False, TERMINATING
        return True, ""

    def _nominated_node(self, pod: PodInfo) -> str:
        nominator = self.handle.nominator
        node = nominator.node_of(pod.key) if nominator is not None else ""
        return node or str((pod.pod.get("status") or {}).get("nominatedNodeName") or "")

    def num_candidates(self, num_nodes: int) -> int:
        """kube's ``calculateNumCandidates``."""
        args: DefaultPreemptionArgs = self.args
        n = num_nodes * args.min_candidate_nodes_percentage // 100
        return min(max(n, args.min_candidate_nodes_absolute), num_nodes)

    def find_candidates(self, state: CycleState, pod: PodInfo, potential: list[NodeInfo],
                        dry_run: NodeToStatus) -> list[Candidate]:
        """kube's ``DryRunPreemption``: candidates that violate no budget first; ``dry_run`` gets each failed
        node's status."""
        pdbs = self.handle.pdbs() if self.handle.pdbs is not None else []
        offset = self.rng.randrange(len(potential))
        wanted = self.num_candidates(len(potential))
        run = _DryRun(self.handle.framework, self.handle.snapshot, state, pod)
        clean: list[Candidate] = []
        violating: list[Candidate] = []
        for i in range(len(potential)):
            node = potential[(offset + i) % len(potential)]
            found = self.select_victims_on_node(run, node, pdbs)
            if isinstance(found, Status):
                dry_run[node.name] = found
                continue
            (violating if found.num_pdb_violations else clean).append(found)
            if clean and len(clean) + len(violating) >= wanted:
                break
        return clean + violating[:wanted]  # kube keeps at most that many of each kind

    def select_victims_on_node(self, run: _DryRun, node: NodeInfo, pdbs: list[dict[str, Any]]) -> Candidate | Status:
        """kube's ``SelectVictimsOnNode``, on the live snapshot; the node is as it was on return."""
        snapshot = run.snapshot
        priority = run.pod.priority
        potential = [p for p in node.pods.values() if p.priority < priority]
        if not potential:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS, plugin=self.name)
        assumed = {p.key for p in potential if snapshot.is_assumed(p.key)}
        removed: dict[str, PodInfo] = {}
        try:
            for p in potential:
                snapshot.remove_pod(p.key)
                removed[p.key] = p
            status = run.filter(node)
            if not status.is_success():
                return status
            potential.sort(key=importance_key)
            violating, others = split_by_pdb_violation(potential, pdbs)
            victims: list[PodInfo] = []
            num_violating = 0
            for group, counts in ((violating, True), (others, False)):
                for p in group:
                    _put_back(snapshot, p, node.name, p.key in assumed)
                    del removed[p.key]
                    if not run.filter(node).is_success():
                        snapshot.remove_pod(p.key)
                        removed[p.key] = p
                        victims.append(p)
                        num_violating += counts
            if violating and others:
                victims.sort(key=importance_key)
            return Candidate(node.name, tuple(victims), num_violating)
        finally:
            for p in removed.values():
                _put_back(snapshot, p, node.name, p.key in assumed)

    def prepare_candidate(self, candidate: Candidate, pod: PodInfo) -> None:
        """kube's ``prepareCandidate``: evict the victims and take the node from lower-priority nominees."""
        nominator = self.handle.nominator
        lower = [p for p in nominator.pods_for_node(candidate.name) if p.priority < pod.priority] \
            if nominator is not None else []
        for p in lower:
            nominator.delete(p.key)  # type: ignore[union-attr]
        if self.handle.metrics is not None:
            self.handle.metrics.preemption_victims(len(candidate.victims))
        preemptor = self.handle.preemptor
        if preemptor is not None:
            preemptor.preempt(pod, candidate.name, [v for v in candidate.victims
                                                    if not (v.pod.get("metadata") or {}).get("deletionTimestamp")])
            if lower:
                preemptor.clear_nominations(lower)

    def _clear_nomination(self, pod: PodInfo) -> None:
        nominator = self.handle.nominator
        if nominator is not None:
            nominator.delete(pod.key)


class _DryRun:
    """One preemption's filter runs on single nodes: the PreFilters that did not skip the pod are run again
    (their state may count the pods just removed), then the Filters that were not skipped."""

    _SUCCESS = Status(Code.SUCCESS)

    def __init__(self, fw: Framework, snapshot: Snapshot, state: CycleState, pod: PodInfo) -> None:
        self.snapshot = snapshot
        self.pod = pod
        self.state = CycleState(state)
        skipped: set[str] | None = state.get(SKIPPED_FILTERS)
        self.pre_filter = Framework(fw.profile_name, pre_filter=[
            (n, f) for n, f in fw.pre_filter if skipped is None or n not in skipped])
        self.skipped = skipped or set()
        self.filters = [(n, f) for n, f in fw.filter if n not in self.skipped]

    def filter(self, node: NodeInfo) -> Status:
        """Whether the pod passes on ``node`` as the snapshot now is."""
        filters = self.filters
        if self.pre_filter.pre_filter:
            outcome = run_pre_filter(self.pre_filter, self.state, self.pod, self.snapshot.nodes)
            if isinstance(outcome, Status):
                return outcome
            more_skipped, narrowed, _ = outcome
            if narrowed is not None and node.name not in narrowed:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s)")
            if more_skipped:
                filters = [(n, f) for n, f in filters if n not in more_skipped]
        passed = [node]
        rejected: dict[str, Status] = {}
        state, pod = self.state, self.pod
        for name, fn in filters:
            passed = fn(state=state, pod=pod, nodes=passed, rejected=rejected)
            if not passed:
                return rejected.get(node.name) or Status(Code.UNSCHEDULABLE, f"rejected by {name}", plugin=name)
        return self._SUCCESS


def _code(status: Status | None) -> Code | None:
    return None if status is None else status.code


def _put_back(snapshot: Snapshot, pod: PodInfo, node_name: str, assumed: bool) -> None:
    if assumed:
        snapshot.assume_pod(pod, node_name)
    else:
        snapshot.add_pod(pod)
