"""Pods bound to the node run through the provider: create, status, delete, failures, restarts, lost pods."""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

import pytest

import componentbase
from componentbase.testing import eventually
from componentbase_examples.virtual_kubelet.provider_types import PodNotFound
from componentbase_examples.virtual_kubelet.providers.mock import MockProvider
from tests.virtual_kubelet.conftest import Kube, new_provider

CONTAINER = [{"name": "c", "image": "nginx"}]


class Counting(MockProvider):
    """The mock, counting what it is asked to do."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.creates = 0
        self.deletes = 0

    @componentbase.hookimpl
    def create_pod(self, pod: dict[str, Any]) -> None:
        self.creates += 1
        super().create_pod(pod)

    @componentbase.hookimpl
    def delete_pod(self, pod: dict[str, Any]) -> None:
        self.deletes += 1
        super().delete_pod(pod)


@pytest.mark.integration
def test_bound_pod_becomes_running_with_container_statuses(kube: Kube, run_node: Any) -> None:
    run_node(new_provider(MockProvider))
    kube.create_pod("web", CONTAINER)
    eventually(lambda: kube.phase("web") == "Running", what="the pod to run")
    status = kube.pod("web")["status"]
    assert status["podIP"] == "5.6.7.8" and status["startTime"]
    (cs,) = status["containerStatuses"]
    assert cs["name"] == "c" and cs["ready"] is True and cs["state"]["running"]["startedAt"]
    assert {c["type"]: c["status"] for c in status["conditions"]}["Ready"] == "True"


@pytest.mark.integration
def test_pods_of_other_nodes_are_left_alone(kube: Kube, run_node: Any) -> None:
    provider = new_provider(Counting)
    run_node(provider)
    kube.create_pod("elsewhere", CONTAINER, node="other-node")
    kube.create_pod("here", CONTAINER)
    eventually(lambda: kube.phase("here") == "Running", what="the pod to run")
    assert kube.phase("elsewhere") == "Pending" and provider.impl.creates == 1  # type: ignore[attr-defined]


@pytest.mark.integration
def test_status_is_written_only_when_it_changes(kube: Kube, run_node: Any) -> None:
    run_node(new_provider(MockProvider), resync_period=0.1)
    kube.create_pod("web", CONTAINER)
    eventually(lambda: kube.phase("web") == "Running", what="the pod to run")
    rv = kube.pod("web")["metadata"]["resourceVersion"]
    time.sleep(0.5)  # several informer resyncs and provider polls
    assert kube.pod("web")["metadata"]["resourceVersion"] == rv


@pytest.mark.integration
def test_deleting_a_pod_deletes_it_in_the_provider_then_from_the_api(kube: Kube, run_node: Any) -> None:
    provider = new_provider(Counting)
    run_node(provider)
    kube.create_pod("web", CONTAINER)
    eventually(lambda: kube.phase("web") == "Running", what="the pod to run")
    kube.delete_pod("web")  # graceful: the API only marks it; the node finishes it
    eventually(lambda: kube.pod("web") is None, what="the pod to be removed")
    assert provider.impl.deletes == 1 and provider.get_pods() == []  # type: ignore[attr-defined]
    # Events are sent in the background: wait for them rather than race their sender.
    wanted = {"ProviderCreateSuccess", "ProviderDeleteSuccess"}
    eventually(lambda: wanted <= {e["reason"] for e in kube.events()}, what="the provider's events")


@pytest.mark.integration
def test_a_failing_provider_is_retried_with_backoff_and_reported(kube: Kube, run_node: Any) -> None:
    class Crashing(MockProvider):
        failures_left = 3

        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self.attempts: list[float] = []

        @componentbase.hookimpl
        def create_pod(self, pod: dict[str, Any]) -> None:
            self.attempts.append(time.monotonic())
            if self.failures_left > 0:
                self.failures_left -= 1
                raise RuntimeError("backend exploded")
            super().create_pod(pod)

    provider = new_provider(Crashing)
    seen: list[dict[str, Any]] = []
    watcher = threading.Thread(target=lambda: seen.append(eventually(
        lambda: (kube.pod("web") or {}).get("status", {}).get("reason") == "ProviderFailed" and kube.pod("web"),
        what="the ProviderFailed status")), daemon=True)
    run_node(provider)
    kube.create_pod("web", CONTAINER)
    watcher.start()
    eventually(lambda: kube.phase("web") == "Running", what="the pod to run after retries")
    watcher.join(5)
    (failed,) = seen
    assert failed["status"]["phase"] == "Pending" and failed["status"]["message"] == "backend exploded"
    assert "reason" not in kube.pod("web")["status"]  # the failure is cleared once it runs
    attempts = provider.impl.attempts  # type: ignore[attr-defined]
    gaps = [b - a for a, b in itertools.pairwise(attempts)]
    # backing off: each retry waits at least the controller's per-key backoff (5 ms, doubling), whatever
    # else the machine is doing (comparing the gaps with each other measured the machine's load instead)
    assert len(attempts) == 4 and all(gap >= 0.005 * 2**i for i, gap in enumerate(gaps)), gaps
    failed_events = eventually(lambda: [e for e in kube.events() if e["reason"] == "ProviderCreateFailed"],
                             what="the ProviderCreateFailed event")
    assert failed_events[0]["message"] == "backend exploded"
    assert failed_events[0]["type"] == "Warning"


@pytest.mark.integration
def test_a_failing_provider_fails_a_pod_that_never_restarts(kube: Kube, run_node: Any) -> None:
    class Broken(MockProvider):
        @componentbase.hookimpl
        def create_pod(self, pod: dict[str, Any]) -> None:
            raise ValueError("no such image in the backend")

    run_node(new_provider(Broken))
    kube.create_pod("job", CONTAINER, restartPolicy="Never")
    eventually(lambda: kube.phase("job") == "Failed", what="the pod to fail")
    assert kube.pod("job")["status"]["reason"] == "ProviderFailed"


@pytest.mark.integration
def test_a_restarted_node_adopts_the_pods_its_provider_runs(kube: Kube, run_node: Any) -> None:
    provider = new_provider(Counting)
    first = run_node(provider)
    kube.create_pod("web", CONTAINER)
    eventually(lambda: kube.phase("web") == "Running", what="the pod to run")
    first.stop()
    kube.create_pod("late", CONTAINER)  # bound while the node was down
    run_node(provider)
    eventually(lambda: kube.phase("late") == "Running", what="the late pod to run")
    assert provider.impl.creates == 2  # type: ignore[attr-defined]  # web was adopted, not created again
    assert kube.phase("web") == "Running"


@pytest.mark.integration
def test_pods_deleted_while_the_node_was_down_are_deleted_in_the_provider(kube: Kube, run_node: Any) -> None:
    provider = new_provider(Counting)
    first = run_node(provider)
    kube.create_pod("web", CONTAINER)
    eventually(lambda: kube.phase("web") == "Running", what="the pod to run")
    first.stop()
    kube.delete_pod("web", grace=0)
    run_node(provider)
    eventually(lambda: provider.get_pods() == [], what="the leaked pod to be deleted in the provider")


@pytest.mark.integration
def test_a_pod_made_again_while_the_node_was_down_replaces_the_providers_earlier_one(kube: Kube,
                                                                                     run_node: Any) -> None:
    provider = new_provider(Counting)
    first = run_node(provider)
    old_uid = kube.create_pod("web", CONTAINER)["metadata"]["uid"]
    eventually(lambda: kube.phase("web") == "Running", what="the pod to run")
    first.stop()
    kube.delete_pod("web", grace=0)
    new_uid = kube.create_pod("web", CONTAINER)["metadata"]["uid"]
    run_node(provider)
    eventually(lambda: [p["metadata"]["uid"] for p in provider.get_pods()] == [new_uid], what="the new pod to run")
    assert old_uid != new_uid and provider.impl.deletes == 1  # type: ignore[attr-defined]
    eventually(lambda: kube.phase("web") == "Running", what="the new pod to be Running")


class Polled(MockProvider):
    """The mock without ``notify_pods``: a synchronous provider, polled for statuses."""

    notify_pods = None  # type: ignore[assignment]  # not a hook implementation any more


@pytest.mark.integration
def test_a_pod_a_polled_provider_lost_is_failed(kube: Kube, run_node: Any) -> None:
    provider = new_provider(Polled)
    run_node(provider)
    kube.create_pod("web", CONTAINER)
    eventually(lambda: kube.phase("web") == "Running", what="the pod to run")
    provider.impl._pods.clear()  # type: ignore[attr-defined]  # the backend forgot it
    eventually(lambda: kube.phase("web") == "Failed", what="the lost pod to fail")
    status = kube.pod("web")["status"]
    assert status["reason"] == "NotFound"
    assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == -137


@pytest.mark.integration
def test_a_provider_without_notify_is_polled(kube: Kube, run_node: Any) -> None:
    provider = new_provider(Polled)
    assert not provider.implements("notify_pods")
    run_node(provider)
    kube.create_pod("web", CONTAINER)
    eventually(lambda: kube.phase("web") == "Running", what="the polled status to be written")


class Pushing(MockProvider):
    """An asynchronous provider: its pods' statuses change on its own schedule, and it says so; counts polls."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.polls = 0

    @componentbase.hookimpl
    def get_pod_status(self, namespace: str, name: str) -> dict[str, Any] | None:
        self.polls += 1
        return super().get_pod_status(namespace, name)

    def finish(self, namespace: str, name: str) -> None:
        """The backend's job ended: the pod Succeeded, told through the notify callback only."""
        with self._lock:
            pod = self._pods[f"{namespace}/{name}"]
            pod = self._pods[f"{namespace}/{name}"] = {**pod, "status": {**pod["status"], "phase": "Succeeded"}}
        self._notify(pod)


@pytest.mark.integration
def test_a_notifying_provider_is_never_polled(kube: Kube, run_node: Any) -> None:
    provider = new_provider(Pushing)
    impl: Pushing = provider.impl  # type: ignore[assignment]
    # Polls every 0.1 s and resyncs every 0.1 s would each ask for statuses many times over the test.
    running = run_node(provider, resync_period=0.1)
    kube.create_pod("web", CONTAINER)
    eventually(lambda: kube.phase("web") == "Running", what="the notified status to be written")
    impl.finish("default", "web")
    eventually(lambda: kube.phase("web") == "Succeeded", what="the pushed change to reach the API")
    time.sleep(10 * running.node.timings.status_poll_interval)  # ten poll intervals and resyncs, not one poll
    assert impl.polls == 0


@pytest.mark.unit
def test_the_mock_says_which_pod_it_does_not_know() -> None:
    provider = new_provider(MockProvider)
    try:
        provider.get_pod_status("default", "nope")
    except PodNotFound as err:
        assert "not known to the provider" in str(err)
    else:
        raise AssertionError("expected PodNotFound")


@pytest.mark.process
def test_a_restarted_node_keeps_the_processes_it_adopts(kube: Kube, run_node: Any, tmp_path: Any) -> None:
    from componentbase_examples.virtual_kubelet.providers.process.config import ProcessConfig
    from componentbase_examples.virtual_kubelet.providers.process.provider import ProcessProvider

    config = ProcessConfig(root=str(tmp_path), stop_containers_on_shutdown=True)
    provider = new_provider(ProcessProvider, "process", config)
    first = run_node(provider)
    kube.create_pod("sleeper", [{"name": "c", "image": "-", "command": ["sleep", "30"]}])
    eventually(lambda: kube.phase("sleeper") == "Running", what="the pod to run")
    (pid,) = provider.impl.pids("default", "sleeper").values()  # type: ignore[attr-defined]
    first.stop()
    run_node(provider)
    eventually(lambda: provider.implements("get_pods") and kube.phase("sleeper") == "Running", what="adoption")
    time.sleep(0.3)  # the sync of the adopted pod has run
    assert provider.impl.pids("default", "sleeper") == {"c": pid}  # type: ignore[attr-defined]
    assert len(provider.get_pods()) == 1
    provider.shutdown()
