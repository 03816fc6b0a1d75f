"""Failures between the scheduler and the API: refused bindings, a pod bound by someone else, a flaky server."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from kubernetes.client.exceptions import ApiException

from componentbase.testing import LoopbackAPIServer, eventually
from tests.scheduler.builders import node, pod

from .conftest import Cluster, Running

pytestmark = pytest.mark.process


def test_refused_bindings_are_retried_with_backoff_until_they_succeed(
        kube_apiserver: LoopbackAPIServer, cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    for i in range(2):
        cluster.create(node(f"n{i}", cpu="2", memory="4Gi"))
    for i in range(6):
        cluster.create(pod(f"p{i}", cpu="600m"))  # 3 fit per node: 6 fill both, any double count overcommits
    kube_apiserver.faults.set(error_rate=1.0, error_code=500, verbs=["create"], resources=["pods"])
    start_scheduler()
    [event] = cluster.wait_events("p0", "FailedScheduling")
    assert event["message"].startswith('running Bind plugin "DefaultBinder": ')
    assert "Internal error" in event["message"]
    eventually(lambda: (cluster.condition("p0") or {}).get("reason") == "SchedulerError", what="condition")
    assert cluster.bound() == {}
    time.sleep(1.0)  # several rounds of backoff with every binding refused
    kube_apiserver.faults.clear()
    eventually(lambda: len(cluster.bound()) == 6, what="all pods bound once the API accepts bindings")
    cluster.assert_no_overcommit()
    assert all(cluster.condition(f"p{i}")["status"] == "True" for i in range(6))  # type: ignore[index]


def test_a_pod_bound_by_someone_else_is_forgotten_where_it_was_assumed(
        kube_apiserver: LoopbackAPIServer, cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    cluster.create(node("a", cpu="1", memory="2Gi"))
    start_scheduler()
    kube_apiserver.faults.set(stall=10, path="/api/v1/namespaces/default/pods/x/binding")
    cluster.create(pod("x", cpu="1"))
    eventually(lambda: kube_apiserver.faults.counts.get("stall"), what="the scheduler binding x (stalled)")
    # x is assumed on a, its only node; someone else binds it to b meanwhile.
    cluster.create(node("b", cpu="1", memory="2Gi"))
    cluster.v1.create_namespaced_binding("default", {
        "metadata": {"name": "x"}, "target": {"kind": "Node", "name": "b"}}, _preload_content=False).read()
    kube_apiserver.faults.clear()  # the scheduler's binding now fails: x is already assigned
    assert "already assigned" in cluster.wait_events("x", "FailedScheduling")[0]["message"]
    cluster.create(pod("y", cpu="1"))  # fits on a only if the assumed x was forgotten there
    eventually(lambda: cluster.node_of("y") == "a", what="y bound to a")
    assert cluster.node_of("x") == "b"
    assert cluster.condition("x")["status"] == "True"  # type: ignore[index]
    cluster.assert_no_overcommit()


def _create_retrying(cluster: Cluster, obj: dict[str, object]) -> None:
    deadline = time.monotonic() + 10
    while True:
        try:
            cluster.create(obj)
            return
        except ApiException as e:
            if e.status == 409:  # an earlier try did create it
                return
            if time.monotonic() > deadline:
                raise
        except Exception:  # a dropped connection
            if time.monotonic() > deadline:
                raise


def test_a_flaky_api_for_a_while_loses_no_pod(kube_apiserver: LoopbackAPIServer, cluster: Cluster,
                                              start_scheduler: Callable[..., Running]) -> None:
    for i in range(4):
        cluster.create(node(f"n{i}", cpu="4", memory="8Gi"))
    for i in range(20):
        cluster.create(pod(f"early-{i}", cpu="300m"))
    start_scheduler()
    kube_apiserver.faults.set(error_rate=0.3, drop_rate=0.05, watch_close_after=0.5)
    for i in range(20):
        _create_retrying(cluster, pod(f"late-{i}", cpu="300m"))
    time.sleep(1.5)
    kube_apiserver.faults.clear()
    eventually(lambda: len(cluster.bound()) == 40, timeout=20, what="all 40 pods bound after the faults")
    cluster.assert_no_overcommit()
    pods = cluster.pods()
    assert all(cluster.condition(name)["status"] == "True" for name in pods)  # type: ignore[index]
