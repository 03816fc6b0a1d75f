"""Preemption against the loopback API server, through the official client: what a user sees of
DefaultPreemption (the victim's condition, event and deletion, the preemptor's nomination and binding),
PodDisruptionBudgets respected, ``preemptionPolicy: Never`` honoured."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from componentbase.testing import eventually
from tests.scheduler.builders import node, pod

from .conftest import Cluster, Running

pytestmark = pytest.mark.process


def _classes(cluster: Cluster, **values: int | tuple[int, str]) -> None:
    api = client.SchedulingV1Api(cluster.api)
    for name, value in values.items():
        number, policy = value if isinstance(value, tuple) else (value, "PreemptLowerPriority")
        api.create_priority_class({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                   "metadata": {"name": name}, "value": number, "preemptionPolicy": policy})


def _pod(name: str, priority_class: str, cpu: str = "1", **meta: Any) -> dict[str, Any]:
    p = pod(name, cpu=cpu, memory="64Mi", priorityClassName=priority_class)
    p["metadata"].update(meta)
    return p


def _get(cluster: Cluster, name: str) -> dict[str, Any] | None:
    return cluster.pods().get(name)


def _disruption(p: dict[str, Any] | None) -> dict[str, Any] | None:
    for c in ((p or {}).get("status") or {}).get("conditions") or ():
        if c["type"] == "DisruptionTarget":
            return c  # type: ignore[no-any-return]
    return None


def test_a_high_priority_pod_preempts_a_low_one_and_binds_once_it_is_gone(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    _classes(cluster, low=10, high=1000)
    cluster.create(node("n1", cpu="1", memory="2Gi"))
    cluster.create(_pod("victim", "low"))  # the default 30 s grace period: it stays terminating until "kubelet"
    start_scheduler()
    eventually(lambda: cluster.node_of("victim") == "n1", what="the victim bound")
    preemptor = cluster.create(_pod("preemptor", "high"))
    assert preemptor["spec"]["priority"] == 1000, "the API server resolved the PriorityClass"

    eventually(lambda: (_get(cluster, "victim") or {}).get("metadata", {}).get("deletionTimestamp"),
               what="the victim deleted gracefully")
    victim = _get(cluster, "victim")
    condition = _disruption(victim)
    assert condition is not None, "the DisruptionTarget condition is written before the deletion"
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "True", "PreemptionByScheduler", "default-scheduler: preempting to accommodate a higher priority pod")
    eventually(lambda: (_get(cluster, "preemptor") or {})["status"].get("nominatedNodeName") == "n1",
               what="the preemptor nominated to n1")
    [event] = cluster.wait_events("victim", "Preempted")
    assert (event["type"], event["action"], event["message"]) == (
        "Normal", "Preempting", f"Preempted by pod {preemptor['metadata']['uid']} on node n1")
    assert event["related"]["name"] == "preemptor"
    failed = cluster.wait_events("preemptor", "FailedScheduling")
    assert failed[0]["message"] == "0/1 nodes are available: 1 Insufficient cpu."

    cluster.create(_pod("latecomer", "low"))  # must not take the room the preemption makes
    cluster.delete_pod("victim")  # the kubelet's part: the victim's containers stopped
    eventually(lambda: cluster.node_of("preemptor") == "n1", what="the preemptor bound where it preempted")
    assert cluster.node_of("latecomer") == ""
    cluster.assert_no_overcommit()


def test_the_node_whose_victims_violate_no_budget_is_chosen(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    _classes(cluster, low=10, mid=100, high=1000)
    for name in ("n1", "n2"):
        cluster.create(node(name, cpu="1", memory="2Gi"))
    cluster.create(_pod("guarded", "low", labels={"app": "db"}))
    cluster.create(_pod("plain", "mid"))
    policy = client.PolicyV1Api(cluster.api)
    policy.create_namespaced_pod_disruption_budget("default", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}})
    start_scheduler()
    eventually(lambda: len(cluster.bound()) == 2, what="both low pods bound")
    cluster.create(_pod("preemptor", "high"))
    # Without the budget, the node of the lower victim ("guarded", priority 10) would be chosen.
    eventually(lambda: (_get(cluster, "plain") or {}).get("metadata", {}).get("deletionTimestamp"),
               what="the victim the budget does not protect deleted")
    nominated = (_get(cluster, "preemptor") or {})["status"].get("nominatedNodeName")
    assert nominated in (None, cluster.node_of("plain"))
    guarded = _get(cluster, "guarded")
    assert guarded is not None and not guarded["metadata"].get("deletionTimestamp")
    assert _disruption(guarded) is None


def test_preemption_policy_never_waits_without_evicting(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    _classes(cluster, low=10, polite=(1000, "Never"))
    cluster.create(node("n1", cpu="1", memory="2Gi"))
    cluster.create(_pod("resident", "low"))
    start_scheduler()
    eventually(lambda: cluster.node_of("resident") == "n1", what="the resident bound")
    created = cluster.create(_pod("polite", "polite"))
    assert created["spec"]["preemptionPolicy"] == "Never"
    [event] = cluster.wait_events("polite", "FailedScheduling")
    assert event["message"] == ("0/1 nodes are available: 1 Insufficient cpu. "
                                "preemption: not eligible due to preemptionPolicy=Never..")
    resident = _get(cluster, "resident")
    assert resident is not None and not resident["metadata"].get("deletionTimestamp")
    assert "nominatedNodeName" not in (_get(cluster, "polite") or {})["status"]


def test_an_unknown_priority_class_is_refused_by_the_api_server(cluster: Cluster) -> None:
    with pytest.raises(client.ApiException) as err:
        cluster.create(_pod("p", "missing"))
    assert err.value.status == 403
    assert json.loads(err.value.body)["message"] == \
        'pods "p" is forbidden: no PriorityClass with name missing was found'
