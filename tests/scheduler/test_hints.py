"""Each default plugin's queueing hints, case by case from kube-scheduler's own hint test tables
(``TestIsSchedulableAfter...`` in each plugin's tests): which change retries a pod the plugin rejected."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from componentbase_examples.scheduler import events as ev
from componentbase_examples.scheduler.events import ActionType as A
from componentbase_examples.scheduler.events import QueueingHint
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.queueing import QueueingHints, Strategy

from .builders import Cluster, load_config, node, pod, taint

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
HINTS = QueueingHints.from_frameworks(Cluster([]).frameworks)


def hint(plugin: str, target: Obj, event: ev.ClusterEvent, old: Obj | None, new: Obj | None,
         hints: QueueingHints = HINTS) -> QueueingHint:
    """What ``plugin``'s hints answer for ``event`` about a pod it rejected (QUEUE_SKIP if none matches)."""
    strategy = hints.worth_requeuing(PodInfo(target), {plugin}, event, old, new)
    return QUEUE if strategy is Strategy.AFTER_BACKOFF else SKIP


def uid(obj: Obj, value: str) -> Obj:
    obj["metadata"]["uid"] = value
    return obj


def labelled(obj: Obj, **labels: str) -> Obj:
    obj = copy.deepcopy(obj)
    obj["metadata"]["labels"] = dict(labels)
    return obj


NODE_ADD, POD_DELETE = ev.EVENT_NODE_ADD, ev.EVENT_ASSIGNED_POD_DELETE


def node_update(old: Obj, new: Obj) -> list[ev.ClusterEvent]:
    return ev.node_events(old, new)


def answer(plugin: str, target: Obj, old: Obj, new: Obj) -> QueueingHint:
    """QUEUE if any of the update's events gets QUEUE, as the queue asks them one by one."""
    events = ev.node_events(old, new) if new["kind"] == "Node" else ev.pod_events(old, new)
    return QUEUE if any(hint(plugin, target, e, old, new) is QUEUE for e in events) else SKIP


# NodeResourcesFit

FIT_TARGET = uid(pod("target", cpu="2", memory="1Gi"), "t")


@pytest.mark.parametrize(("case", "event", "old", "new", "want"), [
    ("queue-on-deleted", POD_DELETE, pod("bound", nodeName="n1"), None, QUEUE),
    ("skip-queue-on-unscheduled-pod-deleted", POD_DELETE, pod("pending"), None, SKIP),
    ("queue-on-node-add-when-node-fits", NODE_ADD, None, node("n1", cpu="4"), QUEUE),
    ("skip-queue-on-node-add-when-node-insufficient-cpu", NODE_ADD, None, node("n1", cpu="1"), SKIP),
    ("skip-queue-on-node-add-when-node-allows-no-pods", NODE_ADD, None, node("n1", cpu="4", pods="0"), SKIP),
])
def test_node_resources_fit_add_and_delete(case: str, event: ev.ClusterEvent, old: Obj | None, new: Obj | None,
                                           want: QueueingHint) -> None:
    assert hint("NodeResourcesFit", FIT_TARGET, event, old, new) is want, case


@pytest.mark.parametrize(("case", "old", "new", "want"), [
    ("queue-on-node-changes-when-node-fits", node("n1", cpu="1"), node("n1", cpu="4"), QUEUE),
    ("skip-queue-on-node-changes-from-suitable-to-unsuitable", node("n1", cpu="4"), node("n1", cpu="1"), SKIP),
    ("skip-queue-on-node-unrelated-changes", node("n1", cpu="4"), labelled(node("n1", cpu="4"), a="b"), SKIP),
    ("skip-queue-on-growth-of-a-resource-the-pod-does-not-request",
     node("n1", cpu="4", memory="4Gi"), node("n1", cpu="4", memory="4Gi", **{"example.com/gpu": "2"}), SKIP),
    ("queue-on-more-pods-allowed", node("n1", cpu="4", pods="1"), node("n1", cpu="4", pods="10"), QUEUE),
])
def test_node_resources_fit_node_updates(case: str, old: Obj, new: Obj, want: QueueingHint) -> None:
    assert answer("NodeResourcesFit", FIT_TARGET, old, new) is want, case


def test_node_resources_fit_scale_down() -> None:
    other = pod("other", cpu="3", memory="1Gi", nodeName="n1")
    shrunk_cpu = copy.deepcopy(other)
    shrunk_cpu["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1"
    [event] = ev.pod_events(other, shrunk_cpu)
    assert event.action == A.UPDATE_POD_SCALE_DOWN and event.resource == ev.ASSIGNED_POD
    assert hint("NodeResourcesFit", FIT_TARGET, event, other, shrunk_cpu) is QUEUE
    cpu_only_target = pod("target", cpu="2", memory=None)
    shrunk_memory = copy.deepcopy(other)
    shrunk_memory["spec"]["containers"][0]["resources"]["requests"]["memory"] = "512Mi"
    assert hint("NodeResourcesFit", cpu_only_target, event, other, shrunk_memory) is SKIP  # other resource
    pending = copy.deepcopy(other)
    del pending["spec"]["nodeName"]
    shrunk_pending = copy.deepcopy(shrunk_cpu)
    del shrunk_pending["spec"]["nodeName"]
    assert hint("NodeResourcesFit", FIT_TARGET, event, pending, shrunk_pending) is SKIP  # unscheduled pod


# NodeAffinity

AFFINITY_TARGET = pod("target", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "aaa", "operator": "In", "values": ["bbb"]}]}]}}})


@pytest.mark.parametrize(("case", "old", "new", "want"), [
    ("skip-queue-on-add", None, node("n1"), SKIP),
    ("queue-on-add", None, node("n1", labels={"aaa": "bbb"}), QUEUE),
    ("skip-unrelated-changes", node("n1"), node("n1", labels={"ccc": "ddd"}), SKIP),
    ("skip-unrelated-changes-on-labels", node("n1", labels={"aaa": "bbb"}),
     node("n1", labels={"aaa": "bbb", "ccc": "ddd"}), SKIP),
    ("queue-on-labels-change-makes-pod-schedulable", node("n1"), node("n1", labels={"aaa": "bbb"}), QUEUE),
])
def test_node_affinity(case: str, old: Obj | None, new: Obj, want: QueueingHint) -> None:
    got = hint("NodeAffinity", AFFINITY_TARGET, NODE_ADD, None, new) if old is None \
        else answer("NodeAffinity", AFFINITY_TARGET, old, new)
    assert got is want, case


def test_node_affinity_honours_the_profiles_added_affinity() -> None:
    cfg = load_config("""profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: zone, operator: In, values: [a]}]
""")
    hints = QueueingHints.from_frameworks(Cluster([], cfg).frameworks)
    target = pod("target")
    assert hint("NodeAffinity", target, NODE_ADD, None, node("n1"), hints) is SKIP
    assert hint("NodeAffinity", target, NODE_ADD, None, node("n1", labels={"zone": "a"}), hints) is QUEUE


# TaintToleration and NodeUnschedulable

TOLERATING = uid(pod("target", tolerations=[{"key": "foo", "operator": "Equal", "value": "bar",
                                             "effect": "NoSchedule"}]), "t")


@pytest.mark.parametrize(("case", "old", "new", "want"), [
    ("skip-queue-on-untoleratedtaint-node-added", None, node("n1", taints=[taint("other")]), SKIP),
    ("queue-on-toleratedtaint-node-added", None, node("n1", taints=[taint("foo", value="bar")]), QUEUE),
    ("queue-on-taint-change-to-tolerated", node("n1", taints=[taint("other")]),
     node("n1", taints=[taint("foo", value="bar")]), QUEUE),
    ("skip-unrelated-change-that-keeps-untolerated", node("n1", taints=[taint("other")]),
     node("n1", taints=[taint("other"), taint("foo", value="bar")]), SKIP),
    ("skip-prefer-no-schedule-only-change", node("n1"), node("n1", taints=[taint("x", "PreferNoSchedule")]), SKIP),
])
def test_taint_toleration(case: str, old: Obj | None, new: Obj, want: QueueingHint) -> None:
    got = hint("TaintToleration", TOLERATING, NODE_ADD, None, new) if old is None \
        else answer("TaintToleration", TOLERATING, old, new)
    assert got is want, case


def test_taint_toleration_queues_on_the_targets_own_new_toleration_only() -> None:
    before = uid(pod("target"), "t")
    after = copy.deepcopy(before)
    after["spec"]["tolerations"] = [{"key": "foo", "operator": "Exists"}]
    [event] = ev.pod_events(before, after)
    assert event.action == A.UPDATE_POD_TOLERATION
    assert hint("TaintToleration", before, event, before, after) is QUEUE
    other = uid(copy.deepcopy(after), "someone-else")
    assert hint("TaintToleration", before, event, before, other) is SKIP


@pytest.mark.parametrize(("case", "old", "new", "want"), [
    ("skip-queue-on-unschedulable-node-added", None, node("n1", unschedulable=True), SKIP),
    ("queue-on-schedulable-node-added", None, node("n1"), QUEUE),
    ("skip-unrelated-change", node("n1"), node("n1", taints=[taint("x")]), SKIP),
    ("queue-on-unschedulable-field-change", node("n1", unschedulable=True), node("n1"), QUEUE),
])
def test_node_unschedulable(case: str, old: Obj | None, new: Obj, want: QueueingHint) -> None:
    target = pod("target")
    got = hint("NodeUnschedulable", target, NODE_ADD, None, new) if old is None \
        else answer("NodeUnschedulable", target, old, new)
    assert got is want, case


# NodePorts

PORT_TARGET = pod("target", ports=[{"containerPort": 80, "hostPort": 8080}])


@pytest.mark.parametrize(("case", "deleted", "want"), [
    ("skip-queue-on-unscheduled", pod("x", ports=[{"containerPort": 80, "hostPort": 8080}]), SKIP),
    ("skip-queue-on-non-hostport", pod("x", nodeName="n1", ports=[{"containerPort": 80}]), SKIP),
    ("skip-queue-on-other-hostport", pod("x", nodeName="n1", ports=[{"containerPort": 80, "hostPort": 9090}]),
     SKIP),
    ("queue-on-hostport", pod("x", nodeName="n1", ports=[{"containerPort": 80, "hostPort": 8080}]), QUEUE),
])
def test_node_ports(case: str, deleted: Obj, want: QueueingHint) -> None:
    assert hint("NodePorts", PORT_TARGET, POD_DELETE, deleted, None) is want, case


# PodTopologySpread

SPREAD_TARGET = pod("target", topologySpreadConstraints=[{
    "maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"app": "web"}}}])
WEB = labelled(pod("w", nodeName="n1"), app="web")
OTHER = labelled(pod("o", nodeName="n1"), app="db")


@pytest.mark.parametrize(("case", "event", "old", "new", "want"), [
    ("add pod with labels match topologySpreadConstraints selector", ev.EVENT_ASSIGNED_POD_ADD, None, WEB, QUEUE),
    ("add un-scheduled pod", ev.EVENT_ASSIGNED_POD_ADD, None, labelled(pod("u"), app="web"), SKIP),
    ("add pod with different namespace", ev.EVENT_ASSIGNED_POD_ADD, None,
     labelled(pod("w", namespace="ns2", nodeName="n1"), app="web"), SKIP),
    ("add pod with labels don't match topologySpreadConstraints selector", ev.EVENT_ASSIGNED_POD_ADD, None, OTHER,
     SKIP),
    ("delete pod with labels that match topologySpreadConstraints selector", POD_DELETE, WEB, None, QUEUE),
    ("delete pod with labels that don't match topologySpreadConstraints selector", POD_DELETE, OTHER, None, SKIP),
])
def test_pod_topology_spread_pods(case: str, event: ev.ClusterEvent, old: Obj | None, new: Obj | None,
                                  want: QueueingHint) -> None:
    assert hint("PodTopologySpread", SPREAD_TARGET, event, old, new) is want, case


@pytest.mark.parametrize(("case", "old", "new", "want"), [
    ("update pod's non-related label", labelled(WEB, app="web", x="1"), labelled(WEB, app="web", x="2"), QUEUE),
    ("add pod's label that matches topologySpreadConstraints selector", OTHER, labelled(OTHER, app="web"), QUEUE),
    ("update a label of a pod no constraint counts", labelled(OTHER, x="1"), labelled(OTHER, x="2"), SKIP),
])
def test_pod_topology_spread_relabels(case: str, old: Obj, new: Obj, want: QueueingHint) -> None:
    assert answer("PodTopologySpread", SPREAD_TARGET, old, new) is want, case


@pytest.mark.parametrize(("case", "event", "old", "new", "want"), [
    ("add node with valid topologyKey", NODE_ADD, None, node("n1", labels={"zone": "a"}), QUEUE),
    ("add node without topologyKey", NODE_ADD, None, node("n1"), SKIP),
    ("delete node with valid topologyKey", ev.EVENT_NODE_DELETE, node("n1", labels={"zone": "a"}), None, QUEUE),
    ("delete node without topologyKey", ev.EVENT_NODE_DELETE, node("n1"), None, SKIP),
])
def test_pod_topology_spread_nodes(case: str, event: ev.ClusterEvent, old: Obj | None, new: Obj | None,
                                   want: QueueingHint) -> None:
    assert hint("PodTopologySpread", SPREAD_TARGET, event, old, new) is want, case


@pytest.mark.parametrize(("case", "old", "new", "want"), [
    ("update node with unrelated labels", node("n1", labels={"zone": "a"}),
     node("n1", labels={"zone": "a", "x": "y"}), SKIP),
    ("update node's topologyKey value", node("n1", labels={"zone": "a"}), node("n1", labels={"zone": "b"}), QUEUE),
    ("update node to have the topologyKey", node("n1"), node("n1", labels={"zone": "a"}), QUEUE),
    ("update node's taints when nodeTaintsPolicy is Ignore", node("n1", labels={"zone": "a"}),
     node("n1", labels={"zone": "a"}, taints=[taint("x")]), SKIP),
])
def test_pod_topology_spread_node_updates(case: str, old: Obj, new: Obj, want: QueueingHint) -> None:
    assert answer("PodTopologySpread", SPREAD_TARGET, old, new) is want, case


# InterPodAffinity

def _term(key: str, value: str) -> dict[str, Any]:
    return {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {key: value}}, "topologyKey": "zone"}]}


AFFINE = pod("target", affinity={"podAffinity": _term("app", "db")})
ANTI = pod("target", affinity={"podAntiAffinity": _term("app", "db")})
DB = labelled(pod("db", nodeName="n1"), app="db")


@pytest.mark.parametrize(("case", "target", "event", "old", "new", "want"), [
    ("add a pod which matches the pod affinity", AFFINE, ev.EVENT_ASSIGNED_POD_ADD, None, DB, QUEUE),
    ("add an un-scheduled pod", AFFINE, ev.EVENT_ASSIGNED_POD_ADD, None, labelled(pod("db"), app="db"), SKIP),
    ("add a pod which doesn't match the pod affinity", AFFINE, ev.EVENT_ASSIGNED_POD_ADD, None,
     labelled(DB, app="web"), SKIP),
    ("delete a pod which matches the pod anti-affinity", ANTI, POD_DELETE, DB, None, QUEUE),
    ("delete a pod which doesn't match the pod anti-affinity", ANTI, POD_DELETE, labelled(DB, app="web"), None,
     SKIP),
    ("delete a pod whose own anti-affinity kept the target out", labelled(pod("target"), app="web"), POD_DELETE,
     labelled(pod("guard", nodeName="n1", affinity={"podAntiAffinity": _term("app", "web")}), app="guard"), None,
     QUEUE),
])
def test_inter_pod_affinity_pods(case: str, target: Obj, event: ev.ClusterEvent, old: Obj | None,
                                 new: Obj | None, want: QueueingHint) -> None:
    assert hint("InterPodAffinity", target, event, old, new) is want, case


@pytest.mark.parametrize(("case", "target", "old", "new", "want"), [
    ("update a pod from non-match to match pod affinity", AFFINE, labelled(DB, app="web"), DB, QUEUE),
    ("update a pod from match to non-match the pod anti-affinity", ANTI, DB, labelled(DB, app="web"), QUEUE),
    ("update a pod's unrelated label", ANTI, labelled(DB, app="web", x="1"), labelled(DB, app="web", x="2"), SKIP),
])
def test_inter_pod_affinity_relabels(case: str, target: Obj, old: Obj, new: Obj, want: QueueingHint) -> None:
    assert answer("InterPodAffinity", target, old, new) is want, case


@pytest.mark.parametrize(("case", "old", "new", "want"), [
    ("add a new node with matched pod affinity topologyKey", None, node("n1", labels={"zone": "a"}), QUEUE),
    ("add a new node without matched topologyKey", None, node("n1", labels={"region": "r"}), SKIP),
    ("update node label but not topologyKey", node("n1", labels={"zone": "a"}),
     node("n1", labels={"zone": "a", "x": "y"}), SKIP),
    ("update node with different affinity topologyKey value", node("n1", labels={"zone": "a"}),
     node("n1", labels={"zone": "b"}), QUEUE),
])
def test_inter_pod_affinity_nodes(case: str, old: Obj | None, new: Obj, want: QueueingHint) -> None:
    got = hint("InterPodAffinity", AFFINE, NODE_ADD, None, new) if old is None \
        else answer("InterPodAffinity", AFFINE, old, new)
    assert got is want, case


# events and matching


def test_node_heartbeats_are_no_event_and_uncordoning_is_a_taint_change() -> None:
    n = node("n1")
    beat = copy.deepcopy(n)
    beat["status"]["conditions"] = []
    assert ev.node_events(n, beat) == []
    assert [e.action for e in ev.node_events(node("n1", unschedulable=True), n)] == [A.UPDATE_NODE_TAINT]
    assert ev.node_events(n, node("n1", unschedulable=True)) == []  # cordoning never helps a pod


def test_registered_events_match_by_resource_and_action_bits() -> None:
    registered = ev.ClusterEvent(ev.POD, A.DELETE | A.UPDATE_POD_SCALE_DOWN)
    assert registered.matches(ev.EVENT_ASSIGNED_POD_DELETE)
    assert not registered.matches(ev.EVENT_ASSIGNED_POD_ADD)
    assert not registered.matches(ev.EVENT_NODE_DELETE)
    assert ev.ClusterEvent(ev.NODE, A.UPDATE_NODE_LABEL).matches(ev.ClusterEvent(ev.NODE, A.UPDATE))
    assert ev.WILDCARD_EVENT.matches(ev.EVENT_NODE_ADD)
    assert ev.EVENT_NODE_ADD.label == "NodeAdd" and ev.EVENT_UNSCHEDULABLE_TIMEOUT.label == "UnschedulableTimeout"


def test_a_plugin_without_registered_events_is_asked_about_every_event() -> None:
    import componentbase
    from componentbase_examples.scheduler.framework import Code, Status

    class Picky:
        name = "Picky"

        @componentbase.hookimpl
        def scheduler_filter(self, pod: Any, nodes: list[Any], rejected: dict[str, Status]) -> list[Any]:
            for n in nodes:
                rejected[n.name] = Status(Code.UNSCHEDULABLE, "no", plugin=self.name)
            return []

    cfg = load_config("profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
                      "    filter:\n      enabled: [{name: Picky}]\n")
    hints = QueueingHints.from_frameworks(Cluster([], cfg, plugins=(Picky(),)).frameworks)
    assert hint("Picky", pod("p"), ev.EVENT_NODE_DELETE, node("n1"), None, hints) is QUEUE


def test_an_event_without_objects_queues_as_kube_does_when_a_hint_cannot_judge() -> None:
    assert hint("NodeResourcesFit", FIT_TARGET, POD_DELETE, None, None) is QUEUE
