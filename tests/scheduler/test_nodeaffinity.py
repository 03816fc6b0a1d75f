"""NodeAffinity against kube-scheduler 1.37's own tables (plugins/nodeaffinity/node_affinity_test.go:
TestNodeAffinity's Filter and PreFilter, TestNodeAffinityPriority's PreScore and Score). Terms are parsed
as component-helpers' nodeaffinity parses them (labels.NewRequirement): a required term that does not parse
matches nothing, a preferred one fails PreScore with the validation message. Expected values are upstream's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from componentbase_examples.scheduler.algorithm import ScoreError, prioritize
from componentbase_examples.scheduler.framework import Code, CycleState, PreFilterResult, Status
from componentbase_examples.scheduler.podinfo import PodInfo

from .builders import Cluster, load_config, node

pytestmark = pytest.mark.unit

POD = "node(s) didn't match Pod's node affinity/selector"
ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
CONFLICT = "pod affinity terms conflict"
U = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, **({"values": list(values)} if values else {})}


def name_in(*names: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def make_pod(affinity: dict[str, Any] | None = None, selector: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    if affinity is not None:
        spec["affinity"] = affinity
    if selector is not None:
        spec["nodeSelector"] = selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec}


def added(*terms: dict[str, Any]) -> str:
    """NodeAffinityArgs.addedAffinity's required terms, as a profile's pluginConfig."""
    body = json.dumps({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}})
    return f"profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity: {body}\n"


FOO_BAR = {"foo": "bar"}
GPU = {"GPU": "NVIDIA-GRID-K1"}

#: (name, pod, node labels, node name, args config, want PreFilter, want Filter)
FILTER_CASES: list[tuple[str, dict[str, Any], dict[str, str], str, str, Any, Any]] = [
    ("missing labels", make_pod(selector=FOO_BAR), {}, "", "", None, (U, POD)),
    ("same labels", make_pod(selector=FOO_BAR), FOO_BAR, "", "", None, None),
    ("node labels are superset", make_pod(selector=FOO_BAR), {"foo": "bar", "baz": "blah"}, "", "", None, None),
    ("node labels are subset", make_pod(selector={"foo": "bar", "baz": "blah"}), FOO_BAR, "", "", None, (U, POD)),
    ("Pod with matchExpressions using In operator that matches the existing node",
     make_pod(required({"matchExpressions": [expr("foo", "In", "bar", "value2")]})), FOO_BAR, "", "", None, None),
    ("Pod with matchExpressions using Gt operator that matches the existing node",
     make_pod(required({"matchExpressions": [expr("kernel-version", "Gt", "0204")]})), {"kernel-version": "0206"},
     "", "", None, None),
    ("Pod with matchExpressions using NotIn operator that matches the existing node",
     make_pod(required({"matchExpressions": [expr("mem-type", "NotIn", "DDR", "DDR2")]})), {"mem-type": "DDR3"},
     "", "", None, None),
    ("Pod with matchExpressions using Exists operator that matches the existing node",
     make_pod(required({"matchExpressions": [expr("GPU", "Exists")]})), GPU, "", "", None, None),
    ("Pod with affinity that don't match node's labels won't schedule onto the node",
     make_pod(required({"matchExpressions": [expr("foo", "In", "value1", "value2")]})), FOO_BAR, "", "", None,
     (U, POD)),
    ("Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
     make_pod(required({"matchExpressions": []})), FOO_BAR, "", "", None, (U, POD)),
    ("Pod with no Affinity will schedule onto a node", make_pod(), FOO_BAR, "", "", "skip", None),
    ("Pod with Affinity but nil NodeSelector will schedule onto a node", make_pod({"nodeAffinity": {}}), FOO_BAR,
     "", "", "skip", None),
    ("Pod with multiple matchExpressions ANDed that matches the existing node",
     make_pod(required({"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]})), GPU,
     "", "", None, None),
    ("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
     make_pod(required({"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]})), GPU,
     "", "", None, (U, POD)),
    ("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node",
     make_pod(required({"matchExpressions": [expr("foo", "In", "bar", "value2")]},
                       {"matchExpressions": [expr("diffkey", "In", "wrong", "value2")]})), FOO_BAR, "", "", None, None),
    ("Pod with an Affinity and a PodSpec.NodeSelector both are satisfied, will schedule onto the node",
     make_pod(required({"matchExpressions": [expr("foo", "Exists")]}), FOO_BAR), FOO_BAR, "", "", None, None),
    ("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector is not satisfied",
     make_pod(required({"matchExpressions": [expr("foo", "Exists")]}), FOO_BAR), {"foo": "barrrrrr"}, "", "", None,
     (U, POD)),
    # NotIn would match "bar", but the value is no label value: the term does not parse and matches nothing
    ("Pod with an invalid value in Affinity term won't be scheduled onto the node",
     make_pod(required({"matchExpressions": [expr("foo", "NotIn", "invalid value: ___@#$%^")]})), FOO_BAR, "", "",
     None, (U, POD)),
    ("Pod with matchFields using In operator that matches the existing node",
     make_pod(required({"matchFields": [name_in("node1")]})), {}, "node1", "", {"node1"}, None),
    ("Pod with matchFields using In operator that does not match the existing node",
     make_pod(required({"matchFields": [name_in("node1")]})), {}, "node2", "", {"node1"}, (U, POD)),
    ("Pod with two terms: matchFields does not match, but matchExpressions matches",
     make_pod(required({"matchFields": [name_in("node1"), name_in("node2")]},
                       {"matchExpressions": [expr("foo", "In", "bar")]})), FOO_BAR, "node2", "", None, None),
    ("Pod with one term: matchFields does not match, but matchExpressions matches",
     make_pod(required({"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "bar")]})),
     FOO_BAR, "node2", "", {"node1"}, (U, POD)),
    ("Pod with one term: both matchFields and matchExpressions match",
     make_pod(required({"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "bar")]})),
     FOO_BAR, "node1", "", {"node1"}, None),
    ("Pod with two terms: both matchFields and matchExpressions do not match",
     make_pod(required({"matchFields": [name_in("node1")]},
                       {"matchExpressions": [expr("foo", "In", "not-match-to-bar")]})), FOO_BAR, "node2", "", None,
     (U, POD)),
    ("Pod with two terms of node.Name affinity",
     make_pod(required({"matchFields": [name_in("node1")]}, {"matchFields": [name_in("node2")]})), {}, "node2", "",
     {"node1", "node2"}, None),
    ("Pod with two conflicting mach field requirements",
     make_pod(required({"matchFields": [name_in("node1"), name_in("node2")]})), FOO_BAR, "node2", "",
     (U, CONFLICT), (U, POD)),
    ("Matches added affinity and Pod's node affinity",
     make_pod(required({"matchExpressions": [expr("zone", "In", "foo")]})), {"zone": "foo"}, "node2",
     added({"matchFields": [name_in("node2")]}), None, None),
    ("Matches added affinity but not Pod's node affinity",
     make_pod(required({"matchExpressions": [expr("zone", "In", "bar")]})), {"zone": "foo"}, "node2",
     added({"matchFields": [name_in("node2")]}), None, (U, POD)),
    ("Doesn't match added affinity", make_pod(), {"zone": "foo"}, "node2",
     added({"matchExpressions": [expr("zone", "In", "bar")]}), None, (U, ENFORCED)),
]


def _verdict(status: Any) -> Any:
    if status is None:
        return None
    if isinstance(status, PreFilterResult):
        return set(status.node_names or ())
    assert isinstance(status, Status)
    return "skip" if status.is_skip() else (status.code, status.message())


@pytest.mark.parametrize(("pod", "labels", "node_name", "cfg", "want_pre_filter", "want_filter"),
                         [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter_table(pod: dict[str, Any], labels: dict[str, str], node_name: str, cfg: str, want_pre_filter: Any,
                      want_filter: Any) -> None:
    cluster = Cluster([node(node_name or "n", labels=labels)], load_config(cfg) if cfg else None)
    plugin = cluster.framework.plugins["NodeAffinity"]
    state, info = CycleState(), PodInfo(pod)
    assert _verdict(plugin.scheduler_pre_filter(state=state, pod=info)) == want_pre_filter
    rejected: dict[str, Status] = {}
    plugin.scheduler_filter(state=state, pod=info, nodes=cluster.snapshot.nodes, rejected=rejected)
    assert _verdict(next(iter(rejected.values()), None)) == want_filter


@pytest.mark.parametrize("pod", [make_pod(selector=FOO_BAR),
                                 make_pod(required({"matchExpressions": [expr("GPU", "Exists"),
                                                                         expr("GPU", "NotIn", "AMD", "INTER")]}))],
                         ids=["node selector", "node affinity"])
def test_filter_matches_even_if_pre_filter_is_not_called(pod: dict[str, Any]) -> None:
    cluster = Cluster([node("n", labels={"foo": "bar", "baz": "blah", **GPU})])
    rejected: dict[str, Status] = {}
    passed = cluster.framework.plugins["NodeAffinity"].scheduler_filter(
        state=CycleState(), pod=PodInfo(pod), nodes=cluster.snapshot.nodes, rejected=rejected)
    assert (len(passed), rejected) == (1, {})


BROKEN = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 2, "preference": {"matchExpressions": [expr("invalid key", "In", "bar")]}}]}}
BROKEN_MESSAGE = ("[0].matchExpressions[0].key: Invalid value: \"invalid key\": name part must consist of alphanumeric "
                  "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',"
                  "  or 'my.name',  or '123-abc', regex used for validation is "
                  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def test_pre_score_returns_an_error_when_the_pod_has_a_broken_affinity() -> None:
    """'PreScore returns error when an incoming Pod has a broken affinity': kube's AsStatus(err)."""
    cluster = Cluster([node("node1", labels=FOO_BAR)])
    plugin = cluster.framework.plugins["NodeAffinity"]
    status = plugin.scheduler_pre_score(state=CycleState(), pod=PodInfo(make_pod(BROKEN)),
                                        nodes=cluster.snapshot.nodes)
    assert isinstance(status, Status) and (status.code, status.message()) == (Code.ERROR, BROKEN_MESSAGE)
    with pytest.raises(ScoreError) as caught:  # the framework fails the cycle with it, as RunPreScorePlugins
        prioritize(cluster.framework, CycleState(), PodInfo(make_pod(BROKEN)), cluster.snapshot.nodes)
    assert str(caught.value) == f'running PreScore plugin "NodeAffinity": {BROKEN_MESSAGE}'


def test_score_without_pre_score_fails_the_same_way() -> None:
    """Score with PreScore disabled parses the terms itself (getPodPreferredNodeAffinity) and fails with them."""
    cfg = load_config("profiles:\n- plugins:\n    preScore:\n      disabled: [{name: NodeAffinity}]\n")
    cluster = Cluster([node("node1", labels=FOO_BAR)], cfg)
    with pytest.raises(ScoreError) as caught:
        prioritize(cluster.framework, CycleState(), PodInfo(make_pod(BROKEN)), cluster.snapshot.nodes)
    assert str(caught.value) == f'running Score plugins: plugin "NodeAffinity" failed with: {BROKEN_MESSAGE}'


def test_skip_is_returned_in_pre_score_when_node_affinity_is_nil() -> None:
    cluster = Cluster([node("node1", labels=FOO_BAR)])
    status = cluster.framework.plugins["NodeAffinity"].scheduler_pre_score(
        state=CycleState(), pod=PodInfo(make_pod()), nodes=cluster.snapshot.nodes)
    assert isinstance(status, Status) and status.is_skip()


def preferred(*terms: tuple[int, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": w, "preference": {"matchExpressions": e}} for w, e in terms]}}


AFFINITY1 = preferred((2, [expr("foo", "In", "bar")]))
AFFINITY2 = preferred((2, [expr("foo", "In", "bar")]), (4, [expr("key", "In", "value")]),
                      (5, [expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")]))
L1, L2, L3, L4 = FOO_BAR, {"key": "value"}, {"az": "az1"}, {"abc": "az11", "def": "az22"}
L5 = {"foo": "bar", "key": "value", "az": "az1"}


@pytest.mark.parametrize(("affinity", "nodes", "expected"), [
    (AFFINITY1, [("node1", L4), ("node2", L2), ("node3", L3)], [0, 0, 0]),
    (AFFINITY1, [("node1", L1), ("node2", L2), ("node3", L3)], [100, 0, 0]),
    (AFFINITY2, [("node1", L1), ("node5", L5), ("node2", L2)], [18, 100, 36]),
], ids=["no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
        "only node1 matches the preferred scheduling requirements of pod",
        "all nodes matches the preferred scheduling requirements of pod but with different priorities"])
def test_priority_table(affinity: dict[str, Any], nodes: list[tuple[str, dict[str, str]]],
                        expected: list[int]) -> None:
    cluster = Cluster([node(n, labels=labels) for n, labels in nodes])
    plugin, info, infos = cluster.framework.plugins["NodeAffinity"], PodInfo(make_pod(affinity)), cluster.snapshot.nodes
    state = CycleState()
    assert plugin.scheduler_pre_score(state=state, pod=info, nodes=infos) is None
    scores = plugin.scheduler_score(state=state, pod=info, nodes=infos)
    plugin.scheduler_normalize_score(scores=scores)
    assert scores == expected
