"""The Priority admission plugin: a pod's priority and preemption policy come from its PriorityClass, through
the official client, with kube-apiserver's messages and codes (plugin/pkg/admission/priority)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

pytestmark = pytest.mark.integration


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


def _class(name: str, value: int, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **extra}


def _create(v1: client.CoreV1Api, body: dict[str, Any]) -> dict[str, Any]:
    return json.loads(v1.create_namespaced_pod("default", body, _preload_content=False).read())  # type: ignore[no-any-return]


def _refused(v1: client.CoreV1Api, body: dict[str, Any]) -> tuple[int, str]:
    with pytest.raises(client.ApiException) as err:
        v1.create_namespaced_pod("default", body)
    status = json.loads(err.value.body)
    assert status["reason"] == "Forbidden" and status["details"]["kind"] == "pods"
    return err.value.status, status["message"]


def test_priority_resolved_from_the_class_the_default_class_or_zero(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    sched = client.SchedulingV1Api(kube_client)
    plain = _create(v1, _pod("plain"))["spec"]
    assert (plain["priority"], plain["preemptionPolicy"], plain.get("priorityClassName")) == \
        (0, "PreemptLowerPriority", None)
    sched.create_priority_class(_class("high", 1000, preemptionPolicy="Never"))
    high = _create(v1, _pod("high", priorityClassName="high"))["spec"]
    assert (high["priority"], high["preemptionPolicy"]) == (1000, "Never")
    critical = _create(v1, _pod("critical", priorityClassName="system-node-critical"))["spec"]
    assert critical["priority"] == 2000001000
    sched.create_priority_class(_class("low", -5, globalDefault=True))
    defaulted = _create(v1, _pod("defaulted"))["spec"]
    assert (defaulted["priority"], defaulted["priorityClassName"]) == (-5, "low")
    same = _create(v1, _pod("same", priorityClassName="high", priority=1000, preemptionPolicy="Never"))["spec"]
    assert same["priority"] == 1000, "a stated value equal to the class's is accepted"


def test_unknown_class_and_contradicting_values_are_forbidden(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    client.SchedulingV1Api(kube_client).create_priority_class(_class("high", 1000))
    assert _refused(v1, _pod("p", priorityClassName="nope")) == (
        403, 'pods "p" is forbidden: no PriorityClass with name nope was found')
    assert _refused(v1, _pod("p", priorityClassName="high", priority=7)) == (
        403, 'pods "p" is forbidden: the integer value of priority (7) must not be provided in pod spec; '
             "priority admission controller computed 1000 from the given PriorityClass name")
    assert _refused(v1, _pod("p", priority=3)) == (
        403, 'pods "p" is forbidden: the integer value of priority (3) must not be provided in pod spec; '
             "priority admission controller computed 0 from the given PriorityClass name")
    assert _refused(v1, _pod("p", priorityClassName="high", preemptionPolicy="Never")) == (
        403, 'pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod '
             "spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name")


def test_only_one_global_default_class(kube_client: client.ApiClient) -> None:
    sched = client.SchedulingV1Api(kube_client)
    sched.create_priority_class(_class("first", 10, globalDefault=True))
    with pytest.raises(client.ApiException) as err:
        sched.create_priority_class(_class("second", 20, globalDefault=True))
    assert err.value.status == 403
    assert json.loads(err.value.body)["message"] == (
        'priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass first is already marked as '
        "default. Only one default can exist")
