"""PodTopologySpread's default constraints against kube's cases (helper/spread_test.go's DefaultSelector,
the plugin's system-defaulting and List cases): the selector from Services and controllers, the system
defaults' scoring over the keys a node has, and List defaults that filter."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from componentbase_examples.scheduler import config, profiles
from componentbase_examples.scheduler.algorithm import SchedulingAlgorithm
from componentbase_examples.scheduler.framework import Handle
from componentbase_examples.scheduler.plugins.spreaddefaults import WorkloadListers, default_selector
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import Snapshot

from .builders import Cluster, default_config, load_config, pod, registry
from .test_podtopologyspread import HOST, ZONE, zoned

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


def listers(services: list[Obj] = (), **objects: Obj) -> WorkloadListers:  # type: ignore[assignment]
    """Services of namespace default, and controllers by ``Kind_name``."""
    def get(kind: str, namespace: str, name: str) -> Obj | None:
        return objects.get(f"{kind}_{name}") if namespace == "default" else None

    return WorkloadListers(services=lambda ns: list(services) if ns == "default" else [], get=get)


def service(selector: dict[str, str] | None) -> Obj:
    return {"metadata": {"name": "svc", "namespace": "default"}, "spec": {"selector": selector}}


def owned(name: str, labels: dict[str, str], kind: str = "ReplicaSet", api_version: str = "apps/v1",
          on: str = "") -> Obj:
    p = pod(name)
    p["metadata"].update(labels=labels, uid=f"uid-{name}", ownerReferences=[
        {"apiVersion": api_version, "kind": kind, "name": "owner", "uid": "o", "controller": True}])
    if on:
        p["spec"]["nodeName"] = on
    return p


def requirement_keys(reqs: tuple[Any, ...]) -> list[tuple[str, str, list[str]]]:
    return [(k, op, sorted(v)) for k, op, v in reqs]


RS = {"spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}}}


@pytest.mark.parametrize(("services", "objects", "pod_obj", "expected"), [
    ([], {}, owned("p", {"app": "web"}, kind="Deployment"), []),  # no service, an owner kind without a selector
    ([service({"app": "web"})], {}, owned("p", {"app": "web", "v": "1"}), [("app", "In", ["web"])]),
    ([service({"app": "db"})], {}, owned("p", {"app": "web"}), []),  # not selecting the pod
    ([service(None)], {}, owned("p", {"app": "web"}), []),  # a nil selector matches nothing
    ([], {"ReplicaSet_owner": RS}, owned("p", {"app": "web"}), [("app", "In", ["web"])]),
    ([], {"StatefulSet_owner": RS}, owned("p", {"app": "web"}, kind="StatefulSet"), [("app", "In", ["web"])]),
    ([service({"tier": "fe"})], {"ReplicationController_owner": {"spec": {"selector": {"app": "web"}}}},
     owned("p", {"app": "web", "tier": "fe"}, kind="ReplicationController", api_version="v1"),
     [("app", "In", ["web"]), ("tier", "In", ["fe"])]),
    ([], {"ReplicaSet_owner": RS}, owned("p", {"app": "web"}, api_version="extensions/v1beta1"), []),
])
def test_default_selector(services: list[Obj], objects: dict[str, Obj], pod_obj: Obj,
                          expected: list[tuple[str, str, list[str]]]) -> None:
    assert requirement_keys(default_selector(PodInfo(pod_obj), listers(services, **objects))) == expected


class WorkloadCluster(Cluster):
    def __init__(self, nodes: list[Obj], workloads: WorkloadListers,
                 cfg: config.KubeSchedulerConfiguration | None = None) -> None:
        self.cfg = cfg or default_config()
        self.snapshot = Snapshot(nodes)
        self.frameworks = profiles.build_frameworks(self.cfg, registry(), Handle(self.snapshot, workloads=workloads))
        self.framework = next(iter(self.frameworks.values()))
        self.algorithm = SchedulingAlgorithm(self.snapshot, 0, random.Random(0))


def spread_scores(c: Cluster, p: Obj) -> dict[str, int]:
    fw = c.framework
    info = PodInfo(p)
    state: dict[str, Any] = {}
    nodes = c.snapshot.nodes
    for name, pre in fw.pre_score:
        if name == "PodTopologySpread":
            assert pre(state=state, pod=info, nodes=nodes) is None
    (sp,) = [s for s in fw.score if s.name == "PodTopologySpread"]
    out = sp.score(state=state, pod=info, nodes=nodes)
    sp.normalize(state=state, pod=info, nodes=nodes, scores=out)
    return {n.name: s for n, s in zip(nodes, out, strict=True)}


def test_system_defaults_spread_a_replicasets_pods_over_hosts_and_zones() -> None:
    nodes = [zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b"), zoned("nozone", None)]
    c = WorkloadCluster(nodes, listers(ReplicaSet_owner=RS))
    for i, host in enumerate(["a1", "a1", "a2", "b1"]):
        c.snapshot.add_pod(owned(f"r{i}", {"app": "web"}, on=host))
    # hostname (maxSkew 3): a1 2, a2 1, b1 1, nozone 0; zone (maxSkew 5): a 3, b 1; a node without the zone
    # label is not ignored under system defaulting: it scores on hostname alone
    w_host, w_zone = math.log(4 + 2), math.log(2 + 2)
    raw = {"a1": 2 * w_host + 2 + 3 * w_zone + 4, "a2": 1 * w_host + 2 + 3 * w_zone + 4,
           "b1": 1 * w_host + 2 + 1 * w_zone + 4, "nozone": 0 * w_host + 2}
    rounded = {k: int(v + 0.5) for k, v in raw.items()}
    lo, hi = min(rounded.values()), max(rounded.values())
    assert spread_scores(c, owned("new", {"app": "web"})) == {k: 100 * (hi + lo - v) // hi for k, v in rounded.items()}
    # an unowned pod selected by nothing gets no default constraint: the plugin skips it
    state: dict[str, Any] = {}
    plugin = c.framework.plugins["PodTopologySpread"]
    assert plugin.scheduler_pre_score(state=state, pod=PodInfo(pod("lonely")), nodes=c.snapshot.nodes).is_skip()


def test_list_defaults_filter_and_need_every_key() -> None:
    cfg = load_config("profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
                      "      defaultingType: List\n      defaultConstraints:\n"
                      f"      - {{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule}}\n")
    nodes = [zoned("a1", "a"), zoned("b1", "b"), zoned("nozone", None)]
    c = WorkloadCluster(nodes, listers([service({"app": "web"})]), cfg)
    c.snapshot.add_pod(owned("r0", {"app": "web"}, on="a1"))
    found, _ = c.algorithm.find_nodes_that_fit(c.framework, {}, PodInfo(owned("new", {"app": "web"})),
                                               c.snapshot.nodes)
    assert {n.name for n in found} == {"b1"}
    # a pod with constraints of its own keeps them: the defaults are for pods without any
    own = owned("own", {"app": "web"})
    own["spec"]["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": HOST,
                                                 "whenUnsatisfiable": "DoNotSchedule",
                                                 "labelSelector": {"matchLabels": {"app": "web"}}}]
    found, _ = c.algorithm.find_nodes_that_fit(c.framework, {}, PodInfo(own), c.snapshot.nodes)
    assert {n.name for n in found} == {"b1", "nozone"}


def test_without_listers_no_default_applies() -> None:
    c = Cluster([zoned("a1", "a"), zoned("b1", "b")])
    plugin = c.framework.plugins["PodTopologySpread"]
    assert plugin.constraints(PodInfo(owned("p", {"app": "web"})), "ScheduleAnyway") == []
