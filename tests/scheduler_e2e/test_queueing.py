"""Scheduling gates and queueing hints against the loopback API server, seen as a user sees them: the gated
pod's condition, its binding once the gates are gone, and the scheduler's attempts on ``/metrics``."""

from __future__ import annotations

import re
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest

from componentbase.testing import eventually, free_port
from tests.scheduler.builders import node, pod

from .conftest import Cluster, Running

pytestmark = pytest.mark.process

GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


def test_a_gated_pod_waits_with_the_servers_condition_and_is_bound_when_its_gates_are_removed(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    cluster.create(node("n1"))
    gates = [{"name": "example.com/quota"}, {"name": "example.com/approval"}]
    created = cluster.create(pod("gated", schedulingGates=gates))
    [condition] = created["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"], condition["message"]) == \
        ("PodScheduled", "False", "SchedulingGated", GATED_MESSAGE)
    start_scheduler()
    cluster.create(pod("canary-1"))
    eventually(lambda: cluster.node_of("canary-1") == "n1", what="a pod created after the gated one bound")
    cluster.v1.patch_namespaced_pod("gated", "default", {"spec": {"schedulingGates": gates[1:]}})
    cluster.create(pod("canary-2"))
    eventually(lambda: cluster.node_of("canary-2") == "n1", what="the second canary bound")
    assert cluster.node_of("gated") == ""
    assert cluster.condition("gated")["reason"] == "SchedulingGated"  # type: ignore[index]
    assert not cluster.events_for("gated", "FailedScheduling")  # a gated pod is never tried
    cluster.v1.patch_namespaced_pod("gated", "default", {"spec": {"schedulingGates": None}})
    eventually(lambda: cluster.node_of("gated") == "n1", what="the ungated pod bound")
    eventually(lambda: (cluster.condition("gated") or {}).get("status") == "True", what="PodScheduled=True")


def scrape(port: int) -> str:
    """The scheduler's ``/metrics`` ("" while it is not serving yet)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE  # the scheduler's self-signed serving cert
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/metrics", context=ctx, timeout=10) as resp:
            return str(resp.read().decode())
    except ConnectionRefusedError:
        return ""
    except urllib.error.URLError as e:
        if isinstance(e.reason, ConnectionRefusedError):
            return ""
        raise


def attempts(port: int) -> dict[tuple[str, str], float]:
    """``scheduler_schedule_attempts_total`` by (profile, result), scraped from the scheduler's ``/metrics``
    (none while it is not serving yet)."""
    text = scrape(port)
    found = {}
    for labels, value in re.findall(r"^scheduler_schedule_attempts_total\{(.*)\} (\S+)$", text, re.M):
        pairs = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        found[(pairs["profile"], pairs["result"])] = float(value)
    return found


PROFILES = """profiles:
- schedulerName: default-scheduler
- schedulerName: canary
"""


def test_a_pod_rejected_for_resources_is_retried_by_a_node_growing_not_by_unrelated_node_changes(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    port = free_port()
    cluster.create(node("n1", cpu="1"))
    cluster.create(pod("big", cpu="4"))
    start_scheduler(PROFILES, f"--secure-port={port}", "--authorization-always-allow-paths=/metrics")
    eventually(lambda: attempts(port).get(("default-scheduler", "unschedulable")) == 1, what="one failed attempt")
    # Changes NodeResourcesFit's hints refuse: a node too small added, a label on the small node.
    cluster.create(node("n2", cpu="1"))
    cluster.v1.patch_node("n1", {"metadata": {"labels": {"team": "a"}}})
    # A pod of another profile that needs the label: bound, the scheduler has seen both changes.
    cluster.create(pod("canary", schedulerName="canary", nodeSelector={"team": "a"}))
    eventually(lambda: attempts(port).get(("canary", "scheduled")) == 1, what="the canary bound")
    assert attempts(port).get(("default-scheduler", "unschedulable")) == 1, "retried by an unrelated change"
    assert cluster.node_of("big") == ""
    # n2 grows enough: the one change that can help.
    cluster.v1.patch_node_status("n2", {"status": {"allocatable": {"cpu": "8"}}})
    eventually(lambda: cluster.node_of("big") == "n2", what="big bound on the grown node")
    counts = attempts(port)
    assert (counts.get(("default-scheduler", "unschedulable")), counts.get(("default-scheduler", "scheduled"))) \
        == (1, 1)
