"""``--provider=mock``: accepts every pod and reports it Running with ready containers, as upstream's mock.

Nothing runs; the provider only keeps pods in memory. It is what the benchmark and most tests drive, and
the smallest complete example of a provider.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import attrs

import componentbase
from componentbase import field
from componentbase.util import deepcopy_json
from componentbase_examples.virtual_kubelet.provider_types import PodNotFound, ProviderContext, ProviderSpec

__all__ = ["SPEC", "MockConfig", "MockProvider"]

Pod = dict[str, Any]


@attrs.define(kw_only=True)
class MockConfig:
    """``--provider-config`` for the mock: the node's capacity (upstream's defaults)."""

    cpu: str = "20"
    memory: str = "100Gi"
    pods: str = "20"
    #: Any other resource the node advertises (``nvidia.com/gpu: "2"``).
    others: dict[str, str] = attrs.field(factory=dict)
    provider_id: str = ""


def validate_config(cfg: MockConfig) -> list[Exception]:
    errs: list[Exception] = []
    for name, value in [("cpu", cfg.cpu), ("memory", cfg.memory), ("pods", cfg.pods), *(
            (f"others[{k}]", v) for k, v in sorted(cfg.others.items()))]:
        try:
            componentbase.util.parse_quantity(value)
        except componentbase.util.QuantityError as err:
            errs.append(field.invalid(name, value, str(err).split(": ", 1)[-1]))
    return errs


def _key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _key_of(pod: Pod) -> str:
    meta = pod.get("metadata") or {}
    return _key(str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def _terminated(cs: dict[str, Any], finished: str) -> dict[str, Any]:
    """A new container status: the container ended as the mock ends it when its pod is deleted."""
    started = ((cs.get("state") or {}).get("running") or {}).get("startedAt")
    return {**cs, "ready": False,
            "state": {"terminated": {"exitCode": 0, "reason": "MockProviderPodContainerDeleted",
                                     "message": "Mock provider terminated container upon deletion",
                                     "startedAt": started, "finishedAt": finished}}}


class MockProvider:
    """Pods in a dict; every change is told to the pod controller through ``notify_pods``.

    A stored pod is never changed afterwards (a change stores a new dict), so the pod told to
    ``notify_pods`` needs no copy: the controller keeps it as it was; ``get_pod`` still hands out copies.
    """

    HOST_IP = "1.2.3.4"
    POD_IP = "5.6.7.8"

    def __init__(self, context: ProviderContext) -> None:
        self.context = context
        self.config: MockConfig = context.config if isinstance(context.config, MockConfig) else MockConfig()
        self._lock = threading.Lock()
        self._pods: dict[str, Pod] = {}
        self._notify: Callable[[Pod], None] = lambda pod: None

    # --- pods -----------------------------------------------------------------------------------

    @componentbase.hookimpl
    def create_pod(self, pod: Pod) -> None:
        from componentbase.client import format_time  # the client: loaded by a running node, not by --help

        started = format_time()
        # The pod controller hands over its own deep copy; a shallow one keeps the caller's dict as it was.
        running = dict(pod)
        spec = running.get("spec") or {}
        running["status"] = {
            "phase": "Running",
            "hostIP": self.context.internal_ip or self.HOST_IP,
            "podIP": self.POD_IP,
            "startTime": started,
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": started}
                           for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "containerStatuses": [{
                "name": c.get("name"), "image": c.get("image", ""), "imageID": "", "ready": True,
                "started": True, "restartCount": 0, "state": {"running": {"startedAt": started}},
            } for c in spec.get("containers") or ()],
        }
        with self._lock:
            self._pods[_key_of(pod)] = running
        self._notify(running)

    @componentbase.hookimpl
    def update_pod(self, pod: Pod) -> None:
        with self._lock:
            old = self._pods.get(_key_of(pod))
            updated = deepcopy_json(pod)
            if old is not None:
                updated["status"] = old.get("status")
            self._pods[_key_of(pod)] = updated
        self._notify(updated)

    @componentbase.hookimpl
    def delete_pod(self, pod: Pod) -> None:
        with self._lock:
            gone = self._pods.pop(_key_of(pod), None)
        if gone is None:
            raise PodNotFound(f'pod "{_key_of(pod)}" is not known to the provider')
        from componentbase.client import format_time

        finished = format_time()
        status = {**(gone.get("status") or {}), "phase": "Succeeded", "reason": "MockProviderPodDeleted"}
        if "containerStatuses" in status:
            status["containerStatuses"] = [_terminated(cs, finished) for cs in status["containerStatuses"] or ()]
        self._notify({**gone, "status": status})

    @componentbase.hookimpl
    def get_pod(self, namespace: str, name: str) -> Pod | None:
        with self._lock:
            pod = self._pods.get(_key(namespace, name))
            return deepcopy_json(pod) if pod is not None else None

    @componentbase.hookimpl
    def get_pod_status(self, namespace: str, name: str) -> dict[str, Any] | None:
        pod = self.get_pod(namespace, name)
        if pod is None:
            raise PodNotFound(f'pod "{namespace}/{name}" is not known to the provider')
        status: dict[str, Any] = pod.get("status") or {}
        return status

    @componentbase.hookimpl
    def get_pods(self) -> list[Pod]:
        with self._lock:
            return [deepcopy_json(p) for p in self._pods.values()]

    @componentbase.hookimpl
    def notify_pods(self, callback: Callable[[Pod], None]) -> None:
        self._notify = callback

    # --- node -----------------------------------------------------------------------------------

    def capacity(self) -> dict[str, str]:
        return {"cpu": self.config.cpu, "memory": self.config.memory, "pods": self.config.pods,
                **self.config.others}

    @componentbase.hookimpl
    def configure_node(self, node: dict[str, Any]) -> None:
        status = node.setdefault("status", {})
        status["capacity"] = self.capacity()
        status["allocatable"] = self.capacity()
        if self.context.internal_ip:
            status["addresses"] = [{"type": "InternalIP", "address": self.context.internal_ip}]
        if self.config.provider_id:
            node.setdefault("spec", {})["providerID"] = self.config.provider_id
        labels = node.setdefault("metadata", {}).setdefault("labels", {})
        labels["node.kubernetes.io/exclude-from-external-load-balancers"] = "true"

    @componentbase.hookimpl
    def ping(self) -> None:
        return None


SPEC = ProviderSpec(name="mock", factory=MockProvider, config_type=MockConfig,
                    validate=lambda cfg: validate_config(cfg))
