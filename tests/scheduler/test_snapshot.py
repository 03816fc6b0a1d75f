"""Pod requests as kube counts them, and the snapshot's accounting of bound and assumed pods."""

from __future__ import annotations

import pytest

from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import Snapshot

from .builders import Cluster, node, pod

pytestmark = pytest.mark.unit

MI = 2**20


def with_init(main: dict[str, str], inits: list[tuple[dict[str, str], bool]],
              overhead: dict[str, str] | None = None) -> PodInfo:
    spec = {"containers": [{"name": "a", "resources": {"requests": main}}],
            "initContainers": [{"name": f"i{n}", "resources": {"requests": r},
                                **({"restartPolicy": "Always"} if sidecar else {})}
                               for n, (r, sidecar) in enumerate(inits)]}
    if overhead:
        spec["overhead"] = overhead
    return PodInfo({"metadata": {"name": "p"}, "spec": spec})


def test_requests_take_the_largest_init_container_when_it_is_bigger() -> None:
    info = with_init({"cpu": "500m", "memory": "100Mi"}, [({"cpu": "2"}, False), ({"memory": "1Gi"}, False)])
    assert (info.cpu, info.memory) == (2000, 1024 * MI)
    small = with_init({"cpu": "500m"}, [({"cpu": "100m"}, False)])
    assert small.cpu == 500


def test_sidecars_add_to_the_containers_and_to_later_init_containers() -> None:
    # sidecar 200m runs alongside the 500m app: 700m; the init container after it needs 1 + 0.2 = 1.2 CPU
    info = with_init({"cpu": "500m"}, [({"cpu": "200m"}, True), ({"cpu": "1"}, False)])
    assert info.cpu == 1200
    info = with_init({"cpu": "500m"}, [({"cpu": "200m"}, True), ({"cpu": "100m"}, False)])
    assert info.cpu == 700


def test_overhead_is_added_and_non_zero_defaults_fill_missing_requests() -> None:
    info = with_init({"cpu": "1"}, [], overhead={"cpu": "250m", "memory": "64Mi"})
    assert (info.cpu, info.memory) == (1250, 64 * MI)
    assert info.nz_memory == 200 * MI + 64 * MI and info.nz_cpu == 1250
    empty = PodInfo(pod("e", cpu=None, memory=None))
    assert (empty.cpu, empty.memory, empty.nz_cpu, empty.nz_memory) == (0, 0, 100, 200 * MI)


def test_extended_resources_and_host_ports_are_read() -> None:
    p = pod("g", ports=[{"containerPort": 80, "hostPort": 8080}, {"containerPort": 9, "hostPort": 53,
                                                                   "protocol": "UDP", "hostIP": "10.0.0.1"}])
    p["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "2"
    info = PodInfo(p)
    assert info.scalar == {"example.com/gpu": 2}
    assert info.host_ports == (("0.0.0.0", "TCP", 8080), ("10.0.0.1", "UDP", 53))


def test_bound_and_assumed_pods_count_against_their_node() -> None:
    snap = Snapshot([node("n1", cpu="2")], [dict(pod("bound", cpu="1"), spec={**pod("b")["spec"], "nodeName": "n1"})])
    n1 = snap.get("n1")
    assert n1 is not None and len(n1.pods) == 1
    assumed = PodInfo(pod("assumed", cpu="500m", memory="1Gi"))
    snap.assume_pod(assumed, "n1")
    assert snap.is_assumed(assumed.key) and n1.req_memory == 1024 * MI + 128 * MI and len(n1.pods) == 2
    snap.forget_pod(assumed.key)
    assert not snap.is_assumed(assumed.key) and len(n1.pods) == 1 and n1.req_memory == 128 * MI


def test_the_informer_seeing_the_bound_pod_confirms_the_assumption() -> None:
    snap = Snapshot([node("n1"), node("n2")])
    p = pod("web", cpu="1")
    info = PodInfo(p)
    snap.assume_pod(info, "n1")
    bound = dict(p, spec={**p["spec"], "nodeName": "n1"})
    snap.add_pod(bound)
    assert not snap.is_assumed(info.key) and snap.node_of(info.key) == "n1"
    snap.forget_pod(info.key)  # too late to forget: it is bound
    assert snap.node_of(info.key) == "n1" and snap.get("n1").req_cpu == 1000  # type: ignore[union-attr]
    moved = dict(p, spec={**p["spec"], "nodeName": "n2"})
    snap.update_pod(moved)
    assert snap.get("n1").req_cpu == 0 and snap.get("n2").req_cpu == 1000  # type: ignore[union-attr]
    snap.remove_pod(moved)
    assert snap.get("n2").req_cpu == 0 and snap.node_of(info.key) is None  # type: ignore[union-attr]


def test_nodes_come_and_go_and_keep_their_pods_until_deleted() -> None:
    snap = Snapshot([node(f"n{i}") for i in range(4)])
    snap.add_pod(dict(pod("p"), spec={**pod("p")["spec"], "nodeName": "n1"}))
    snap.remove_node("n1")
    assert [n.name for n in snap.nodes] == ["n0", "n3", "n2"] and snap.get("n1") is None
    snap.add_node(node("n1", cpu="8"))
    back = snap.get("n1")
    assert back is not None and len(back.pods) == 1 and back.alloc_cpu == 8000
    snap.update_node(node("n1", cpu="16", labels={"a": "b"}))
    assert back.alloc_cpu == 16000 and back.labels == {"a": "b"} and len(snap) == 4


def test_each_assumed_placement_counts_for_the_next_pod() -> None:
    cluster = Cluster([node("small", cpu="1")])
    assert cluster.schedule(pod("a", cpu="600m")) == "small"
    assert cluster.fit_message(pod("b", cpu="600m")) == "0/1 nodes are available: 1 Insufficient cpu."
