"""The example scheduler running in-process through its own ``Command``, against the loopback API server.

``cluster`` creates and reads objects as plain JSON through the official client; ``start_scheduler``
runs ``python -m componentbase_examples.scheduler``'s command in a thread with a config file (backoff 1 s, so retries
are quick) and stops it at the end of the test, checking it exited 0.
"""

from __future__ import annotations

import io
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kubernetes import client, watch

from componentbase.serving import configz
from componentbase.testing import LoopbackAPIServer, eventually
from componentbase_examples.scheduler.__main__ import new_command
from componentbase_examples.scheduler.podinfo import PodInfo, resource_amount

Obj = dict[str, Any]
T = TypeVar("T")


class Cluster:
    """Objects on the server as the API's JSON."""

    def __init__(self, api: client.ApiClient) -> None:
        self.api = api
        self.v1: Any = client.CoreV1Api(api)

    @staticmethod
    def _json(resp: Any) -> Any:
        return json.loads(resp.read())

    def create(self, obj: Obj) -> Obj:
        if obj["kind"] == "Node":
            return self._json(self.v1.create_node(obj, _preload_content=False))  # type: ignore[no-any-return]
        ns = obj["metadata"].get("namespace", "default")
        return self._json(self.v1.create_namespaced_pod(ns, obj, _preload_content=False))  # type: ignore[no-any-return]

    def delete_pod(self, name: str, namespace: str = "default") -> None:
        self.v1.delete_namespaced_pod(name, namespace, grace_period_seconds=0, _preload_content=False).read()

    def pods(self, namespace: str = "default") -> dict[str, Obj]:
        items = self._json(self.v1.list_namespaced_pod(namespace, _preload_content=False))["items"]
        return {p["metadata"]["name"]: p for p in items}

    def nodes(self) -> dict[str, Obj]:
        items = self._json(self.v1.list_node(_preload_content=False))["items"]
        return {n["metadata"]["name"]: n for n in items}

    def node_of(self, name: str, namespace: str = "default") -> str:
        pod = self._json(self.v1.read_namespaced_pod(name, namespace, _preload_content=False))
        return str(pod["spec"].get("nodeName") or "")

    def bound(self, namespace: str = "default") -> dict[str, str]:
        return {n: p["spec"]["nodeName"] for n, p in self.pods(namespace).items() if p["spec"].get("nodeName")}

    def events(self, namespace: str = "default") -> list[Obj]:
        return self._json(self.v1.list_namespaced_event(namespace, _preload_content=False))["items"]  # type: ignore[no-any-return]

    def events_for(self, pod: str, reason: str, namespace: str = "default") -> list[Obj]:
        return [e for e in self.events(namespace) if e["involvedObject"]["name"] == pod and e["reason"] == reason]

    def wait_events(self, pod: str, reason: str, namespace: str = "default") -> list[Obj]:
        """The pod's events of ``reason``, once there is one (events are written after the fact, by a child
        process that imports the client first: slow on a busy machine)."""
        found: list[Obj] = []

        def seen() -> bool:
            found[:] = self.events_for(pod, reason, namespace)
            return bool(found)

        eventually(seen, 30, what=f"a {reason} event for {pod}")
        return found

    def wait(self, resource: str, condition: Callable[[dict[str, Obj]], T], timeout: float, *, what: str) -> T:
        """Wait until ``condition`` holds for the ``resource`` objects by name ("pods" of default, "leases" of
        kube-system) and return its value: checked on a list, then after each change a watch from that list
        reports. Nothing is read while nothing changes, where polling read them ten times a second for as long
        as a process took to start."""
        lister: Any = {"pods": self.v1.list_namespaced_pod,
                       "leases": client.CoordinationV1Api(self.api).list_namespaced_lease}[resource]
        namespace = "kube-system" if resource == "leases" else "default"
        deadline = time.monotonic() + timeout
        listing = self._json(lister(namespace, _preload_content=False))
        objects: dict[str, Obj] = {o["metadata"]["name"]: o for o in listing["items"]}
        value = condition(objects)
        if value:
            return value
        events = watch.Watch().stream(lister, namespace, resource_version=listing["metadata"]["resourceVersion"],
                                      timeout_seconds=math.ceil(timeout), _request_timeout=timeout + 10,
                                      deserialize=False)
        try:
            for event in events:
                obj = event["object"]
                if event["type"] == "DELETED":
                    objects.pop(obj["metadata"]["name"], None)
                elif event["type"] in ("ADDED", "MODIFIED"):
                    objects[obj["metadata"]["name"]] = obj
                value = condition(objects)
                if value or time.monotonic() > deadline:
                    break
        finally:
            events.close()
        if not value:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}: last {value!r}")
        return value

    def lease_holder(self, name: str = "kube-scheduler", namespace: str = "kube-system") -> str:
        try:
            lease = self._json(client.CoordinationV1Api(self.api).read_namespaced_lease(
                name, namespace, _preload_content=False))
        except client.ApiException:
            return ""
        return str(lease["spec"].get("holderIdentity") or "")

    def condition(self, pod: str, namespace: str = "default") -> Obj | None:
        status = self._json(self.v1.read_namespaced_pod(pod, namespace, _preload_content=False)).get("status") or {}
        for c in status.get("conditions") or ():
            if c["type"] == "PodScheduled":
                return c  # type: ignore[no-any-return]
        return None

    def assert_no_overcommit(self) -> None:
        """Every node's bound pods fit its allocatable cpu, memory and pod count (the API's final state)."""
        nodes = self.nodes()
        used: dict[str, dict[str, int]] = {name: {} for name in nodes}
        for namespace in ("default", "other"):
            for pod in self.pods(namespace).values():
                node = pod["spec"].get("nodeName")
                if not node:
                    continue
                assert node in nodes, f"{pod['metadata']['name']} bound to unknown node {node}"
                totals = used[node]
                for name, amount in PodInfo(pod).requests.items():
                    totals[name] = totals.get(name, 0) + amount
                totals["pods"] = totals.get("pods", 0) + 1
        for name, totals in used.items():
            alloc = nodes[name]["status"]["allocatable"]
            for resource, amount in totals.items():
                assert amount <= resource_amount(resource, alloc.get(resource, "0")), \
                    f"node {name} overcommitted on {resource}: {amount} > {alloc.get(resource)}"


def bound(pods: dict[str, Obj]) -> dict[str, str]:
    """Pod name to node name, for the bound ones of ``pods`` (as ``Cluster.wait`` passes them)."""
    return {n: p["spec"]["nodeName"] for n, p in pods.items() if p["spec"].get("nodeName")}


def holder(leases: dict[str, Obj], name: str = "kube-scheduler") -> str:
    """The holder of lease ``name`` among ``leases`` (as ``Cluster.wait`` passes them), or ""."""
    return str((leases.get(name) or {}).get("spec", {}).get("holderIdentity") or "")


@pytest.fixture
def cluster(kube_client: client.ApiClient) -> Cluster:
    return Cluster(kube_client)


class Running:
    """The scheduler's ``Command`` executing in a thread, as ``python -m componentbase_examples.scheduler`` would."""

    def __init__(self, args: list[str], plugins: tuple[object, ...] = ()) -> None:
        self.command = new_command(plugins)
        self.command.configz_registry = configz.Registry()
        self.stop = threading.Event()
        self.err = io.StringIO()
        self.code: int | None = None
        self.thread = threading.Thread(target=self._run, args=(args,), name="scheduler-under-test", daemon=True)
        self.thread.start()

    def _run(self, args: list[str]) -> None:
        self.code = self.command.execute(args, stdout=io.StringIO(), stderr=self.err, stop=self.stop)

    def close(self, timeout: float = 20.0) -> int | None:
        self.stop.set()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the scheduler did not stop"
        return self.code


CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: {kubeconfig}
{client}leaderElection:
  leaderElect: false
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 1
"""


@pytest.fixture
def start_scheduler(kube_apiserver: LoopbackAPIServer, tmp_path: Path) -> Iterator[Callable[..., Running]]:
    """``start_scheduler(extra_yaml="", *flags, client=yaml, plugins=())``: run the scheduler (``client``: more
    lines of its clientConnection; ``plugins``: added to the default ones); stopped, and its exit code checked,
    after the test."""
    running: list[Running] = []

    def start(extra: str = "", *flags: str, client: str = "", plugins: tuple[object, ...] = ()) -> Running:
        path = tmp_path / f"config-{len(running)}.yaml"
        path.write_text(CONFIG.format(kubeconfig=kube_apiserver.kubeconfig_path, client=client) + extra)
        r = Running([f"--config={path}", "--secure-port=0", *flags], plugins)
        running.append(r)
        return r

    yield start
    for r in running:
        code = r.close()
        assert code == 0, r.err.getvalue()[-2000:]
