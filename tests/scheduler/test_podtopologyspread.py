"""PodTopologySpread through the whole algorithm: which nodes fit, kube's reasons, scores, and its args."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest

from componentbase_examples.scheduler import profiles
from componentbase_examples.scheduler.framework import Code
from componentbase_examples.scheduler.podinfo import PodInfo

from .builders import Cluster, load_config, node, pod, registry, taint

pytestmark = pytest.mark.unit

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
WEB = {"matchLabels": {"app": "web"}}
SKEWED = "node(s) didn't match pod topology spread constraints"
MISSING = "node(s) didn't match pod topology spread constraints (missing required label)"
_ids = itertools.count()


def zoned(name: str, zone: str | None, **kw: Any) -> dict[str, Any]:
    labels = {HOST: name, **kw.pop("labels", {})}
    if zone is not None:
        labels[ZONE] = zone
    return node(name, labels=labels, **kw)


def spread(key: str = ZONE, max_skew: int = 1, when: str = "DoNotSchedule", **extra: Any) -> dict[str, Any]:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when, "labelSelector": WEB, **extra}


def web(name: str, *constraints: dict[str, Any], labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    p = pod(name, topologySpreadConstraints=list(constraints), **spec)
    p["metadata"]["labels"] = {"app": "web"} if labels is None else labels
    return p


def running(cluster: Cluster, node_name: str, count: int = 1, labels: dict[str, str] | None = None,
            namespace: str = "default", **meta: Any) -> None:
    """``count`` bound pods on ``node_name`` (``app: web`` unless told)."""
    for _ in range(count):
        i = next(_ids)
        p = pod(f"existing-{i}", namespace=namespace, nodeName=node_name)
        p["metadata"].update(uid=f"uid-{i}", labels={"app": "web"} if labels is None else labels, **meta)
        cluster.snapshot.add_pod(p)


def feasible(cluster: Cluster, p: dict[str, Any]) -> set[str]:
    found, _ = cluster.algorithm.find_nodes_that_fit(cluster.framework, {}, PodInfo(p), cluster.snapshot.nodes)
    return {n.name for n in found}


def three_zones(**kw: Any) -> Cluster:
    return Cluster([zoned("a1", "a"), zoned("b1", "b"), zoned("c1", "c", **kw)])


def test_the_skewed_zones_are_filtered_counting_only_live_matching_pods_of_the_namespace() -> None:
    cluster = three_zones()
    running(cluster, "a1")
    running(cluster, "b1")
    running(cluster, "c1", labels={"app": "db"})
    running(cluster, "c1", namespace="other")
    running(cluster, "c1", deletionTimestamp="2024-01-01T00:00:00Z")
    # a=1 b=1 c=0: one more in a or b is a skew of 2
    assert feasible(cluster, web("p", spread())) == {"c1"}
    assert cluster.fit_message(web("p", spread(), cpu="5")) == "0/3 nodes are available: 3 Insufficient cpu."
    small = three_zones(cpu="1")
    running(small, "a1")
    running(small, "b1")
    assert small.fit_message(web("p", spread(), cpu="2")) == \
        f"0/3 nodes are available: 1 Insufficient cpu, 2 {SKEWED}."
    running(cluster, "c1")
    assert feasible(cluster, web("p", spread())) == {"a1", "b1", "c1"}


def test_a_node_without_the_key_is_unresolvable_and_no_domain() -> None:
    cluster = Cluster([zoned("a1", "a"), zoned("b1", "b"), zoned("bare", None)])
    running(cluster, "bare", count=3)
    assert feasible(cluster, web("p", spread())) == {"a1", "b1"}
    running(cluster, "a1")
    _, diagnosis = cluster.algorithm.find_nodes_that_fit(cluster.framework, {}, PodInfo(web("p", spread())),
                                                         cluster.snapshot.nodes)
    statuses = {name: status.code for name, status in diagnosis.node_to_status.items()}
    assert statuses == {"bare": Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "a1": Code.UNSCHEDULABLE}  # skews may resolve
    assert Cluster([zoned("x", None), zoned("y", None)]).fit_message(web("p", spread())) == \
        f"0/2 nodes are available: 2 {MISSING}."


def test_only_nodes_with_every_constraints_key_count() -> None:
    nohost = node("a-nohost", labels={ZONE: "a"})
    cluster = Cluster([zoned("a1", "a"), nohost, zoned("b1", "b")])
    running(cluster, "a-nohost", count=2)  # not counted: it lacks the hostname key of the other constraint
    running(cluster, "b1")
    assert feasible(cluster, web("p", spread(), spread(HOST, max_skew=5))) == {"a1"}
    assert feasible(cluster, web("p", spread())) == {"b1"}  # with the zone alone, zone a holds 2


def test_min_domains_makes_the_global_minimum_zero_until_there_are_enough_domains() -> None:
    cluster = Cluster([zoned("a1", "a"), zoned("b1", "b")])
    running(cluster, "a1")
    running(cluster, "b1")
    assert feasible(cluster, web("p", spread(minDomains=2))) == {"a1", "b1"}
    assert cluster.fit_message(web("p", spread(minDomains=3))) == f"0/2 nodes are available: 2 {SKEWED}."


@pytest.mark.parametrize(("policy", "expected"), [(None, {"a1", "b1"}), ("Honor", {"a1", "b1"}), ("Ignore", set())])
def test_node_affinity_policy_decides_whether_nodes_the_pod_cannot_use_are_domains(
        policy: str | None, expected: set[str]) -> None:
    cluster = Cluster([zoned("a1", "a", labels={"pool": "web"}), zoned("b1", "b", labels={"pool": "web"}),
                       zoned("c1", "c", labels={"pool": "batch"})])
    running(cluster, "a1")
    running(cluster, "b1")
    constraint = spread(**({"nodeAffinityPolicy": policy} if policy else {}))
    p = web("p", constraint, nodeSelector={"pool": "web"})
    assert feasible(cluster, p) == expected
    if not expected:  # zone c counts with 0 pods, though the pod may not go there
        assert cluster.fit_message(p) == \
            f"0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 {SKEWED}."


def test_node_affinity_policy_honors_required_affinity_too() -> None:
    cluster = Cluster([zoned("a1", "a"), zoned("b1", "b"), zoned("c1", "c")])
    running(cluster, "a1")
    running(cluster, "b1")
    away_from_c = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": ZONE, "operator": "NotIn", "values": ["c"]}]}]}}}
    assert feasible(cluster, web("p", spread(), affinity=away_from_c)) == {"a1", "b1"}


@pytest.mark.parametrize(("policy", "tolerate", "expected"), [
    (None, False, set()),  # Ignore by default: tainted zone c counts as an empty domain
    ("Honor", False, {"a1", "b1"}),
    ("Honor", True, {"c1"}),  # a tolerated taint keeps the domain
])
def test_node_taints_policy(policy: str | None, tolerate: bool, expected: set[str]) -> None:
    cluster = three_zones(taints=[taint("dedicated", "NoSchedule", "batch")])
    running(cluster, "a1")
    running(cluster, "b1")
    constraint = spread(**({"nodeTaintsPolicy": policy} if policy else {}))
    tolerations = [{"key": "dedicated", "operator": "Exists"}] if tolerate else []
    assert feasible(cluster, web("p", constraint, tolerations=tolerations)) == expected


def test_match_label_keys_count_only_pods_with_the_incoming_pods_values() -> None:
    cluster = three_zones()
    running(cluster, "a1", count=2, labels={"app": "web", "pod-template-hash": "v1"})
    running(cluster, "b1", labels={"app": "web", "pod-template-hash": "v2"})
    v2 = {"app": "web", "pod-template-hash": "v2"}
    assert feasible(cluster, web("p", spread(matchLabelKeys=["pod-template-hash"]), labels=v2)) == {"a1", "c1"}
    assert feasible(cluster, web("p", spread(), labels=v2)) == {"c1"}
    no_selector = spread(matchLabelKeys=["pod-template-hash"], labelSelector=None)
    assert feasible(cluster, web("p", no_selector, labels=v2)) == {"a1", "b1", "c1"}  # still selects nothing


def test_a_pod_its_selector_does_not_match_adds_no_skew() -> None:
    cluster = three_zones()
    running(cluster, "a1", count=2)
    running(cluster, "b1")
    assert feasible(cluster, web("p", spread(), labels={"app": "other"})) == {"b1", "c1"}
    assert feasible(cluster, web("p", spread())) == {"c1"}


def test_no_selector_selects_nothing_an_empty_one_every_pod_of_the_namespace() -> None:
    cluster = three_zones()
    running(cluster, "a1", count=2, labels={"any": "thing"})
    assert feasible(cluster, web("p", spread(labelSelector=None))) == {"a1", "b1", "c1"}
    assert feasible(cluster, web("p", spread(labelSelector={}))) == {"b1", "c1"}
    expressions = {"matchExpressions": [{"key": "any", "operator": "Exists"},
                                        {"key": "app", "operator": "NotIn", "values": ["web"]}]}
    assert feasible(cluster, web("p", spread(labelSelector=expressions))) == {"b1", "c1"}
    bad = {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}
    assert cluster.fit_message(web("p", spread(labelSelector=bad))) == (
        "0/3 nodes are available: obtaining pod's hard topology spread constraints: "
        '"Bogus" is not a valid label selector operator.')


def test_pods_without_constraints_skip_the_plugin() -> None:
    cluster = three_zones()
    (pre_filter,) = [fn for name, fn in cluster.framework.pre_filter if name == "PodTopologySpread"]
    (pre_score,) = [fn for name, fn in cluster.framework.pre_score if name == "PodTopologySpread"]
    plain = PodInfo(pod("p"))
    assert pre_filter(state={}, pod=plain, nodes=cluster.snapshot.nodes).is_skip()
    assert pre_score(state={}, pod=plain, nodes=cluster.snapshot.nodes).is_skip()
    soft_only = PodInfo(web("p", spread(when="ScheduleAnyway")))
    assert pre_filter(state={}, pod=soft_only, nodes=cluster.snapshot.nodes).is_skip()


def spread_scores(cluster: Cluster, p: dict[str, Any], only: set[str] | None = None) -> dict[str, int]:
    """The plugin's normalized scores for every node (or those ``only``), through PreScore, Score, NormalizeScore."""
    fw = cluster.framework
    info = PodInfo(p)
    nodes = [n for n in cluster.snapshot.nodes if only is None or n.name in only]
    state: dict[str, Any] = {}
    (pre_score,) = [fn for name, fn in fw.pre_score if name == "PodTopologySpread"]
    assert pre_score(state=state, pod=info, nodes=nodes) is None
    (sp,) = [s for s in fw.score if s.name == "PodTopologySpread"]
    out = sp.score(state=state, pod=info, nodes=nodes)
    assert sp.normalize is not None
    sp.normalize(state=state, pod=info, nodes=nodes, scores=out)
    return {n.name: s for n, s in zip(nodes, out, strict=True)}


@pytest.mark.parametrize("key", [ZONE, HOST])
def test_schedule_anyway_scores_kubes_formula(key: str) -> None:
    cluster = Cluster([zoned("a1", "a"), zoned("b1", "b"), zoned("c1", "c"), zoned("bare", None)])
    running(cluster, "a1", count=2)
    running(cluster, "b1")
    # 3 domains: weight ln(5) = 1.609; raw a1 = 3.22 -> 3, b1 = 1.61 -> 2, c1 = 0; bare lacks the key
    soft = spread(key, when="ScheduleAnyway")
    if key == ZONE:
        assert spread_scores(cluster, web("p", soft)) == {"a1": 0, "b1": 33, "c1": 100, "bare": 0}
    else:  # hostname also has the key on "bare"
        # 4 nodes: weight ln(6) = 1.79; a1 = 3.58 -> 4, b1 = 1.79 -> 2, c1 = bare = 0
        assert spread_scores(cluster, web("p", soft)) == {"a1": 0, "b1": 50, "c1": 100, "bare": 100}
        # the weight counts the nodes being scored, not all nodes: ln(5) again
        assert spread_scores(cluster, web("p", soft), only={"a1", "b1", "c1"}) == {"a1": 0, "b1": 33, "c1": 100}
    # maxSkew 3 adds 2 to every raw score, watering the differences down
    looser = spread(ZONE, max_skew=3, when="ScheduleAnyway")
    assert spread_scores(cluster, web("p", looser)) == {"a1": 40, "b1": 60, "c1": 100, "bare": 0}


def test_schedule_anyway_picks_the_emptier_domain_over_the_emptier_node() -> None:
    cluster = three_zones()
    running(cluster, "a1", count=2)
    running(cluster, "b1")
    running(cluster, "c1", labels={"app": "db"})
    cluster.snapshot.add_pod(pod("big", cpu="2", memory="4Gi", nodeName="c1"))  # least allocated prefers a or b
    assert cluster.schedule(web("p", spread(when="ScheduleAnyway"))) == "c1"
    assert cluster.schedule(pod("plain")) != "c1"


@pytest.mark.parametrize("when", ["DoNotSchedule", "ScheduleAnyway"])
def test_a_burst_of_assumed_replicas_spreads_evenly(when: str) -> None:
    # zone a has four nodes: spreading by node alone would put four of six replicas there
    cluster = Cluster([zoned(f"a{i}", "a") for i in range(4)] + [zoned("b1", "b"), zoned("c1", "c")])
    zones = Counter()
    for i in range(6):
        host = cluster.schedule(web(f"r{i}", spread(when=when)))
        zones[cluster.snapshot.get(host).labels[ZONE]] += 1  # type: ignore[union-attr]
    assert zones == {"a": 2, "b": 2, "c": 2}


def test_default_constraints_do_not_apply_without_service_and_controller_listers() -> None:
    cfg = load_config("profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n"
                      "      defaultConstraints:\n      - {maxSkew: 1, topologyKey: " + ZONE +
                      ", whenUnsatisfiable: DoNotSchedule}\n")
    assert profiles.validate(cfg, registry()) == []
    cluster = Cluster([zoned("a1", "a"), zoned("b1", "b")], cfg)
    running(cluster, "a1", count=3)
    plain = pod("p")
    plain["metadata"]["labels"] = {"app": "web"}
    assert feasible(cluster, plain) == {"a1", "b1"}


@pytest.mark.parametrize(("args", "errors"), [
    ("defaultingType: Bogus", ['defaultingType: Unsupported value: "Bogus": supported values: "System", "List"']),
    ("defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]",
     ['defaultingType: Invalid value: "System": when .defaultConstraints are not empty']),
    ("defaultingType: List\n      defaultConstraints:\n"
     "      - {maxSkew: 0, topologyKey: '', whenUnsatisfiable: Maybe, labelSelector: {}, extra: 1}\n"
     "      - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
     "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
     "      - {maxSkew: 1, topologyKey: 'a/b/c', whenUnsatisfiable: ScheduleAnyway}\n"
     "      - {maxSkew: 1, topologyKey: 'Bad_/x', whenUnsatisfiable: ''}",
     ['defaultConstraints[0].extra: Invalid value: "extra": unknown field',
      "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
      "defaultConstraints[0].topologyKey: Required value: can not be empty",
      'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": '
      'supported values: "DoNotSchedule", "ScheduleAnyway"',
      "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, "
      "as they deduced for each pod",
      'defaultConstraints[2]: Duplicate value: "{zone, DoNotSchedule}"',
      'defaultConstraints[3].topologyKey: Invalid value: "a/b/c": a qualified name must consist of alphanumeric '
      "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
      "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
      "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      'defaultConstraints[4].topologyKey: Invalid value: "Bad_/x": prefix part a lowercase RFC 1123 subdomain '
      "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
      "alphanumeric character (e.g. 'example.com', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      "defaultConstraints[4].whenUnsatisfiable: Required value: can not be empty"]),
])
def test_args_validation(args: str, errors: list[str]) -> None:
    cfg = load_config("profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      " + args + "\n")
    prefix = "profiles[0].pluginConfig[0].args."
    assert [str(e) for e in profiles.validate(cfg, registry())] == [prefix + e for e in errors]
