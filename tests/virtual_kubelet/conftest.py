"""Running the example virtual kubelet against the loopback API server, in-process, with short timings."""

from __future__ import annotations

import contextlib
import io
import json
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from componentbase.serving import configz
from componentbase.testing import (
    LoopbackAPIServer,
    User,
    eventually,
)
from componentbase_examples.virtual_kubelet.node import Node
from componentbase_examples.virtual_kubelet.provider import Provider
from componentbase_examples.virtual_kubelet.provider_types import ProviderContext
from componentbase_examples.virtual_kubelet.resources import ResourceManager
from componentbase_examples.virtual_kubelet.timings import Timings

ADMIN = "admin-token"
VIEWER = "viewer-token"
NOBODY = "nobody-token"
PATHS = "paths-token"

FAST = Timings(ping_interval=0.05, ping_timeout=1.0, status_interval=0.3, lease_duration=1,
               lease_renew_interval=0.1, status_poll_interval=0.1, lost_pod_grace=0.0, retry_initial=0.02,
               retry_max=0.2, request_timeout=5.0)


def free_ports(n: int) -> list[int]:
    """Ports free right now, all different (they are held together while picked)."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def serve_kubelet_api_on_localhost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Set the environment the command reads its kubelet API from: a fresh TLS pair (whose chain file is
    returned, for clients to trust) and 127.0.0.1 as the node's and the pods' address."""
    from componentbase.serving import generate_self_signed

    cert, key = generate_self_signed("localhost", ["127.0.0.1"])
    (tmp_path / "vk.crt").write_bytes(cert)
    (tmp_path / "vk.key").write_bytes(key)
    monkeypatch.setenv("APISERVER_CERT_LOCATION", str(tmp_path / "vk.crt"))
    monkeypatch.setenv("APISERVER_KEY_LOCATION", str(tmp_path / "vk.key"))
    monkeypatch.setenv("VKUBELET_POD_IP", "127.0.0.1")
    return tmp_path / "vk.crt"


@contextlib.contextmanager
def authorizing_server(folder: Path) -> Iterator[LoopbackAPIServer]:
    """A server whose kubeconfig carries the admin token. The viewer may get nodes/proxy, as RBAC grants a
    kubelet's API; "paths" may get the /containerLogs/* path, a grant the kubelet never asks about."""
    policy = folder / "policy.json"
    policy.write_text(json.dumps([{"user": "viewer", "verbs": ["get"], "resources": ["nodes/proxy"]},
                                  {"user": "paths", "verbs": ["get"], "paths": ["/containerLogs/*"]}]))
    tokens = {ADMIN: User("admin", "1", ("system:masters",)), VIEWER: User("viewer", "2"),
              NOBODY: User("nobody", "3"), PATHS: User("paths", "4")}
    with LoopbackAPIServer(tokens=tokens, authorization_policy_file=policy) as server:
        yield server


@pytest.fixture
def apiserver(tmp_path: Path) -> Iterator[LoopbackAPIServer]:
    """``authorizing_server`` for one test."""
    with authorizing_server(tmp_path) as server:
        yield server


def clear_pods(kube: Kube) -> None:
    """Delete every pod of ``default`` and wait until they are gone, for a node shared by a module's tests:
    gone means the node confirmed the graceful deletion, so the pods' processes have ended (the leak check
    looks right after the test). A pod no node of ours runs has nobody to confirm it: it goes at once."""
    def names() -> list[tuple[str, str]]:
        items = json.loads(kube.core.list_namespaced_pod("default", _preload_content=False).data)["items"]
        return [(p["metadata"]["name"], p["spec"].get("nodeName") or "") for p in items]

    for name, node in names():
        kube.delete_pod(name, None if node == "vk" else 0)
    eventually(lambda: not names(), 30, what="the test's pods to be deleted")


@pytest.fixture
def kube(apiserver: LoopbackAPIServer) -> Iterator[Kube]:
    api = apiserver.api_client()
    try:
        yield Kube(api)
    finally:
        api.close()


class Kube:
    """The official client, answering plain dicts."""

    def __init__(self, api: Any) -> None:
        from kubernetes import client

        self.api = api
        self.core = client.CoreV1Api(api)
        self.coordination = client.CoordinationV1Api(api)

    def node(self, name: str = "vk") -> dict[str, Any] | None:
        try:
            return json.loads(self.core.read_node(name, _preload_content=False).data)
        except Exception as err:
            if getattr(err, "status", None) == 404:
                return None
            raise

    def lease(self, name: str = "vk") -> dict[str, Any] | None:
        try:
            return json.loads(self.coordination.read_namespaced_lease(name, "kube-node-lease",
                                                                      _preload_content=False).data)
        except Exception as err:
            if getattr(err, "status", None) == 404:
                return None
            raise

    def create_pod(self, name: str, containers: list[dict[str, Any]], node: str = "vk", **spec: Any
                   ) -> dict[str, Any]:
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"nodeName": node, "containers": containers, **spec}}
        return json.loads(self.core.create_namespaced_pod("default", body, _preload_content=False).data)

    def pod(self, name: str) -> dict[str, Any] | None:
        try:
            return json.loads(self.core.read_namespaced_pod(name, "default", _preload_content=False).data)
        except Exception as err:
            if getattr(err, "status", None) == 404:
                return None
            raise

    def phase(self, name: str) -> str | None:
        pod = self.pod(name)
        return (pod or {}).get("status", {}).get("phase")

    def delete_pod(self, name: str, grace: int | None = None) -> None:
        body = {} if grace is None else {"gracePeriodSeconds": grace}
        self.core.delete_namespaced_pod(name, "default", body=body, _preload_content=False)

    def events(self) -> list[dict[str, Any]]:
        return json.loads(self.core.list_namespaced_event("default", _preload_content=False).data)["items"]


def ready(node: dict[str, Any] | None) -> bool:
    conds = (node or {}).get("status", {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conds)


def new_provider(factory: Callable[[ProviderContext], object], name: str = "mock", config: Any = None,
                 resources: ResourceManager | None = None) -> Provider:
    ctx = ProviderContext(node_name="vk", operating_system="Linux", internal_ip="", daemon_port=10250,
                          cluster_domain="cluster.local", config=config, resources=resources or ResourceManager())
    return Provider(name, factory(ctx))


class Running:
    """A ``Node`` run in a thread; ``stop()`` ends it and waits."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.stop_event = threading.Event()
        self.error: list[BaseException] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.node.run(self.stop_event)
        except BaseException as err:
            self.error.append(err)

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(15)
        assert not self.thread.is_alive(), "the node did not stop"


@pytest.fixture
def run_node(kube: Kube) -> Iterator[Callable[..., Running]]:
    started: list[Running] = []

    def start(provider: Provider, **kw: Any) -> Running:
        kw.setdefault("timings", FAST)
        kw.setdefault("resync_period", 0.5)
        kw.setdefault("workers", 4)
        resources = kw.pop("resources", None) or ResourceManager()
        running = Running(Node(kube.api, provider, name=kw.pop("name", "vk"), resources=resources, **kw))
        started.append(running)
        eventually(lambda: running.node.ready.is_set() or running.error, 10, what="the node to be ready")
        assert not running.error, running.error
        return running

    yield start
    for running in started:
        if running.thread.is_alive():
            running.stop()


class Command:
    """``python -m componentbase_examples.virtual_kubelet`` run in-process in a thread, as ``main`` would run it."""

    def __init__(self, args: list[str], plugins: list[object] = ()) -> None:  # type: ignore[assignment]
        from componentbase_examples.virtual_kubelet.__main__ import new_command

        self.cmd = new_command(plugins)
        self.cmd.configz_registry = configz.Registry()
        self.err = io.StringIO()
        self.stop_event = threading.Event()
        self.code: list[int] = []
        self.thread = threading.Thread(target=lambda: self.code.append(
            self.cmd.execute(args, stdout=io.StringIO(), stderr=self.err, stop=self.stop_event)), daemon=True)
        self.thread.start()

    def stop(self) -> int:
        self.stop_event.set()
        self.thread.join(20)
        assert self.code, "the command did not return"
        return self.code[0]

    def wait(self, timeout: float = 20) -> int:
        self.thread.join(timeout)
        assert self.code, "the command did not return"
        return self.code[0]
