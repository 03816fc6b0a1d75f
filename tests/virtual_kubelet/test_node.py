"""The node a virtual kubelet registers: labels, taint, capacity, conditions, and its Lease heartbeat."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

import componentbase
from componentbase.testing import eventually
from componentbase_examples.virtual_kubelet.providers.mock import MockConfig, MockProvider
from tests.virtual_kubelet.conftest import FAST, Kube, new_provider, ready

pytestmark = pytest.mark.integration


def test_node_registers_ready_with_labels_taint_capacity_and_kubelet_endpoint(kube: Kube, run_node: Any) -> None:
    run_node(new_provider(MockProvider), listen_port=10333)
    node = eventually(lambda: ready(kube.node()) and kube.node(), what="a Ready node")
    labels = node["metadata"]["labels"]
    assert {k: labels[k] for k in ("type", "kubernetes.io/role", "kubernetes.io/os", "kubernetes.io/hostname")} == {
        "type": "virtual-kubelet", "kubernetes.io/role": "agent", "kubernetes.io/os": "linux",
        "kubernetes.io/hostname": "vk"}
    assert node["spec"]["taints"] == [{"key": "virtual-kubelet.io/provider", "value": "mock", "effect": "NoSchedule"}]
    status = node["status"]
    assert status["capacity"] == status["allocatable"] == {"cpu": "20", "memory": "100Gi", "pods": "20"}
    assert status["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 10333}}
    assert status["nodeInfo"]["operatingSystem"] == "linux"
    assert status["nodeInfo"]["kubeletVersion"] == str(componentbase.util.version.get())
    assert status["nodeInfo"]["architecture"]
    kinds = {c["type"]: c for c in status["conditions"]}
    assert set(kinds) == {"Ready", "MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"}
    assert kinds["Ready"]["reason"] == "KubeletReady"
    assert all(kinds[k]["status"] == "False" for k in kinds if k != "Ready")


def test_capacity_from_provider_config_and_no_taint_when_disabled(kube: Kube, run_node: Any) -> None:
    config = MockConfig(cpu="3", memory="1Gi", pods="7", others={"nvidia.com/gpu": "2"})
    run_node(new_provider(MockProvider, config=config), taint_key=None)
    node = eventually(kube.node, what="the node")
    assert node["status"]["capacity"] == {"cpu": "3", "memory": "1Gi", "pods": "7", "nvidia.com/gpu": "2"}
    assert not node["spec"].get("taints")


def test_lease_is_owned_by_the_node_and_renewed(kube: Kube, run_node: Any) -> None:
    running = run_node(new_provider(MockProvider))
    lease = eventually(kube.lease, what="the node lease")
    node = kube.node()
    assert lease["spec"]["holderIdentity"] == "vk"
    assert lease["spec"]["leaseDurationSeconds"] == 1
    assert lease["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "vk", "uid": node["metadata"]["uid"]}]
    first = lease["spec"]["renewTime"]
    eventually(lambda: kube.lease()["spec"]["renewTime"] != first, 5, what="the lease to be renewed")
    # the count is taken once the write's answer is read, just after the server has it: not at the same instant
    eventually(lambda: running.node.node_controller.lease.renewals >= 2, 5, what="the renewal counted")


def test_failing_ping_stops_heartbeats_until_the_provider_recovers(kube: Kube, run_node: Any) -> None:
    class Flaky(MockProvider):
        healthy = True

        @componentbase.hookimpl
        def ping(self) -> None:
            if not self.healthy:
                raise ConnectionError("backend unreachable")

    provider = new_provider(Flaky)
    running = run_node(provider)
    nc = running.node.node_controller
    eventually(lambda: nc.lease.renewals >= 2, what="lease renewals")
    provider.impl.healthy = False  # type: ignore[attr-defined]
    eventually(lambda: nc.ping.error(running.stop_event) is not None, what="the ping to fail")
    renewals, updates = nc.lease.renewals, nc.status_updates
    stale = kube.lease()["spec"]["renewTime"]
    import time

    time.sleep(0.6)  # several renew and status intervals
    assert (nc.lease.renewals, nc.status_updates) == (renewals, updates)
    assert kube.lease()["spec"]["renewTime"] == stale
    provider.impl.healthy = True  # type: ignore[attr-defined]
    eventually(lambda: kube.lease()["spec"]["renewTime"] != stale, what="heartbeats to resume")


def test_takes_over_an_existing_node_keeping_what_others_put_there(kube: Kube, run_node: Any) -> None:
    kube.core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "vk", "labels": {"team": "infra", "type": "old"}},
        "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoExecute"},
                            {"key": "virtual-kubelet.io/provider", "value": "stale", "effect": "NoSchedule"}]}},
        _preload_content=False)
    uid = kube.node()["metadata"]["uid"]
    run_node(new_provider(MockProvider))
    node = eventually(lambda: ready(kube.node()) and kube.node(), what="a Ready node")
    assert node["metadata"]["uid"] == uid
    assert node["metadata"]["labels"]["team"] == "infra"
    assert node["metadata"]["labels"]["type"] == "virtual-kubelet"
    assert node["spec"]["taints"] == [{"key": "dedicated", "value": "gpu", "effect": "NoExecute"},
                                      {"key": "virtual-kubelet.io/provider", "value": "mock",
                                       "effect": "NoSchedule"}]


def test_clean_stop_marks_the_node_not_ready(kube: Kube, run_node: Any) -> None:
    running = run_node(new_provider(MockProvider))
    eventually(lambda: ready(kube.node()), what="a Ready node")
    running.stop()
    ready_cond = next(c for c in kube.node()["status"]["conditions"] if c["type"] == "Ready")
    assert (ready_cond["status"], ready_cond["reason"]) == ("False", "KubeletNotReady")


def test_node_deleted_while_running_is_registered_again(kube: Kube, run_node: Any) -> None:
    run_node(new_provider(MockProvider))
    old = eventually(kube.node, what="the node")["metadata"]["uid"]
    kube.core.delete_node("vk", _preload_content=False)
    node = eventually(lambda: (n := kube.node()) is not None and n["metadata"]["uid"] != old and n, 5,
                    what="the node to be registered again")
    assert node["spec"]["taints"][0]["key"] == "virtual-kubelet.io/provider"
    assert json.dumps(node).count("KubeletReady") == 1


def test_a_node_status_the_provider_pushes_is_written_at_once(kube: Kube, run_node: Any) -> None:
    """``notify_node_status``: the provider's change reaches the API without waiting for the minute's heartbeat."""

    class Growing(MockProvider):
        @componentbase.hookimpl
        def notify_node_status(self, callback: Any) -> None:
            self.node_changed = callback

    provider = new_provider(Growing)
    running = run_node(provider, timings=attrs.evolve(FAST, status_interval=3600))
    eventually(lambda: ready(kube.node()), what="a Ready node")
    node = running.node.node_controller.server_node()
    node["status"]["capacity"] = node["status"]["allocatable"] = {"cpu": "40", "memory": "100Gi", "pods": "20"}
    provider.impl.node_changed(node)  # type: ignore[attr-defined]
    eventually(lambda: kube.node()["status"]["capacity"]["cpu"] == "40", what="the pushed capacity")
