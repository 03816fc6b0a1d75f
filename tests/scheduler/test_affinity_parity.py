"""InterPodAffinity against kube-scheduler's cases: invalid selectors fail PreFilter/PreScore with kube's
message, ``namespaceSelector`` through namespace labels, ``matchLabelKeys``/``mismatchLabelKeys``."""

from __future__ import annotations

import random
from typing import Any

import pytest

from componentbase_examples.scheduler import profiles
from componentbase_examples.scheduler.algorithm import SchedulingAlgorithm, prioritize
from componentbase_examples.scheduler.framework import Code, Handle
from componentbase_examples.scheduler.plugins.podaffinityterms import parse_terms
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import Snapshot

from .builders import Cluster, default_config, registry
from .test_interpodaffinity import HOST, ZONE, host, labeled, match, preferred, required, term

pytestmark = pytest.mark.unit

NAMESPACES = {"team-a": {"team": "a"}, "team-b": {"team": "b"}, "default": {}}


class NamespacedCluster(Cluster):
    """A Cluster whose plugins see namespace labels, as the scheduler's Namespace informer gives them."""

    def __init__(self, nodes: list[dict[str, Any]], *placed: dict[str, Any]) -> None:
        self.cfg = default_config()
        self.snapshot = Snapshot(nodes, placed)
        handle = Handle(self.snapshot, namespace_labels=lambda name: NAMESPACES.get(name, {}))
        self.frameworks = profiles.build_frameworks(self.cfg, registry(), handle)
        self.framework = next(iter(self.frameworks.values()))
        self.algorithm = SchedulingAlgorithm(self.snapshot, 0, random.Random(0))


BAD_KEY = ("key: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or "
           "'.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
           "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def test_an_invalid_label_key_fails_pre_filter_with_kubes_message() -> None:
    c = Cluster([host("n1")])
    bad = labeled("p", {"app": "web"}, affinity=required("podAntiAffinity", term(HOST, match(**{"bad key": "x"}))))
    assert c.fit_message(bad) == f"0/1 nodes are available: parsing pod: requiredAntiAffinityTerms: {BAD_KEY}."
    status = c.framework.plugins["InterPodAffinity"].scheduler_pre_filter(
        state={}, pod=PodInfo(bad), nodes=c.snapshot.nodes)
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_an_invalid_label_value_in_a_preferred_term_fails_pre_filter_and_pre_score() -> None:
    c = Cluster([host("n1"), host("n2")])
    selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["bad value"]}]}
    bad = labeled("p", {"app": "web"}, affinity=preferred("podAffinity", (5, term(ZONE, selector))))
    msg = (
        'preferredAffinityTerms: values[0][app]: Invalid value: "bad value": a valid label must be an empty '
        "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
    assert parse_terms(PodInfo(bad)).error == msg
    assert c.fit_message(bad) == f"0/2 nodes are available: parsing pod: {msg}."
    with pytest.raises(Exception, match='running PreScore plugin "InterPodAffinity": failed to parse pod: '):
        prioritize(c.framework, {}, PodInfo(bad), c.snapshot.nodes)


def test_two_kinds_of_invalid_terms_are_aggregated_as_kube_does() -> None:
    bad_selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": []}]}
    affinity = {**required("podAffinity", term(ZONE, bad_selector)),
                **required("podAntiAffinity", term(ZONE, match(**{"bad key": "x"})))}
    error = parse_terms(PodInfo(labeled("p", {}, affinity=affinity))).error
    assert error == ("[requiredAffinityTerms: values: Invalid value: []: for 'in', 'notin' operators, values set "
                     f"can't be empty, requiredAntiAffinityTerms: {BAD_KEY}]")


def test_namespace_selector_selects_namespaces_by_their_labels() -> None:
    nodes = [host("n1", "z1"), host("n2", "z2"), host("n3", "z3")]
    placed = [labeled("a", {"app": "db"}, on="n1", namespace="team-a"),
              labeled("b", {"app": "db"}, on="n2", namespace="team-b")]
    c = NamespacedCluster(nodes, *placed)
    near_team_a = term(ZONE, match(app="db"), namespaceSelector=match(team="a"))
    assert c.schedule(labeled("p", {}, affinity=required("podAffinity", near_team_a)), assume=False) == "n1"
    # anti-affinity to team-b's db: n2 is out, the others in
    away = term(ZONE, match(app="db"), namespaceSelector={"matchExpressions": [
        {"key": "team", "operator": "In", "values": ["b"]}]})
    found, _ = c.algorithm.find_nodes_that_fit(c.framework, {}, PodInfo(
        labeled("q", {}, affinity=required("podAntiAffinity", away))), c.snapshot.nodes)
    assert {n.name for n in found} == {"n1", "n3"}


def test_namespace_selector_with_listed_namespaces_covers_both_and_empty_covers_all() -> None:
    nodes = [host("n1", "z1"), host("n2", "z2"), host("n3", "z3")]
    placed = [labeled("a", {"app": "db"}, on="n1", namespace="team-a"),
              labeled("b", {"app": "db"}, on="n2", namespace="team-b"),
              labeled("c", {"app": "db"}, on="n3", namespace="other")]
    c = NamespacedCluster(nodes, *placed)

    def feasible(anti: dict[str, Any]) -> set[str]:
        found, _ = c.algorithm.find_nodes_that_fit(c.framework, {}, PodInfo(
            labeled("q", {}, affinity=required("podAntiAffinity", anti))), c.snapshot.nodes)
        return {n.name for n in found}

    assert feasible(term(ZONE, match(app="db"), namespaces=["other"], namespaceSelector=match(team="a"))) == {"n2"}
    assert feasible(term(ZONE, match(app="db"), namespaceSelector={})) == set()
    assert feasible(term(ZONE, match(app="db"), namespaceSelector=match(team="zz"))) == {"n1", "n2", "n3"}


def test_an_existing_pods_anti_affinity_namespace_selector_reads_the_incoming_pods_namespace() -> None:
    keep_out = term(HOST, match(app="web"), namespaceSelector=match(team="a"))
    guard = labeled("guard", {}, on="n1", affinity=required("podAntiAffinity", keep_out))
    c = NamespacedCluster([host("n1"), host("n2")], guard)
    assert c.schedule(labeled("w", {"app": "web"}, namespace="team-a"), assume=False) == "n2"
    found, _ = c.algorithm.find_nodes_that_fit(c.framework, {}, PodInfo(labeled("w", {"app": "web"},
                                                                                 namespace="team-b")),
                                               c.snapshot.nodes)
    assert {n.name for n in found} == {"n1", "n2"}


def test_match_label_keys_and_mismatch_label_keys_merge_the_pods_own_values() -> None:
    nodes = [host("n1"), host("n2"), host("n3")]
    placed = [labeled("v1", {"app": "web", "version": "v1"}, on="n1"),
              labeled("v2", {"app": "web", "version": "v2"}, on="n2")]
    c = Cluster(nodes)
    for p in placed:
        c.snapshot.add_pod(p)
    same_version = term(HOST, match(app="web"), matchLabelKeys=["version"])
    assert c.schedule(labeled("p", {"app": "web", "version": "v2"},
                              affinity=required("podAffinity", same_version)), assume=False) == "n2"
    other_versions = term(HOST, match(app="web"), mismatchLabelKeys=["version"])
    found, _ = c.algorithm.find_nodes_that_fit(c.framework, {}, PodInfo(labeled(
        "q", {"app": "web", "version": "v1"}, affinity=required("podAntiAffinity", other_versions))), c.snapshot.nodes)
    assert {n.name for n in found} == {"n1", "n3"}  # away from v2 only
    # a key the pod lacks is ignored; a nil labelSelector stays nil (selects nothing)
    lacking = term(HOST, match(app="web"), matchLabelKeys=["missing"])
    assert c.schedule(labeled("r", {"app": "web"}, affinity=required("podAffinity", lacking)), assume=False) in \
        {"n1", "n2"}
    nil = term(HOST, None, matchLabelKeys=["app"])
    assert parse_terms(PodInfo(labeled("s", {"app": "web"}, affinity=required("podAffinity", nil)))) \
        .required_affinity[0].requirements is None
