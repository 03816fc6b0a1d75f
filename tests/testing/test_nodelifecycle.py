"""``NodeLifecycle``: a node whose kubelet goes quiet turns Unknown, is tainted, and its pods stop being Ready."""

from __future__ import annotations

import datetime as dt
import itertools
import json
from typing import Any

import pytest
from kubernetes import client

from componentbase.testing import FakeClock, LoopbackAPIServer, NodeLifecycle, eventually

pytestmark = pytest.mark.integration

_BEATS = itertools.count(1)


def _stamp(micro: bool = False) -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")


def _read(call: Any, *args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(call(*args, _preload_content=False).data)
    return result


def _cond(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(c for c in obj["status"]["conditions"] if c["type"] == kind)


def _heartbeat(core: Any, status: str = "True") -> None:
    """A kubelet's status write; each a second after the last, so a test can tell them apart in no time."""
    at = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=next(_BEATS))).strftime("%Y-%m-%dT%H:%M:%SZ")
    node = _read(core.read_node, "n1")
    node.setdefault("status", {})["conditions"] = [{"type": "Ready", "status": status, "reason": "KubeletReady",
                                                    "lastHeartbeatTime": at, "lastTransitionTime": at}]
    core.replace_node_status("n1", node, _preload_content=False)


@pytest.fixture
def cluster(kube_client: Any) -> tuple[Any, Any]:
    core, coordination = client.CoreV1Api(kube_client), client.CoordinationV1Api(kube_client)
    core.create_node({"metadata": {"name": "n1"}}, _preload_content=False)
    _heartbeat(core)
    coordination.create_namespaced_lease("kube-node-lease", {
        "metadata": {"name": "n1"}, "spec": {"holderIdentity": "n1", "leaseDurationSeconds": 40,
                                             "renewTime": _stamp(micro=True)}}, _preload_content=False)
    for name in ("a", "b"):
        core.create_namespaced_pod("default", {"metadata": {"name": name}, "spec": {
            "nodeName": "n1", "containers": [{"name": "c", "image": "x"}]}}, _preload_content=False)
        pod = _read(core.read_namespaced_pod, name, "default")
        pod["status"] = {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": _stamp()}]}
        core.replace_namespaced_pod_status(name, "default", pod, _preload_content=False)
    return core, coordination


def test_a_quiet_node_turns_unknown_is_tainted_and_its_pods_stop_being_ready(
        kube_apiserver: LoopbackAPIServer, cluster: tuple[Any, Any]) -> None:
    core, _ = cluster
    clock = FakeClock()  # the controller's own pace is real (monitor_period); its sense of time is the test's
    with NodeLifecycle(kube_apiserver, grace_period=40, monitor_period=0.05, clock=clock) as lifecycle:
        lifecycle.sync()  # the heartbeat is seen now, at the fake clock's start
        clock.step(41)
        node = eventually(lambda: (n := _read(core.read_node, "n1")) and _cond(n, "Ready")["status"] == "Unknown"
                          and n.get("spec", {}).get("taints") and n, 10, what="the node to turn Unknown")
        ready = _cond(node, "Ready")
        assert (ready["reason"], ready["message"]) == ("NodeStatusUnknown", "Kubelet stopped posting node status.")
        pressure = _cond(node, "MemoryPressure")
        assert (pressure["status"], pressure["reason"]) == ("Unknown", "NodeStatusNeverUpdated")
        assert [(t["key"], t["effect"]) for t in node["spec"]["taints"]] == [
            ("node.kubernetes.io/unreachable", "NoSchedule"), ("node.kubernetes.io/unreachable", "NoExecute")]
        eventually(lambda: all(_cond(_read(core.read_namespaced_pod, name, "default"), "Ready")["status"] == "False"
                               for name in ("a", "b")), 10, what="the pods to stop being Ready")
        assert _read(core.read_namespaced_pod, "a", "default")["status"]["phase"] == "Running"

        _heartbeat(core)  # the kubelet is back: the taints go; the pods' Ready is the kubelet's to set again
        eventually(lambda: not _read(core.read_node, "n1").get("spec", {}).get("taints"), 10,
                   what="the taints to be removed")
        assert _cond(_read(core.read_namespaced_pod, "a", "default"), "Ready")["status"] == "False"

        _heartbeat(core, "False")  # a kubelet that says it is not ready: not-ready taints
        eventually(lambda: [t["key"] for t in _read(core.read_node, "n1").get("spec", {}).get("taints") or ()]
                   == ["node.kubernetes.io/not-ready"] * 2, 10, what="the not-ready taints")


def test_a_node_whose_lease_is_renewed_stays_ready_and_one_whose_lease_stops_does_not(
        kube_apiserver: LoopbackAPIServer, cluster: tuple[Any, Any]) -> None:
    core, coordination = cluster
    clock = FakeClock()
    lifecycle = NodeLifecycle(kube_apiserver, grace_period=40, clock=clock)
    lifecycle.sync()
    for _ in range(3):  # 30 s apart: each renewal comes within the grace period
        clock.step(30)
        lease = _read(coordination.read_namespaced_lease, "n1", "kube-node-lease")
        lease["spec"]["renewTime"] = _stamp(micro=True)
        coordination.replace_namespaced_lease("n1", "kube-node-lease", lease, _preload_content=False)
        lifecycle.sync()
    assert _cond(_read(core.read_node, "n1"), "Ready")["status"] == "True"
    assert _cond(_read(core.read_namespaced_pod, "a", "default"), "Ready")["status"] == "True"
    clock.step(39)
    lifecycle.sync()
    assert _cond(_read(core.read_node, "n1"), "Ready")["status"] == "True"
    clock.step(2)
    lifecycle.sync()
    assert _cond(_read(core.read_node, "n1"), "Ready")["status"] == "Unknown"
    assert _cond(_read(core.read_namespaced_pod, "a", "default"), "Ready")["status"] == "False"
