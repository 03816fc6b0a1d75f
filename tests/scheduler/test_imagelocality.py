"""ImageLocality against kube-scheduler's image_locality_test.go cases, and in the default profile."""

from __future__ import annotations

from typing import Any

import pytest

from componentbase_examples.scheduler.plugins.imagelocality import calculate_priority, normalized_image_name
from componentbase_examples.scheduler.podinfo import PodInfo

from .builders import Cluster, node, pod

pytestmark = pytest.mark.unit

MB = 1024 * 1024


def with_images(n: dict[str, Any], *images: tuple[list[str], int]) -> dict[str, Any]:
    n["status"]["images"] = [{"names": names, "sizeBytes": size} for names, size in images]
    return n


def with_containers(p: dict[str, Any], *images: str, init: tuple[str, ...] = ()) -> dict[str, Any]:
    p["spec"]["containers"] = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
    if init:
        p["spec"]["initContainers"] = [{"name": f"i{i}", "image": image} for i, image in enumerate(init)]
    return p


def image_scores(cluster: Cluster, p: dict[str, Any]) -> dict[str, int]:
    (sp,) = [s for s in cluster.framework.score if s.name == "ImageLocality"]
    out = sp.score(state={}, pod=PodInfo(p), nodes=cluster.snapshot.nodes)
    return {n.name: s for n, s in zip(cluster.snapshot.nodes, out, strict=True)}


def test_names_without_a_tag_are_latest() -> None:
    assert normalized_image_name("gcr.io/40") == "gcr.io/40:latest"
    assert normalized_image_name("gcr.io/250:v1") == "gcr.io/250:v1"
    assert normalized_image_name("localhost:5000/app") == "localhost:5000/app:latest"
    assert normalized_image_name("app@sha256:abc") == "app@sha256:abc"


def test_scores_scale_image_sizes_by_their_spread() -> None:
    nodes = [with_images(node("node1"), (["gcr.io/40:latest", "gcr.io/40:v1"], 40 * MB),
                         (["gcr.io/300:v1"], 300 * MB)),
             with_images(node("node2"), (["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:v1"], 10 * MB)),
             node("node3")]
    c = Cluster(nodes)
    # "two images spread on two nodes, prefer the larger image one": on node1 40M * 1/3 < 23M -> 0;
    # node2: 100 * (250M * 1/3 - 23M) / (1000M * 2 - 23M) = 3
    assert image_scores(c, with_containers(pod("p"), "gcr.io/40", "gcr.io/250")) == \
        {"node1": 0, "node2": 3, "node3": 0}
    # "two images on one node, prefer this node": node1 40M/3 + 300M/3 = 113M -> 100 * 90M / 1977M = 4
    assert image_scores(c, with_containers(pod("p"), "gcr.io/40", "gcr.io/300:v1")) == \
        {"node1": 4, "node2": 0, "node3": 0}
    # init containers count, and widen the threshold: 1 init + 1 container
    assert image_scores(c, with_containers(pod("p"), "gcr.io/10:v1", init=("gcr.io/250",))) == \
        {"node1": 0, "node2": 3, "node3": 0}
    assert image_scores(c, with_containers(pod("p"), "gcr.io/none")) == {"node1": 0, "node2": 0, "node3": 0}


def test_calculate_priority_clamps() -> None:
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(10_000 * MB, 1) == 100
    assert calculate_priority(500 * MB, 1) == 100 * (500 - 23) // (1000 - 23)


def test_the_default_profile_places_a_pod_where_its_big_image_is() -> None:
    nodes = [node("plain"), with_images(node("cached"), (["registry.example/huge:1"], 3000 * MB)), node("other")]
    c = Cluster(nodes)
    assert ("ImageLocality", 1) in [(s.name, s.weight) for s in c.framework.score]
    assert c.schedule(with_containers(pod("p"), "registry.example/huge:1"), assume=False) == "cached"
    # the count of nodes per image follows node updates and removals
    assert c.snapshot.image_nodes["registry.example/huge:1"] == 1
    c.snapshot.update_node(node("cached"))
    assert "registry.example/huge:1" not in c.snapshot.image_nodes
    c.snapshot.update_node(nodes[1])
    c.snapshot.remove_node("cached")
    assert c.snapshot.image_nodes == {}
