"""A config in kube-scheduler's v1 form (nulls, weights of 0, extenders, delayCacheUntilActive) runs the scheduler."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from componentbase.testing import eventually
from tests.scheduler.builders import node, pod

from .conftest import Cluster, Running

pytestmark = pytest.mark.process

#: As kube-scheduler accepts it: null pointers, plugin weights of 0, a resource weight of 0 (meaning 1).
KUBE_FORM = """parallelism: null
percentageOfNodesToScore: null
delayCacheUntilActive: true
extenders: []
profiles:
- schedulerName: packer
  plugins:
    multiPoint:
      enabled:
      - {name: NodeResourcesFit, weight: 0}
    score:
      disabled:
      - {name: NodeResourcesBalancedAllocation}
  pluginConfig:
  - name: NodeResourcesFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 0}, {name: memory, weight: null}]
"""


def test_a_config_in_kube_schedulers_v1_form_schedules(cluster: Cluster,
                                                       start_scheduler: Callable[..., Running]) -> None:
    for i in range(3):
        cluster.create(node(f"n{i}", cpu="4", memory="8Gi"))
    for i in range(3):
        cluster.create(pod(f"packed-{i}", cpu="500m", memory="256Mi", schedulerName="packer"))
    start_scheduler(KUBE_FORM)
    eventually(lambda: len(cluster.bound()) == 3, what="the three pods bound")
    assert len(set(cluster.bound().values())) == 1, "MostAllocated (weights defaulted to 1) packs them on one node"
    [event] = cluster.wait_events("packed-0", "Scheduled")
    assert event["reportingComponent"] == "packer"
