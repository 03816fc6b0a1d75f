"""Nodes and pods as the API's JSON, and a default framework over them, for the scheduler tests."""

from __future__ import annotations

import random
from typing import Any

from componentbase_examples.scheduler import config, profiles
from componentbase_examples.scheduler.algorithm import SchedulingAlgorithm
from componentbase_examples.scheduler.framework import CycleState, Framework, Handle, Registry
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.registry import new_plugin_manager
from componentbase_examples.scheduler.snapshot import Snapshot


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", labels: dict[str, str] | None = None,
         taints: list[dict[str, str]] | None = None, unschedulable: bool = False,
         **extra: str) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods, **extra}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"taints": taints or [], "unschedulable": unschedulable},
            "status": {"allocatable": allocatable}}


def pod(name: str, cpu: str | None = "100m", memory: str | None = "128Mi", *, namespace: str = "default",
        **spec: Any) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container: dict[str, Any] = {"name": "app", "image": "app", "resources": {"requests": requests}}
    if "ports" in spec:
        container["ports"] = spec.pop("ports")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [container], **spec}}


def taint(key: str, effect: str = "NoSchedule", value: str = "") -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


def default_config() -> config.KubeSchedulerConfiguration:
    cfg = config.SCHEME.new(config.API_VERSION, config.KIND)
    assert isinstance(cfg, config.KubeSchedulerConfiguration)
    return cfg


def load_config(text: str) -> config.KubeSchedulerConfiguration:
    cfg = config.SCHEME.decode("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                               + text)
    assert isinstance(cfg, config.KubeSchedulerConfiguration)
    return cfg


def registry(*plugins: object) -> Registry:
    return Registry.from_plugin_manager(new_plugin_manager(plugins, entry_point_group=None))


class Cluster:
    """A snapshot, a framework for its profile and the algorithm: schedule pods and assume them."""

    def __init__(self, nodes: list[dict[str, Any]], cfg: config.KubeSchedulerConfiguration | None = None,
                 plugins: tuple[object, ...] = (), seed: int = 0) -> None:
        self.cfg = cfg or default_config()
        self.snapshot = Snapshot(nodes)
        frameworks = profiles.build_frameworks(self.cfg, registry(*plugins), Handle(self.snapshot))
        self.framework: Framework = next(iter(frameworks.values()))
        self.frameworks = frameworks
        self.algorithm = SchedulingAlgorithm(self.snapshot, self.cfg.percentage_of_nodes_to_score,
                                             random.Random(seed))

    def schedule(self, p: dict[str, Any], assume: bool = True) -> str:
        """The chosen node's name; raises FitError."""
        info = PodInfo(p)
        result = self.algorithm.schedule_pod(self.framework, CycleState(), info)
        if assume:
            self.snapshot.assume_pod(info, result.suggested_host)
        return result.suggested_host

    def fit_message(self, p: dict[str, Any]) -> str:
        """The filters' verdict: the FitError's message without what PostFilter (preemption) adds."""
        return self.fit_error(p).split(" preemption: ", 1)[0]

    def fit_error(self, p: dict[str, Any]) -> str:
        """The whole FitError message, PostFilter's part included."""
        from componentbase_examples.scheduler.algorithm import FitError

        try:
            host = self.schedule(p, assume=False)
        except FitError as e:
            return str(e)
        raise AssertionError(f"expected no fit, got {host}")
