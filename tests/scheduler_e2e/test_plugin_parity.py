"""The scheduler's kube-parity plugins against a loopback API server through the official client: the
system default spreading of a ReplicaSet's pods, InterPodAffinity's namespaceSelector, ImageLocality."""

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

HOST = "kubernetes.io/hostname"


def owned_by(p: dict[str, Any], rs: dict[str, Any]) -> dict[str, Any]:
    p["metadata"]["labels"] = {"app": "web"}
    p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "controller": True,
                                         "name": rs["metadata"]["name"], "uid": rs["metadata"]["uid"]}]
    return p


def test_a_replicasets_pods_spread_over_hosts_by_the_system_default_constraints(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    # Resource scoring alone prefers the big node for every pod (a control group shows it); the system
    # default constraints (hostname maxSkew 3, weight 2) move a ReplicaSet's replicas onto other hosts.
    cluster.create(node("big", cpu="100", memory="400Gi", labels={HOST: "big"}))
    for name in ("small-1", "small-2"):
        cluster.create(node(name, cpu="4", memory="16Gi", labels={HOST: name}))
    apps = client.AppsV1Api(cluster.api)
    template = {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "app"}]}}
    rs = json.loads(apps.create_namespaced_replica_set("default", {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}}, "template": template}},
        _preload_content=False).read())
    start_scheduler()
    for i in range(3):
        cluster.create(pod(f"plain-{i}"))
        eventually(lambda i=i: bool(cluster.node_of(f"plain-{i}")), what=f"plain-{i} bound")
    assert set(cluster.bound().values()) == {"big"}
    for i in range(3):
        cluster.create(owned_by(pod(f"web-{i}"), rs))
        eventually(lambda i=i: bool(cluster.node_of(f"web-{i}")), what=f"web-{i} bound")
    placed = {name: n for name, n in cluster.bound().items() if name.startswith("web-")}
    assert sorted(placed.values()) == ["big", "small-1", "small-2"], placed


def test_pod_affinity_namespace_selector_follows_namespace_labels(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    for name in ("n1", "n2", "n3"):
        cluster.create(node(name, labels={HOST: name}))
    for ns, team in (("team-a", "a"), ("team-b", "b")):
        cluster.v1.create_namespace({"metadata": {"name": ns, "labels": {"team": team}}}, _preload_content=False)
    for ns, where in (("team-a", "n1"), ("team-b", "n2")):
        db = pod("db", namespace=ns, nodeName=where)
        db["metadata"]["labels"] = {"app": "db"}
        cluster.create(db)
    near = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": HOST, "labelSelector": {"matchLabels": {"app": "db"}},
         "namespaceSelector": {"matchLabels": {"team": "b"}}}]}}
    cluster.create(pod("client", affinity=near))
    start_scheduler()
    eventually(lambda: cluster.node_of("client") == "n2", what="client bound next to team-b's db")


def test_image_locality_prefers_the_node_that_has_the_image(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    for name in ("n1", "n2", "n3"):
        cluster.create(node(name))
    images = {"status": {"images": [{"names": ["registry.example/big:1"], "sizeBytes": 2_000_000_000}]}}
    cluster.v1.patch_node_status("n2", images, _preload_content=False).read()
    p = pod("app")
    p["spec"]["containers"][0]["image"] = "registry.example/big:1"
    start_scheduler()
    cluster.create(p)
    eventually(lambda: cluster.node_of("app") == "n2", what="app bound where its image is")
