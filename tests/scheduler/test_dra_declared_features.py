"""DynamicResources and NodeDeclaredFeatures, in kube-scheduler 1.37's default set: what a pod meets of them
here (dynamicresources' PreFilter Skip without claims; nodedeclaredfeatures' PreFilter and Filter), and
DynamicResourcesArgs as validation_pluginargs.go validates them."""

from __future__ import annotations

from typing import Any

import pytest

from componentbase_examples.scheduler.framework import CycleState, Status
from componentbase_examples.scheduler.plugins import nodedeclaredfeatures
from componentbase_examples.scheduler.podinfo import PodInfo

from .builders import Cluster, node, pod
from .test_config_validation import ARGS, errors

pytestmark = pytest.mark.unit


def with_claim(p: dict[str, Any]) -> dict[str, Any]:
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]
    return p


def test_a_pod_without_claims_skips_dynamic_resources_and_schedules() -> None:
    cluster = Cluster([node("n")])
    status = cluster.framework.plugins["DynamicResources"].scheduler_pre_filter(state=CycleState(),
                                                                                pod=PodInfo(pod("p")))
    assert isinstance(status, Status) and status.is_skip()
    assert cluster.schedule(pod("p")) == "n"


def test_a_pod_with_claims_is_refused_rather_than_placed_without_its_devices() -> None:
    cluster = Cluster([node("n")])
    assert cluster.fit_message(with_claim(pod("p"))) == (
        "0/1 nodes are available: resource claims are not supported by this scheduler (no dynamic resource "
        "allocation).")


def test_node_declared_features_skips_a_pod_that_needs_none() -> None:
    """1.37's registered feature, GuaranteedQoSPodCPUResize, is inferred for a resize, not for scheduling."""
    cluster = Cluster([node("n")])
    guaranteed = pod("g", cpu="1", memory="1Gi")
    guaranteed["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "1", "memory": "1Gi"}
    status = cluster.framework.plugins["NodeDeclaredFeatures"].scheduler_pre_filter(state=CycleState(),
                                                                                    pod=PodInfo(guaranteed))
    assert isinstance(status, Status) and status.is_skip()


def test_node_declared_features_filter_keeps_the_nodes_declaring_what_the_pod_needs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A feature inferred for scheduling (a registered one that a pod needs) narrows the nodes by their
    status.declaredFeatures, with upstream's message for the others."""
    monkeypatch.setitem(nodedeclaredfeatures.FEATURES, "ExampleFeature", lambda spec: "priority" in spec)
    old, new = node("old"), node("new")
    new["status"]["declaredFeatures"] = ["ExampleFeature"]
    cluster = Cluster([old, new])
    p = pod("p", priority=1)
    assert cluster.schedule(p) == "new"
    plugin = cluster.framework.plugins["NodeDeclaredFeatures"]
    state, rejected = CycleState(), {}
    plugin.scheduler_pre_filter(state=state, pod=PodInfo(p))
    plugin.scheduler_filter(state=state, pod=PodInfo(p), nodes=cluster.snapshot.nodes, rejected=rejected)
    assert rejected["old"].message() == ("node declared features check failed - unsatisfied requirements: "
                                         "ExampleFeature")


@pytest.mark.parametrize(("args", "expected"), [
    ("{filterTimeout: -1s}", "profiles[0].pluginConfig[0].args.filterTimeout: Invalid value: \"-1s\": "
                             "must be zero or positive"),
    ("{bindingTimeout: 500ms}", "profiles[0].pluginConfig[0].args.bindingTimeout: Invalid value: \"500ms\": "
                                "must be at least 1 second"),
])
def test_dynamic_resources_args_validation(args: str, expected: str) -> None:
    assert errors(ARGS.format(name="DynamicResources", args=args)) == [expected]
