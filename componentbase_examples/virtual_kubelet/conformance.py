"""A provider's conformance tests, to import into its own test suite (upstream's importable e2e suite).

Subclass ``ProviderConformance`` in a pytest module, name the provider and the plugins that offer it, and
pytest runs every test below against a loopback API server with the virtual kubelet in-process (one
node per subclass, each test on pods of its own)::

    from componentbase_examples.virtual_kubelet.conformance import ProviderConformance
    import mypackage.provider

    class TestMyProvider(ProviderConformance):
        plugins = (mypackage.provider,)   # what offers it (not needed for "mock" and "process")
        provider = "mine"
        provider_config = "region: test\\n"  # the --provider-config file's text, if it takes one

        def config_text(self, tmp_path):  # or per node, e.g. to give it a folder of its own
            return f"region: test\\nstateDir: {tmp_path}\\n"

The tests check what the cluster sees of a provider (the node registers Ready with the capacity the provider
gives it; a pod on the node reaches Running or Succeeded with a status per container; a graceful and a
forced delete end the pod in the provider and in the API; a pod of another node is not the provider's) and
what the provider says of itself (``get_pods`` lists the pod, then no longer does). Needs pytest and the
official client, as the project's test extra installs them.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

import componentbase
from componentbase.testing import LoopbackAPIServer, eventually, free_port
from componentbase_examples.virtual_kubelet.provider import installed_providers
from componentbase_examples.virtual_kubelet.provider_types import ProviderContext, ProviderSpec

__all__ = ["ConformanceNode", "ProviderConformance"]

NODE = "conformance"


class _Capture:
    """Offers the chosen provider again, as ``conformance``, keeping the object it builds."""

    def __init__(self, spec: ProviderSpec) -> None:
        self.spec = spec
        self.built: object | None = None

    def _build(self, context: ProviderContext) -> object:
        self.built = self.spec.factory(context)
        return self.built

    @componentbase.hookimpl
    def virtual_kubelet_providers(self) -> list[ProviderSpec]:
        return [ProviderSpec(name=NODE, factory=self._build, config_type=self.spec.config_type,
                             validate=self.spec.validate)]


class ConformanceNode:
    """A virtual kubelet running the provider under test, the API server it registered with, and the provider."""

    def __init__(self, server: LoopbackAPIServer, capture: _Capture, timeout: float) -> None:
        from kubernetes import client

        self.server = server
        self.capture = capture
        self.timeout = timeout
        self.api = server.api_client()
        self.core: Any = client.CoreV1Api(self.api)
        self._thread: threading.Thread | None = None  # the virtual kubelet's, once it runs
        self._err = io.StringIO()  # its log

    @property
    def provider(self) -> Any:
        """The provider object the virtual kubelet built (its methods are its hooks)."""
        assert self.capture.built is not None, "the provider was not built"
        return self.capture.built

    def pod(self, name: str, node: str = NODE, containers: int = 1) -> dict[str, Any]:
        """A pod for ``node``, created in ``default``."""
        body = {"metadata": {"name": name, "namespace": "default"},
                "spec": {"nodeName": node, "containers": [
                    {"name": f"c{i}", "image": "busybox", "command": ["sleep", "3600"]} for i in range(containers)]}}
        created: dict[str, Any] = self.api.sanitize_for_serialization(self.core.create_namespaced_pod("default", body))
        return created

    def read(self, name: str) -> dict[str, Any] | None:
        from kubernetes.client import ApiException

        try:
            found: dict[str, Any] = self.api.sanitize_for_serialization(self.core.read_namespaced_pod(name, "default"))
            return found
        except ApiException as err:
            if err.status == 404:
                return None
            raise

    def provider_has(self, name: str) -> bool:
        """Whether the provider's ``get_pods`` lists the pod ``default/name``."""
        pods = self.provider.get_pods() or []
        return any((p.get("metadata") or {}).get("name") == name for p in pods)


class ProviderConformance:
    """The suite: subclass it with ``provider`` (and ``plugins``, ``provider_config``) set."""

    plugins: ClassVar[Sequence[object]] = ()
    provider: ClassVar[str] = "mock"
    provider_config: ClassVar[str | None] = None
    #: Seconds a pod may take to reach each state.
    timeout: ClassVar[float] = 30.0

    def config_text(self, tmp_path: Path) -> str | None:
        """The ``--provider-config`` file's text for the class's node (``tmp_path`` is the node's own folder)."""
        return self.provider_config

    @pytest.fixture(scope="class")
    @classmethod
    def conformance_node(cls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConformanceNode]:
        """One virtual kubelet (and API server) for the class's tests, each of which makes pods of its own
        (``node`` deletes them after it): a node per test cost a start and a stop each time."""
        from componentbase_examples.virtual_kubelet.__main__ import new_command

        command = new_command(cls.plugins)
        installed = installed_providers(command.plugins)
        assert cls.provider in installed, f"no provider {cls.provider!r}: the plugins offer {sorted(installed)}"
        capture = _Capture(installed[cls.provider])
        command.plugins.register(capture)
        args = [f"--provider={NODE}", f"--nodename={NODE}", f"--listen-port={free_port()}", "--metrics-addr="]
        folder = tmp_path_factory.mktemp("conformance")
        text = cls().config_text(folder)  # an instance, as pytest makes one for each test
        if text is not None:
            config = folder / "provider.yaml"
            config.write_text(text)
            args.append(f"--provider-config={config}")
        with pytest.MonkeyPatch.context() as monkeypatch, LoopbackAPIServer() as server:
            monkeypatch.setenv("VKUBELET_POD_IP", "127.0.0.1")
            args.append(f"--kubeconfig={server.kubeconfig_path}")
            stop, err, code = threading.Event(), io.StringIO(), []
            thread = threading.Thread(target=lambda: code.append(command.execute(
                args, stdout=io.StringIO(), stderr=err, stop=stop)), name="virtual-kubelet-under-test", daemon=True)
            thread.start()
            running = ConformanceNode(server, capture, cls.timeout)
            running._thread, running._err = thread, err
            try:
                eventually(lambda: _ready(running) or (not thread.is_alive() and _failed(err)), cls.timeout,
                           what=f"node {NODE} Ready")
                yield running
            finally:
                stop.set()
                thread.join(cls.timeout)
                running.api.close()
            assert not thread.is_alive(), "the virtual kubelet did not stop"
            assert code == [0], err.getvalue()[-2000:]

    @pytest.fixture
    def node(self, conformance_node: ConformanceNode) -> Iterator[ConformanceNode]:
        """The class's node, running; the pods the test made are deleted after it (a provider's processes may
        outlive its kubelet), so the next test starts from a provider holding none."""
        if conformance_node._thread is not None and not conformance_node._thread.is_alive():
            _failed(conformance_node._err)
        yield conformance_node
        _delete_all(conformance_node)

    def test_the_node_registers_ready_with_the_providers_capacity(self, node: ConformanceNode) -> None:
        status = node.api.sanitize_for_serialization(node.core.read_node(NODE))["status"]
        assert {"cpu", "memory", "pods"} <= set(status.get("capacity") or {}), status.get("capacity")
        assert {"cpu", "memory", "pods"} <= set(status.get("allocatable") or {}), status.get("allocatable")

    def test_a_pod_runs_and_its_status_reaches_the_api(self, node: ConformanceNode) -> None:
        node.pod("two", containers=2)
        running = eventually(lambda: _phase_in(node.read("two"), "Running", "Succeeded"), self.timeout,
                             what="pod two Running or Succeeded")
        assert running is not None
        names = sorted(s["name"] for s in running["status"].get("containerStatuses") or ())
        assert names == ["c0", "c1"], running["status"]
        if running["status"]["phase"] == "Running":
            assert node.provider_has("two")

    def test_a_graceful_delete_ends_the_pod_in_the_provider_and_the_api(self, node: ConformanceNode) -> None:
        node.pod("graceful")
        eventually(lambda: _phase_in(node.read("graceful"), "Running", "Succeeded"), self.timeout, what="running")
        node.core.delete_namespaced_pod("graceful", "default")
        eventually(lambda: node.read("graceful") is None, self.timeout, what="pod graceful gone from the API")
        assert not node.provider_has("graceful")

    def test_a_forced_delete_ends_the_pod_in_the_provider(self, node: ConformanceNode) -> None:
        node.pod("forced")
        eventually(lambda: node.provider_has("forced"), self.timeout, what="pod forced in the provider")
        node.core.delete_namespaced_pod("forced", "default", grace_period_seconds=0)
        eventually(lambda: not node.provider_has("forced"), self.timeout, what="pod forced gone from the provider")
        assert node.read("forced") is None

    def test_a_pod_of_another_node_is_not_the_providers(self, node: ConformanceNode) -> None:
        node.pod("elsewhere", node="another-node")
        node.pod("here")
        eventually(lambda: node.provider_has("here"), self.timeout, what="pod here in the provider")
        assert not node.provider_has("elsewhere")
        assert not (node.read("elsewhere") or {}).get("status", {}).get("containerStatuses")


def _ready(node: ConformanceNode) -> bool:
    from kubernetes.client import ApiException

    try:
        conditions = node.core.read_node(NODE).status.conditions or []
    except ApiException:
        return False
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


def _delete_all(node: ConformanceNode) -> None:
    for pod in node.core.list_namespaced_pod("default").items:
        node.core.delete_namespaced_pod(pod.metadata.name, "default", grace_period_seconds=0)
    eventually(lambda: not (node.provider.get_pods() or []), node.timeout, what="the provider to hold no pod")


def _failed(err: io.StringIO) -> bool:
    raise AssertionError(f"the virtual kubelet exited: {err.getvalue()[-2000:]}")


def _phase_in(pod: dict[str, Any] | None, *phases: str) -> dict[str, Any] | None:
    return pod if pod is not None and (pod.get("status") or {}).get("phase") in phases else None
