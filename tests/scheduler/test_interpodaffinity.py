"""InterPodAffinity through the whole algorithm: feasible nodes, chosen nodes, kube-scheduler's messages."""

from __future__ import annotations

from typing import Any

import pytest

from componentbase_examples.scheduler import profiles
from componentbase_examples.scheduler.plugins import podaffinityterms
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import Snapshot

from .builders import Cluster, load_config, node, pod, registry

pytestmark = pytest.mark.unit

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
PLUGIN = "InterPodAffinity"


def host(name: str, zone: str | None = None) -> dict[str, Any]:
    labels = {HOST: name, **({ZONE: zone} if zone else {})}
    return node(name, labels=labels)


def labeled(name: str, labels: dict[str, str], *, on: str = "", namespace: str = "default",
            **spec: Any) -> dict[str, Any]:
    p = pod(name, namespace=namespace, **spec)
    p["metadata"]["labels"] = labels
    if on:
        p["spec"]["nodeName"] = on
    return p


def term(topology_key: str, selector: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    return {"labelSelector": selector, "topologyKey": topology_key, **extra}


def match(**labels: str) -> dict[str, Any]:
    return {"matchLabels": labels}


def required(kind: str, *terms: dict[str, Any]) -> dict[str, Any]:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def preferred(kind: str, *weighted: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": w, "podAffinityTerm": t} for w, t in weighted]}}


def cluster(nodes: list[dict[str, Any]], *placed: dict[str, Any], config: str = "") -> Cluster:
    c = Cluster(nodes, load_config(config) if config else None)
    for p in placed:
        c.snapshot.add_pod(p)
    return c


def feasible(c: Cluster, p: dict[str, Any]) -> set[str]:
    found, _ = c.algorithm.find_nodes_that_fit(c.framework, {}, PodInfo(p), c.snapshot.nodes)
    return {n.name for n in found}


def scores(c: Cluster, p: dict[str, Any]) -> dict[str, int] | None:
    """The plugin's normalized scores over every node, or ``None`` when its PreScore skips."""
    fw, info, nodes, state = c.framework, PodInfo(p), c.snapshot.nodes, {}
    (pre,) = [fn for name, fn in fw.pre_score if name == PLUGIN]
    status = pre(state=state, pod=info, nodes=nodes)
    if status is not None and status.is_skip():
        return None
    (sp,) = [s for s in fw.score if s.name == PLUGIN]
    out = sp.score(state=state, pod=info, nodes=nodes)
    assert sp.normalize is not None
    sp.normalize(state=state, pod=info, nodes=nodes, scores=out)
    return {n.name: s for n, s in zip(nodes, out, strict=True)}


ZONED = [host("a1", "a"), host("a2", "a"), host("b1", "b"), host("bare")]
NO_WEB_HERE = required("podAntiAffinity", term(HOST, match(app="web")))


# Filter


def test_required_affinity_co_locates_in_the_zone_of_a_matching_pod() -> None:
    web = labeled("web", {"app": "web"}, affinity=required("podAffinity", term(ZONE, match(app="db"))))
    c = cluster(ZONED, labeled("db", {"app": "db"}, on="a2"))
    assert feasible(c, web) == {"a1", "a2"}  # the zone, not just the node; "bare" has no zone at all
    assert cluster(ZONED).fit_message(web) == "0/4 nodes are available: 4 node(s) didn't match pod affinity rules."


def test_a_pod_counts_for_affinity_only_if_it_matches_every_term() -> None:
    both = required("podAffinity", term(ZONE, match(app="db")), term(HOST, match(role="primary")))
    c = cluster(ZONED, labeled("replica", {"app": "db", "role": "replica"}, on="a1"),
                labeled("primary", {"app": "db", "role": "primary"}, on="b1"))
    assert feasible(c, labeled("web", {}, affinity=both)) == {"b1"}


def test_required_anti_affinity_spreads_replicas_and_sees_the_assumed_ones() -> None:
    nodes = [host("n1"), host("n2"), host("n3")]
    c = cluster(nodes)

    def replica(i: int) -> dict[str, Any]:
        return labeled(f"web-{i}", {"app": "web"}, affinity=required("podAntiAffinity", term(HOST, match(app="web"))))

    placed = {c.schedule(replica(i)) for i in range(3)}  # each one assumed before the next cycle
    assert placed == {"n1", "n2", "n3"}
    assert c.fit_message(replica(3)) == "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."
    gone = next(key for key, (info, name) in c.snapshot._pods.items() if name == "n2")
    c.snapshot.forget_pod(gone)  # its binding failed: the node is free again
    assert c.schedule(replica(3)) == "n2"


def test_anti_affinity_holds_on_a_node_without_the_topology_key() -> None:
    lonely = labeled("p", {"app": "web"}, affinity=required("podAntiAffinity", term(ZONE, match(app="web"))))
    c = cluster(ZONED, labeled("w", {"app": "web"}, on="a1"))
    assert feasible(c, lonely) == {"b1", "bare"}


def test_existing_pods_anti_affinity_repels_the_incoming_pod() -> None:
    loner = labeled("loner", {"app": "batch"}, on="a1",
                    affinity=required("podAntiAffinity", term(ZONE, match(app="web"))))
    c = cluster(ZONED, loner)
    assert feasible(c, labeled("web", {"app": "web"})) == {"b1", "bare"}
    assert feasible(c, labeled("other", {"app": "other"})) == {"a1", "a2", "b1", "bare"}
    only_zone_a = cluster([host("a1", "a"), host("a2", "a")], loner)
    assert only_zone_a.fit_message(labeled("web", {"app": "web"})) == \
        "0/2 nodes are available: 2 node(s) didn't satisfy existing pods anti-affinity rules."


def test_a_placed_pod_updated_without_its_anti_affinity_no_longer_repels() -> None:
    c = cluster(ZONED, labeled("loner", {}, on="a1", affinity=NO_WEB_HERE))
    web = labeled("web", {"app": "web"})
    assert "a1" not in feasible(c, web)
    c.snapshot.update_pod(labeled("loner", {}, on="a1"))
    assert "a1" in feasible(c, web)


def test_terminating_pods_still_count_as_upstream() -> None:
    dying = labeled("w", {"app": "web"}, on="a1")
    dying["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    anti = labeled("p", {}, affinity=required("podAntiAffinity", term(HOST, match(app="web"))))
    assert feasible(cluster(ZONED, dying), anti) == {"a2", "b1", "bare"}


def test_the_first_pod_of_a_self_affine_group_may_go_to_any_node_with_the_topology_key() -> None:
    self_affine = required("podAffinity", term(ZONE, match(app="web")))
    first = labeled("web-0", {"app": "web"}, affinity=self_affine)
    c = cluster(ZONED)
    assert feasible(c, first) == {"a1", "a2", "b1"}  # not "bare": the topology key must exist
    assert c.fit_message(labeled("x", {"app": "other"}, affinity=self_affine)) == \
        "0/4 nodes are available: 4 node(s) didn't match pod affinity rules."
    c.snapshot.add_pod(labeled("web-0", {"app": "web"}, on="b1", affinity=self_affine))
    assert feasible(c, labeled("web-1", {"app": "web"}, affinity=self_affine)) == {"b1"}  # the group exists now


@pytest.mark.parametrize(("selector", "expected"), [
    (match(app="web"), {"n2", "n3", "n4"}),
    ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]}, {"n3", "n4"}),
    ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}, {"n1", "n4"}),
    ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, {"n2", "n3", "n4"}),
    ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, {"n1", "n4"}),
    ({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["be"]}]},
     {"n1", "n2", "n3", "n4"}),  # ANDed: no pod is both
    ({}, {"n4"}),  # an empty selector selects every pod
    (None, {"n1", "n2", "n3", "n4"}),  # a nil one selects none
])  # a selector that does not parse fails PreFilter: test_affinity_parity.py
def test_label_selector_operators(selector: dict[str, Any] | None, expected: set[str]) -> None:
    c = cluster([host("n1"), host("n2"), host("n3"), host("n4")], labeled("web", {"app": "web", "tier": "fe"}, on="n1"),
                labeled("db", {"app": "db"}, on="n2"), labeled("bare", {}, on="n3"))
    assert feasible(c, labeled("p", {}, affinity=required("podAntiAffinity", term(HOST, selector)))) == expected


@pytest.mark.parametrize(("extra", "expected"), [
    ({}, {"a1", "a2", "b1", "bare"}),  # the term's pod's own namespace: the db in "data" does not count
    ({"namespaces": ["data"]}, {"b1", "bare"}),
    ({"namespaceSelector": {}}, {"b1", "bare"}),  # every namespace
    ({"namespaces": ["other"], "namespaceSelector": {}}, {"b1", "bare"}),
    ({"namespaceSelector": {"matchLabels": {"team": "data"}}}, {"a1", "a2", "b1", "bare"}),  # gap: own namespace
    ({"namespaces": ["data"], "namespaceSelector": {"matchLabels": {"team": "x"}}}, {"b1", "bare"}),
])
def test_namespaces_of_a_term(extra: dict[str, Any], expected: set[str]) -> None:
    c = cluster(ZONED, labeled("db", {"app": "db"}, on="a1", namespace="data"))
    anti = required("podAntiAffinity", term(ZONE, match(app="db"), **extra))
    assert feasible(c, labeled("p", {}, namespace="web", affinity=anti)) == expected


def test_existing_pods_terms_cover_their_own_namespace() -> None:
    loner = labeled("loner", {}, on="a1", namespace="batch",
                    affinity=required("podAntiAffinity", term(HOST, match(app="web"))))
    c = cluster(ZONED, loner)
    assert "a1" in feasible(c, labeled("web", {"app": "web"}, namespace="default"))
    assert "a1" not in feasible(c, labeled("web", {"app": "web"}, namespace="batch"))


def test_match_label_keys_and_mismatch_label_keys_merge_the_owners_values() -> None:
    by_revision = required("podAntiAffinity", term(HOST, match(app="web"), matchLabelKeys=["hash", "absent"]))
    c = cluster([host("n1"), host("n2")], labeled("old", {"app": "web", "hash": "v1"}, on="n1"))
    assert feasible(c, labeled("new", {"app": "web", "hash": "v2"}, affinity=by_revision)) == {"n1", "n2"}
    assert feasible(c, labeled("same", {"app": "web", "hash": "v1"}, affinity=by_revision)) == {"n2"}
    exclusive = required("podAntiAffinity", term(HOST, {"matchExpressions": [{"key": "tenant", "operator": "Exists"}]},
                                                 mismatchLabelKeys=["tenant"]))
    c = cluster([host("n1"), host("n2")], labeled("a", {"tenant": "a"}, on="n1"),
                labeled("b", {"tenant": "b"}, on="n2"))
    assert feasible(c, labeled("a2", {"tenant": "a"}, affinity=exclusive)) == {"n1"}  # only beside its own tenant


def test_pre_filter_skips_unless_some_required_term_concerns_the_pod() -> None:
    c = cluster(ZONED, labeled("loner", {}, on="a1", affinity=NO_WEB_HERE))
    (pre,) = [fn for name, fn in c.framework.pre_filter if name == PLUGIN]

    def skipped(p: dict[str, Any]) -> bool:
        status = pre(state={}, pod=PodInfo(p), nodes=c.snapshot.nodes)
        return status is not None and status.is_skip()

    assert skipped(labeled("plain", {"app": "db"}))
    assert not skipped(labeled("web", {"app": "web"}))  # the loner's anti-affinity selects it
    assert not skipped(labeled("p", {}, affinity=required("podAffinity", term(ZONE, match(app="db")))))
    assert skipped(labeled("p", {}, affinity=preferred("podAffinity", (5, term(ZONE, match(app="db"))))))


def test_snapshot_indexes_the_nodes_holding_pods_with_affinity() -> None:
    anti = required("podAntiAffinity", term(HOST, match(app="web")))
    snap = Snapshot([host("n1"), host("n2")], [labeled("plain", {}, on="n1"),
                                               labeled("soft", {}, on="n1", affinity=preferred("podAffinity", (1, {}))),
                                               labeled("hard", {}, on="n2", affinity=anti)])
    assert [n.name for n in snap.nodes_with_pod_affinity()] == ["n1", "n2"]
    assert [n.name for n in snap.nodes_with_required_anti_affinity()] == ["n2"]
    snap.remove_pod("default/soft")
    assert [n.name for n in snap.nodes_with_pod_affinity()] == ["n2"]
    snap.remove_node("n2")
    assert snap.nodes_with_pod_affinity() == [] and snap.nodes_with_required_anti_affinity() == []
    snap.add_node(host("n2"))  # its pods were kept
    assert [n.name for n in snap.nodes_with_required_anti_affinity()] == ["n2"]
    snap.remove_pod("default/hard")
    assert snap.nodes_with_pod_affinity() == [] and snap.nodes_with_required_anti_affinity() == []


def test_parsed_terms_of_pods_gone_are_dropped_once_the_cache_has_doubled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(podaffinityterms, "_MIN_CACHE", 2)
    c = cluster([host("n1"), host("n2")])
    plugin = c.framework.plugins[PLUGIN]

    def replica(i: int) -> dict[str, Any]:
        return labeled(f"r{i}", {"app": "r"}, affinity=required("podAntiAffinity", term(HOST, match(app="r"))))

    for i in range(6):  # each placed, seen by the next cycle, then deleted
        c.schedule(replica(i))
        c.snapshot.remove_pod(f"default/r{i}")
    assert len(plugin.cache) <= 3  # not 6: the limit is twice what is alive, and 2 at least


# Score


def test_preferred_affinity_and_anti_affinity_choose_the_node() -> None:
    c = cluster([host("a1", "a"), host("b1", "b")], labeled("cache", {"app": "cache"}, on="b1"))
    near = labeled("web", {}, affinity=preferred("podAffinity", (50, term(ZONE, match(app="cache")))))
    far = labeled("web", {}, affinity=preferred("podAntiAffinity", (50, term(ZONE, match(app="cache")))))
    assert scores(c, near) == {"a1": 0, "b1": 100}
    assert scores(c, far) == {"a1": 100, "b1": 0}
    assert c.schedule(near, assume=False) == "b1"  # despite b1 being the busier node
    assert c.schedule(far, assume=False) == "a1"


def test_scores_are_summed_per_domain_and_normalized_between_min_and_max() -> None:
    nodes = [host("a1", "a"), host("b1", "b"), host("c1", "c"), host("c2", "c"), host("bare")]
    c = cluster(nodes, labeled("x", {"app": "x"}, on="a1"), labeled("y", {"app": "y"}, on="c1"),
                labeled("y2", {"app": "y"}, on="c1"))
    p = labeled("p", {}, affinity={**preferred("podAffinity", (15, term(ZONE, match(app="y")))),
                                   **preferred("podAntiAffinity", (10, term(ZONE, match(app="x"))))})
    # a: -10, b: 0, c: 2 * 15 = 30 (both of c's nodes), bare: 0 -> (s + 10) * 100 / 40
    assert scores(c, p) == {"a1": 0, "b1": 25, "c1": 100, "c2": 100, "bare": 25}


def test_existing_pods_preferred_terms_score_the_incoming_pod_unless_ignored() -> None:
    fan = labeled("fan", {}, on="b1", affinity={**preferred("podAffinity", (10, term(ZONE, match(app="web")))),
                                                **preferred("podAntiAffinity", (4, term(HOST, match(app="web"))))})
    nodes = [host("a1", "a"), host("b1", "b"), host("b2", "b")]
    c = cluster(nodes, fan)
    # zone b +10, host b1 -4: a1 0, b1 6, b2 10
    assert scores(c, labeled("web", {"app": "web"})) == {"a1": 0, "b1": 60, "b2": 100}
    assert scores(c, labeled("db", {"app": "db"})) is None  # nothing concerns it: PreScore skips
    ignoring = cluster(nodes, fan, config="profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n"
                                          "    args: {ignorePreferredTermsOfExistingPods: true}\n")
    assert scores(ignoring, labeled("web", {"app": "web"})) is None
    own = labeled("web", {"app": "web"}, affinity=preferred("podAntiAffinity", (1, term(ZONE, match(app="none")))))
    # with preferred terms of its own, the pod still gets the others' terms
    assert scores(ignoring, own) == {"a1": 0, "b1": 60, "b2": 100}


@pytest.mark.parametrize(("weight", "expected"), [
    (None, {"a1": 100, "b1": 0}),  # default 1: zone a 5 beats zone b 1
    (10, {"a1": 0, "b1": 100}),  # zone b 10 beats 5
])
def test_hard_pod_affinity_weight_scores_existing_pods_required_affinity(weight: int | None,
                                                                       expected: dict[str, int]) -> None:
    config = "" if weight is None else \
        f"profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {{hardPodAffinityWeight: {weight}}}\n"
    c = cluster([host("a1", "a"), host("b1", "b")],
                labeled("soft", {}, on="a1", affinity=preferred("podAffinity", (5, term(ZONE, match(app="web"))))),
                labeled("hard", {}, on="b1", affinity=required("podAffinity", term(ZONE, match(app="web")))),
                config=config)
    assert scores(c, labeled("web", {"app": "web"})) == expected


def test_hard_pod_affinity_weight_zero_ignores_required_affinity_in_scoring() -> None:
    placed = labeled("hard", {}, on="b1", affinity=required("podAffinity", term(ZONE, match(app="web"))))
    web = labeled("web", {"app": "web"})
    assert scores(cluster([host("a1", "a"), host("b1", "b")], placed), web) == {"a1": 0, "b1": 100}
    zero = cluster([host("a1", "a"), host("b1", "b")], placed, config="profiles:\n- pluginConfig:\n"
                   "  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 0}\n")
    assert scores(zero, web) is None


# Args


@pytest.mark.parametrize("weight", [-1, 101])
def test_hard_pod_affinity_weight_must_be_within_0_and_100(weight: int) -> None:
    cfg = load_config(f"profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
                      f"      hardPodAffinityWeight: {weight}\n")
    assert [str(e) for e in profiles.validate(cfg, registry())] == [
        f"profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: {weight}: "
        "not in valid range [0, 100]"]
    with pytest.raises(profiles.ProfileError, match="not in valid range"):
        Cluster([host("n")], cfg)
    ok = load_config("profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
                     "      hardPodAffinityWeight: 100\n")
    assert profiles.validate(ok, registry()) == []
