"""RBAC's rule matching and kube's default roles, as data (no server)."""

from __future__ import annotations

from typing import Any

import pytest

from componentbase.testing.apiserver.auth import Attributes
from componentbase.testing.apiserver.auth._bootstrap_roles import bootstrap_objects
from componentbase.testing.apiserver.auth._rbac import cluster_role_rules, rule_allows

pytestmark = pytest.mark.unit

PODS = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}


@pytest.mark.parametrize(("rule", "attrs", "allowed"), [
    (PODS, Attributes("get", "pods", namespace="a"), True),
    (PODS, Attributes("watch", "pods"), False),
    (PODS, Attributes("get", "pods", "status"), False),  # a subresource is named on its own
    (PODS, Attributes("get", "pods", group="apps"), False),
    ({**PODS, "resources": ["pods/status"]}, Attributes("get", "pods", "status"), True),
    ({**PODS, "resources": ["*/status"]}, Attributes("get", "nodes", "status"), True),
    ({**PODS, "resources": ["*/status"]}, Attributes("get", "nodes"), False),
    ({**PODS, "resources": ["*"]}, Attributes("get", "pods", "log"), True),
    ({**PODS, "apiGroups": ["*"], "verbs": ["*"]}, Attributes("deletecollection", "pods", group="x.io"), True),
    ({**PODS, "resourceNames": ["p1"]}, Attributes("get", "pods", name="p1"), True),
    ({**PODS, "resourceNames": ["p1"]}, Attributes("get", "pods", name="p2"), False),
    ({**PODS, "resourceNames": ["p1"]}, Attributes("list", "pods"), False),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, Attributes("get", path="/healthz"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, Attributes("get", path="/healthz/etcd"), False),
    ({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}, Attributes("get", path="/apis/apps/v1"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["*"]}, Attributes("post", path="/x"), False),
    (PODS, Attributes("get", path="/api"), False),  # a resource rule never grants a URL
])
def test_rule_allows(rule: dict[str, Any], attrs: Attributes, allowed: bool) -> None:
    assert rule_allows(rule, attrs) is allowed


def test_aggregation_follows_selectors_and_stops_at_cycles() -> None:
    roles = {
        "top": {"aggregationRule": {"clusterRoleSelectors": [
            {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}]}},
        "a": {"metadata": {"labels": {"tier": "a"}}, "rules": [PODS]},
        "b": {"metadata": {"labels": {"tier": "b"}}, "aggregationRule": {"clusterRoleSelectors": [{}]},
              "rules": []},
        "c": {"metadata": {"labels": {"tier": "c"}}, "rules": [{"verbs": ["get"], "nonResourceURLs": ["/c"]}]},
    }
    assert cluster_role_rules("top", roles) == [PODS, {"verbs": ["get"], "nonResourceURLs": ["/c"]}]
    assert cluster_role_rules("a", roles) == [PODS]


def test_bootstrap_policy() -> None:
    objects = bootstrap_objects()
    roles = {o["metadata"]["name"]: o for plural, o in objects if plural == "clusterroles"}
    bindings = {o["metadata"]["name"]: o for plural, o in objects if plural == "clusterrolebindings"}
    view = roles["view"]["rules"]
    assert any(rule_allows(r, Attributes("list", "deployments", group="apps")) for r in view)
    assert not any(rule_allows(r, Attributes("get", "secrets")) for r in view)  # view never reads secrets
    assert any(rule_allows(r, Attributes("get", "secrets")) for r in roles["edit"]["rules"])
    assert any(rule_allows(r, Attributes("create", "pods", "binding")) for r in roles["system:kube-scheduler"]["rules"])
    assert bindings["cluster-admin"]["subjects"] == [
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:masters"}]
    assert [s["name"] for s in bindings["system:volume-scheduler"]["subjects"]] == ["system:kube-scheduler"]
    assert all(o["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults" for _, o in objects)
