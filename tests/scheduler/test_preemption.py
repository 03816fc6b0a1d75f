"""DefaultPreemption, case by case from kube-scheduler's own tables (defaultpreemption/default_preemption_test.go:
TestPostFilter, TestDryRunPreemption, TestSelectBestCandidate, TestPodEligibleToPreemptOthers) and the
nominator's rule that lower or equal pods must fit with the nominated pods added."""

from __future__ import annotations

import random
from typing import Any

import pytest

from componentbase import field
from componentbase_examples.scheduler import profiles
from componentbase_examples.scheduler.algorithm import FitError, SchedulingAlgorithm
from componentbase_examples.scheduler.framework import Handle
from componentbase_examples.scheduler.nominator import Nominator
from componentbase_examples.scheduler.plugins.defaultpreemption import DefaultPreemptionArgs
from componentbase_examples.scheduler.plugins.victims import Candidate, pick_one_node, split_by_pdb_violation
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import Snapshot
from tests.scheduler.builders import default_config, load_config, node, pod, registry

pytestmark = pytest.mark.unit

LOW, MID, HIGH, VERY_HIGH = 0, 100, 1000, 10000
ZONE = "topology.kubernetes.io/zone"


def placed(name: str, on: str, priority: int, cpu: str = "1", start: str = "2024-01-01T00:00:00Z",
           labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    p = pod(name, cpu=cpu, memory=None, nodeName=on, priority=priority, **spec)
    p["metadata"].update(uid=f"uid-{name}", labels=labels or {})
    p["status"] = {"startTime": start}
    return p


def preemptor(name: str = "p", priority: int = HIGH, cpu: str = "1", **spec: Any) -> dict[str, Any]:
    p = pod(name, cpu=cpu, memory=None, priority=priority, **spec)
    p["metadata"]["uid"] = f"uid-{name}"
    return p


class Evictions:
    """Stands in for the API preemptor: records what would be evicted."""

    def __init__(self) -> None:
        self.preempted: list[tuple[str, str, list[str]]] = []
        self.cleared: list[str] = []

    def preempt(self, pod: PodInfo, node_name: str, victims: list[PodInfo]) -> None:
        self.preempted.append((pod.name, node_name, [v.name for v in victims]))

    def clear_nominations(self, pods: list[PodInfo]) -> None:
        self.cleared += [p.name for p in pods]


class World:
    """A snapshot, the default profile with DefaultPreemption, a nominator and recorded evictions."""

    def __init__(self, nodes: list[dict[str, Any]], pods: list[dict[str, Any]] = (),  # type: ignore[assignment]
                 pdbs: list[dict[str, Any]] = (), config: str = "") -> None:  # type: ignore[assignment]
        self.snapshot = Snapshot(nodes, pods)
        self.nominator = Nominator()
        self.evictions = Evictions()
        cfg = load_config(config) if config else default_config()
        handle = Handle(self.snapshot, nominator=self.nominator, pdbs=lambda: list(pdbs), preemptor=self.evictions)
        self.fw = next(iter(profiles.build_frameworks(cfg, registry(), handle).values()))
        self.fw.plugins["DefaultPreemption"].rng = random.Random(0)
        self.algorithm = SchedulingAlgorithm(self.snapshot, 0, random.Random(0))
        self.algorithm.nominator = self.nominator

    def attempt(self, p: dict[str, Any]) -> tuple[str | None, str]:
        """``(nominated node, message)`` of a pod that fits nowhere; its nomination is recorded, as the
        scheduler does."""
        info = PodInfo(p)
        with pytest.raises(FitError) as err:
            self.algorithm.schedule_pod(self.fw, {}, info)
        nominated = err.value.diagnosis.nominated_node_name
        if nominated is not None:
            self.nominator.add(info, nominated)
        return nominated, str(err.value)

    def victims(self) -> list[str]:
        assert len(self.evictions.preempted) == 1, self.evictions.preempted
        return self.evictions.preempted[0][2]


# TestPostFilter


def test_a_higher_priority_pod_is_nominated_where_a_lower_one_is_preempted() -> None:
    w = World([node("node1", cpu="1")], [placed("p1", "node1", LOW)])
    nominated, message = w.attempt(preemptor())
    assert nominated == "node1"
    assert message == "0/1 nodes are available: 1 Insufficient cpu."  # success adds nothing
    assert w.evictions.preempted == [("p", "node1", ["p1"])]


def test_a_pod_of_tied_priority_preempts_nothing() -> None:
    w = World([node("node1", cpu="1")], [placed("p1", "node1", HIGH)])
    nominated, message = w.attempt(preemptor())
    assert nominated == ""
    assert message == ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                       "1 No preemption victims found for incoming pod..")
    assert w.evictions.preempted == []


def test_unresolvable_nodes_are_not_helped_by_preemption() -> None:
    w = World([node("node1", cpu="1", labels={"a": "b"}), node("node2", cpu="1")],
              [placed("p1", "node1", LOW), placed("p2", "node2", LOW)])
    nominated, message = w.attempt(preemptor(nodeSelector={"a": "c"}))
    assert nominated == ""
    assert message == ("0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. "
                       "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..")


def test_not_enough_room_even_after_removing_every_lower_pod() -> None:
    w = World([node("node1", cpu="2"), node("node2", cpu="2")],
              [placed("p1", "node1", LOW), placed("h1", "node1", HIGH), placed("p2", "node2", LOW),
               placed("h2", "node2", HIGH)])
    nominated, message = w.attempt(preemptor(cpu="2"))
    assert nominated == ""
    assert message == ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
                       "2 Insufficient cpu..")


def test_mixed_reasons_are_counted_per_node() -> None:
    w = World([node("node1", cpu="1"), node("node2", cpu="1"), node("node3", cpu="1", labels={"x": "y"}),
               node("node4", cpu="4")],
              [placed("p1", "node1", HIGH), placed("p2", "node2", LOW), placed("p3", "node3", LOW),
               placed("p4", "node4", VERY_HIGH, cpu="4")])
    nominated, message = w.attempt(preemptor(cpu="2", affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}]}}}))
    assert nominated == ""
    # node1 and node2 are smaller than the request (unresolvable since kube 1.34, kubernetes#131345), node3
    # fails the affinity: preemption cannot help there; node4's only pod has a higher priority.
    assert message.split(" preemption: ")[1] == (
        "0/4 nodes are available: 1 No preemption victims found for incoming pod, "
        "3 Preemption is not helpful for scheduling..")


def test_preemption_policy_never_is_honoured() -> None:
    w = World([node("node1", cpu="1")], [placed("p1", "node1", LOW)])
    nominated, message = w.attempt(preemptor(preemptionPolicy="Never"))
    assert nominated is None
    assert message.endswith(" preemption: not eligible due to preemptionPolicy=Never..")
    assert w.evictions.preempted == []


def test_a_nominated_pod_waits_for_its_terminating_victims() -> None:
    victim = placed("p1", "node1", LOW)
    victim["metadata"]["deletionTimestamp"] = "2024-01-01T00:01:00Z"
    victim["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True",
                                       "reason": "PreemptionByScheduler"}]
    w = World([node("node1", cpu="1"), node("node2", cpu="1")], [victim, placed("p2", "node2", LOW)])
    me = preemptor()
    w.nominator.add(PodInfo(me), "node1")
    nominated, message = w.attempt(me)
    assert nominated is None, "the nomination stands"
    assert message.endswith("preemption: not eligible due to a terminating pod on the nominated node..")
    assert w.evictions.preempted == []


# TestDryRunPreemption / SelectVictimsOnNode


def test_the_small_low_pod_is_reprieved_the_medium_one_preempted() -> None:
    w = World([node("node1", cpu="4")],
              [placed("low", "node1", LOW, cpu="500m"), placed("mid", "node1", MID, cpu="2"),
               placed("high", "node1", VERY_HIGH, cpu="1")])
    assert w.attempt(preemptor(cpu="2"))[0] == "node1"
    assert w.victims() == ["mid"], "the most important lower pod is reprieved first; the small one fits back"


def test_victims_are_listed_most_important_first() -> None:
    w = World([node("node1", cpu="3")],
              [placed("a", "node1", LOW), placed("b", "node1", MID),
               placed("c", "node1", LOW, start="2023-01-01T00:00:00Z")])
    w.attempt(preemptor(cpu="3"))
    assert w.victims() == ["b", "c", "a"], "priority, then the pod that started first"


def test_higher_priority_pods_are_never_victims() -> None:
    w = World([node("node1", cpu="2")], [placed("low", "node1", LOW), placed("top", "node1", VERY_HIGH)])
    nominated, message = w.attempt(preemptor(cpu="2"))
    assert nominated == ""
    assert message.endswith("preemption: 0/1 nodes are available: 1 Insufficient cpu..")
    n1 = w.snapshot.get("node1")
    assert n1 is not None and (sorted(p.name for p in n1.pods.values()), n1.req_cpu) == (["low", "top"], 2000), \
        "the dry run left the node as it was"


def test_a_victim_with_anti_affinity_to_the_preemptor_is_preempted() -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "p"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    w = World([node("node1", cpu="4", labels={"kubernetes.io/hostname": "node1"})],
              [placed("repels", "node1", LOW, cpu="100m", affinity=anti), placed("other", "node1", LOW, cpu="100m")])
    me = preemptor(cpu="100m")
    me["metadata"]["labels"] = {"app": "p"}
    assert w.attempt(me)[0] == "node1"
    assert w.victims() == ["repels"]


def test_preemption_resolves_a_topology_spread_failure() -> None:
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    web = {"app": "web"}
    w = World([node("a", labels={ZONE: "a"}), node("b", cpu="1", labels={ZONE: "b"})],
              [placed("a1", "a", LOW, cpu="100m", labels=web), placed("a2", "a", LOW, cpu="100m", labels=web),
               placed("b1", "b", HIGH, cpu="1", labels=web)])
    me = preemptor(cpu="100m", topologySpreadConstraints=spread)
    me["metadata"]["labels"] = web
    nominated, message = w.attempt(me)
    assert message.startswith("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology")
    assert nominated == "a"
    assert len(w.victims()) == 1, "one web pod fewer in zone a is enough for a skew of 1"


# PodDisruptionBudgets


def _pdb(allowed: int, disrupted: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "pdb", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "db"}}},
            "status": {"disruptionsAllowed": allowed, "disruptedPods": disrupted or {}}}


def test_the_node_that_violates_no_budget_is_preferred() -> None:
    w = World([node("node1", cpu="1"), node("node2", cpu="1")],
              [placed("guarded", "node1", LOW, labels={"app": "db"}), placed("free", "node2", MID)],
              pdbs=[_pdb(0)])
    assert w.attempt(preemptor())[0] == "node2", "fewest PDB violations wins over the lower victim"


def test_a_budget_is_counted_down_victim_by_victim() -> None:
    pods = [placed(n, "node1", LOW, labels={"app": "db"}) for n in ("a", "b")]
    violating, others = split_by_pdb_violation([PodInfo(p) for p in pods], [_pdb(1)])
    assert ([p.name for p in violating], [p.name for p in others]) == (["b"], ["a"])
    violating, others = split_by_pdb_violation([PodInfo(p) for p in pods], [_pdb(0, {"a": "t"})])
    assert ([p.name for p in violating], [p.name for p in others]) == (["b"], ["a"]), \
        "a pod the budget already counts as disrupted is not counted again"
    assert split_by_pdb_violation([PodInfo(pods[0])], [dict(_pdb(0), spec={"selector": {}})])[0] == [], \
        "an empty selector matches nothing"


def test_budget_violating_victims_are_reprieved_first() -> None:
    w = World([node("node1", cpu="2")],
              [placed("guarded", "node1", LOW, labels={"app": "db"}), placed("plain", "node1", LOW)],
              pdbs=[_pdb(0)])
    assert w.attempt(preemptor())[0] == "node1"
    assert w.victims() == ["plain"]


# TestSelectBestCandidate


def _c(name: str, *victims: tuple[int, str], pdb: int = 0) -> Candidate:
    pods = [PodInfo(placed(f"{name}-{i}", name, prio, start=start)) for i, (prio, start) in enumerate(victims)]
    return Candidate(name, tuple(pods), pdb)


T1, T2, T3 = "2024-01-01T00:00:01Z", "2024-01-01T00:00:02Z", "2024-01-01T00:00:03Z"


@pytest.mark.parametrize(("candidates", "want"), [
    ([_c("n1", (MID, T1)), _c("n2", (LOW, T1))], "n2"),  # min highest priority
    ([_c("n1", (MID, T1), (LOW, T1)), _c("n2", (MID, T1), (LOW, T1), (LOW, T1))], "n1"),  # min sum
    ([_c("n1", (MID, T1), (LOW, T1), (LOW, T1)), _c("n2", (MID, T1), (LOW, T1))], "n2"),  # sum, then count
    ([_c("n1", (-10, T1), (-10, T1)), _c("n2", (-10, T1))], "n2"),  # adjusted sum of negative priorities
    ([_c("n1", (MID, T1)), _c("n2", (MID, T2)), _c("n3", (MID, T3))], "n3"),  # latest start time
    ([_c("n1", (MID, T3), (LOW, T1)), _c("n2", (MID, T2), (LOW, T3))], "n1"),  # start of the highest victims
    ([_c("n1", (LOW, T1), pdb=1), _c("n2", (MID, T1))], "n2"),  # fewest PDB violations first
])
def test_pick_one_node(candidates: list[Candidate], want: str) -> None:
    best = pick_one_node(candidates)
    assert best is not None and best.name == want


# the nominator


def test_lower_or_equal_pods_must_fit_with_the_nominated_pod_added() -> None:
    w = World([node("node1", cpu="1")], [placed("p1", "node1", LOW)])
    assert w.attempt(preemptor())[0] == "node1"
    w.snapshot.remove_pod("uid-p1")  # the victim is gone
    with pytest.raises(FitError) as err:
        w.algorithm.schedule_pod(w.fw, {}, PodInfo(preemptor("equal", priority=HIGH)))
    assert str(err.value).startswith("0/1 nodes are available: 1 Insufficient cpu."), \
        "the room is held for the nominated pod"
    assert w.algorithm.schedule_pod(w.fw, {}, PodInfo(preemptor())).suggested_host == "node1"
    assert w.algorithm.schedule_pod(w.fw, {}, PodInfo(preemptor("higher", priority=VERY_HIGH))).suggested_host \
        == "node1", "a higher pod does not see the nomination"


def test_a_lower_nominated_pod_loses_its_node_to_a_new_preemptor() -> None:
    w = World([node("node1", cpu="2")], [placed("p1", "node1", LOW, cpu="2")])
    assert w.attempt(preemptor("mid", priority=MID))[0] == "node1"
    w.snapshot.add_pod(placed("p2", "node1", LOW - 1, cpu="1"))  # something else came meanwhile
    w.evictions.preempted.clear()
    assert w.attempt(preemptor("high", priority=HIGH, cpu="2"))[0] == "node1"
    assert w.evictions.cleared == ["mid"] and w.nominator.node_of("uid-mid") == ""


# args


@pytest.mark.parametrize(("pct", "absolute", "want"), [
    (10, 100, []),
    (-1, 100, ["profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: -1: "
               "not in valid range [0, 100]"]),
    (10, -1, ["profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: -1: "
              "not in valid range [0, inf)"]),
    (0, 0, ["profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: "
            "cannot be zero at the same time as minCandidateNodesAbsolute",
            "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: 0: "
            "cannot be zero at the same time as minCandidateNodesPercentage"]),
])
def test_args_validation(pct: int, absolute: int, want: list[str]) -> None:
    args = DefaultPreemptionArgs(min_candidate_nodes_percentage=pct, min_candidate_nodes_absolute=absolute)
    path = field.Path("profiles").index(0).child("pluginConfig").index(0).child("args")
    assert [str(e) for e in args.validate(path)] == want


def test_args_from_the_config_decide_how_many_candidates_are_tried() -> None:
    config = """profiles:
- pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 1}
"""
    nodes = [node(f"n{i}", cpu="1") for i in range(5)]
    w = World(nodes, [placed(f"v{i}", f"n{i}", LOW) for i in range(5)], config=config)
    plugin = w.fw.plugins["DefaultPreemption"]
    assert plugin.num_candidates(5) == 1
    assert w.attempt(preemptor())[0] in {f"n{i}" for i in range(5)}


# --dry-run


def test_the_simulation_evicts_the_victims_and_places_the_preemptor() -> None:
    import io

    from componentbase_examples.scheduler.simulate import simulate

    out, err = io.StringIO(), io.StringIO()
    pods = [placed("low", "n1", LOW), placed("mid", "n2", MID), preemptor("high"),
            preemptor("polite", preemptionPolicy="Never")]
    assert simulate(default_config(), registry(), [node("n1", cpu="1"), node("n2", cpu="1")], pods, out, err) == 0
    lines = out.getvalue().splitlines()
    assert "default/high -> n1 (preempted default/low)" in lines
    assert "default/polite: 0/2 nodes are available: 2 Insufficient cpu. " \
           "preemption: not eligible due to preemptionPolicy=Never.." in lines
    assert "Scheduled 1 of 2 pods on 2 nodes; 1 unschedulable, 2 already bound, 1 preempted." in lines


def test_the_nominated_node_is_tried_first_and_taken_when_it_fits() -> None:
    w = World([node("empty", cpu="8"), node("busy", cpu="2")], [placed("resident", "busy", HIGH)])
    me = preemptor()
    assert w.algorithm.schedule_pod(w.fw, {}, PodInfo(me)).suggested_host == "empty", "the emptier node scores"
    w.nominator.add(PodInfo(me), "busy")
    result = w.algorithm.schedule_pod(w.fw, {}, PodInfo(me))
    assert (result.suggested_host, result.feasible_nodes) == ("busy", 1)
    w.snapshot.add_pod(placed("filler", "busy", HIGH))
    assert w.algorithm.schedule_pod(w.fw, {}, PodInfo(me)).suggested_host == "empty", \
        "a nominated node that no longer fits is searched like the others"


# the API side (preemption.Preemptor), with a binder that records its calls


class _Binder:
    def __init__(self, fail: dict[str, int] | None = None) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.fail = fail or {}

    def _maybe_fail(self, name: str) -> None:
        from componentbase_examples.scheduler.binder import BindError

        if name in self.fail:
            raise BindError(f'pods "{name}" not found', self.fail[name])

    def patch_status(self, pod: dict[str, Any], status: dict[str, Any], *, precondition: bool) -> None:
        self.calls.append(("patch", pod["metadata"]["name"], status))
        self._maybe_fail(pod["metadata"]["name"])

    def delete_pod(self, pod: dict[str, Any]) -> None:
        self.calls.append(("delete", pod["metadata"]["name"], None))


class _Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str, str, str]] = []

    def event(self, obj: dict[str, Any], type: str, reason: str, message: str, *, action: str = "",
              related: dict[str, Any] | None = None) -> None:
        self.events.append((obj["metadata"]["name"], reason, message, action, (related or {})["metadata"]["name"]))


def test_victims_get_the_condition_then_the_delete_then_the_event() -> None:
    from componentbase_examples.scheduler.preemption import Preemptor

    binder, recorder, queued, retried = _Binder(fail={"gone": 404}), _Recorder(), [], []
    api = Preemptor(binder, queued.append, lambda name: recorder, retried.append)  # type: ignore[arg-type]
    me = PodInfo(preemptor())
    api.preempt(me, "n1", [PodInfo(placed("v1", "n1", LOW)), PodInfo(placed("gone", "n1", LOW))])
    assert api.is_running(me.key), "until its evictions are sent, the preemptor must not preempt again"
    queued.pop()()
    assert not api.is_running(me.key)
    condition = binder.calls[0][2]["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"], condition["message"]) == (
        "DisruptionTarget", "True", "PreemptionByScheduler",
        "default-scheduler: preempting to accommodate a higher priority pod")
    assert [(c[0], c[1]) for c in binder.calls] == [("patch", "v1"), ("delete", "v1"), ("patch", "gone")]
    assert recorder.events == [("v1", "Preempted", "Preempted by pod uid-p on node n1", "Preempting", "p")]
    assert retried == [], "a victim already gone is not a failure"


def test_a_failed_eviction_retries_the_preemptor_at_once() -> None:
    from componentbase_examples.scheduler.preemption import Preemptor

    binder, retried = _Binder(fail={"v1": 500}), []
    api = Preemptor(binder, lambda work: work(), lambda name: _Recorder(), retried.append)  # type: ignore[arg-type]
    me = PodInfo(preemptor())
    api.preempt(me, "n1", [PodInfo(placed("v1", "n1", LOW))])
    assert [p.name for p in retried] == ["p"]
    assert [c[0] for c in binder.calls] == ["patch"], "no delete without the condition"
