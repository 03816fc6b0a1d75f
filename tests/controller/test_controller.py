"""A Controller reconciles what its watches name: errors retried with backoff, requeues, predicates, owners."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Iterator

import pytest

from componentbase.client import ObjectClient
from componentbase.controller import (
    Controller,
    Event,
    Request,
    Result,
    enqueue_owner,
    generation_changed,
    labels_changed,
)
from componentbase.informers import InformerFactory
from componentbase.testing import LoopbackAPIServer, eventually
from componentbase.workqueue import ItemExponentialFailureRateLimiter
from tests.controller.helpers import configmap


@pytest.fixture
def factory(kube_apiserver: LoopbackAPIServer) -> Iterator[InformerFactory]:
    f = InformerFactory(kube_apiserver.api_client())
    yield f


def _run(controller: Controller, factory: InformerFactory) -> tuple[threading.Event, threading.Thread]:
    stop = threading.Event()
    factory.start(stop)
    assert factory.wait_for_cache_sync(10)
    thread = threading.Thread(target=controller.run, args=(stop,))
    thread.start()
    return stop, thread


@pytest.mark.integration
def test_every_cached_object_and_each_change_is_reconciled_by_key(factory: InformerFactory) -> None:
    objects = ObjectClient(factory.api_client)
    objects.create(configmap("early", hello="true"))
    seen: Counter[Request] = Counter()
    cms = factory.for_kind("v1", "ConfigMap", label_selector="hello=true")
    controller = Controller("count", lambda req: seen.update([req])).watch(cms)
    stop, thread = _run(controller, factory)
    try:
        eventually(lambda: seen[Request("default", "early")], what="the cached object's reconcile")
        objects.create(configmap("late", hello="true"))
        eventually(lambda: seen[Request("default", "late")], what="the new object's reconcile")
    finally:
        stop.set()
        thread.join(10)
        factory.join(10)
    assert not thread.is_alive()


@pytest.mark.integration
def test_a_failing_reconcile_is_logged_with_its_key_and_retried_with_backoff(
        factory: InformerFactory, caplog: pytest.LogCaptureFixture) -> None:
    ObjectClient(factory.api_client).create(configmap("flaky"))
    attempts: list[Request] = []

    def reconcile(req: Request) -> None:
        attempts.append(req)
        if len(attempts) < 3:
            raise RuntimeError("not yet")

    controller = Controller("flaky", reconcile,
                            rate_limiter=ItemExponentialFailureRateLimiter(0.01, 1.0)).watch(
        factory.for_kind("v1", "ConfigMap"))
    stop, thread = _run(controller, factory)
    try:
        with caplog.at_level(logging.ERROR, "componentbase.controller"):
            eventually(lambda: len(attempts) >= 3, what="two retries")
    finally:
        stop.set()
        thread.join(10)
        factory.join(10)
    assert set(attempts) == {Request("default", "flaky")}
    errors = [r.getMessage() for r in caplog.records if "Reconciler error" in r.getMessage()]
    assert len(errors) == 2 and "controller=flaky key=default/flaky (retry 1 in 0.010s)" in errors[0]
    assert "(retry 2 in 0.020s)" in errors[1]  # the key's exponential backoff, doubling
    assert "RuntimeError: not yet" in errors[0]


@pytest.mark.integration
def test_requeue_after_reconciles_again_later(factory: InformerFactory) -> None:
    ObjectClient(factory.api_client).create(configmap("periodic"))
    times: list[Request] = []

    def reconcile(req: Request) -> Result:
        times.append(req)
        return Result(requeue_after=0.05)

    controller = Controller("periodic", reconcile).watch(factory.for_kind("v1", "ConfigMap"))
    stop, thread = _run(controller, factory)
    try:
        eventually(lambda: len(times) >= 3, what="requeued reconciles")
    finally:
        stop.set()
        thread.join(10)
        factory.join(10)


@pytest.mark.unit
def test_predicates_pass_creates_and_deletes_and_filter_updates() -> None:
    old = {"metadata": {"generation": 1, "labels": {"a": "1"}}}
    same = {"metadata": {"generation": 1, "labels": {"a": "2"}}}
    bumped = {"metadata": {"generation": 2, "labels": {"a": "1"}}}
    assert generation_changed(Event("ADDED", old)) and generation_changed(Event("DELETED", old))
    assert not generation_changed(Event("MODIFIED", same, old))
    assert generation_changed(Event("MODIFIED", bumped, old))
    assert labels_changed(Event("MODIFIED", same, old)) and not labels_changed(Event("MODIFIED", bumped, old))


@pytest.mark.unit
def test_owners_are_matched_by_group_and_kind_and_controller_only_by_default() -> None:
    rs = {"metadata": {"namespace": "ns", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "controller": True},
        {"apiVersion": "apps/v1beta2", "kind": "Deployment", "name": "old-version"},
        {"apiVersion": "example.com/v1", "kind": "Deployment", "name": "other-group", "controller": True},
    ]}}
    assert list(enqueue_owner("apps/v1", "Deployment")(rs)) == [Request("ns", "web")]
    assert list(enqueue_owner("apps/v1", "Deployment", only_controller=False)(rs)) == [
        Request("ns", "web"), Request("ns", "old-version")]


@pytest.mark.unit
def test_a_controller_needs_a_worker() -> None:
    with pytest.raises(ValueError, match="max_concurrent_reconciles must be at least 1"):
        Controller("none", lambda req: None, max_concurrent_reconciles=0)


@pytest.mark.integration
def test_reconciles_are_counted_with_controller_runtimes_metric_names(factory: InformerFactory) -> None:
    from componentbase.metrics import Metrics

    ObjectClient(factory.api_client).create(configmap("m1"))
    metrics = Metrics(process_metrics=False)
    calls: list[Request] = []

    def reconcile(req: Request) -> None:
        calls.append(req)
        if len(calls) == 1:
            raise RuntimeError("first time fails")

    controller = Controller("counted", reconcile, metrics=metrics,
                            rate_limiter=ItemExponentialFailureRateLimiter(0.01, 1.0)).watch(
        factory.for_kind("v1", "ConfigMap"))
    stop, thread = _run(controller, factory)
    try:
        eventually(lambda: len(calls) >= 2, what="the retry")
    finally:
        stop.set()
        thread.join(10)
        factory.join(10)
    text = metrics.render().decode()
    assert 'controller_runtime_reconcile_total{controller="counted",result="error"} 1.0' in text
    assert 'controller_runtime_reconcile_total{controller="counted",result="success"} 1.0' in text
    assert 'controller_runtime_reconcile_errors_total{controller="counted"} 1.0' in text
    assert 'controller_runtime_reconcile_time_seconds_count{controller="counted"} 2.0' in text
    assert 'controller_runtime_max_concurrent_reconciles{controller="counted"} 1.0' in text
    # client-go's workqueue metrics of the controller's queue: one add, one retry after the failure
    assert 'workqueue_adds_total{name="counted"} 2.0' in text
    assert 'workqueue_retries_total{name="counted"} 1.0' in text
    assert 'workqueue_queue_duration_seconds_count{name="counted"} 2.0' in text
    assert 'workqueue_work_duration_seconds_count{name="counted"} 2.0' in text
    assert 'workqueue_depth{name="counted"} 0.0' in text


@pytest.mark.unit
def test_keys_from_a_source_are_reconciled_and_the_source_starts_with_each_run() -> None:
    """Keys no informer carries (a backend's callback, its own list): given at each start, then as they come."""
    seen: Counter[Request] = Counter()
    handed: list[object] = []
    controller = Controller("backend", lambda req: seen.update([req]))
    assert not controller.enqueue(Request("", "early"))  # not running: dropped, the start lists what is known

    def start(enqueue: object) -> None:
        handed.append(enqueue)
        controller.enqueue(Request("", "listed"))

    controller.watch_source(start)
    for run in range(2):
        stop = threading.Event()
        thread = threading.Thread(target=controller.run, args=(stop,))
        thread.start()
        eventually(lambda run=run: seen[Request("", "listed")] == run + 1, what="the listed key's reconcile")
        assert controller.enqueue(Request("", "called-back"))
        eventually(lambda run=run: seen[Request("", "called-back")] == run + 1, what="the called-back key")
        stop.set()
        thread.join(10)
        assert not thread.is_alive()
    assert len(handed) == 2 and seen[Request("", "early")] == 0
    assert not controller.enqueue(Request("", "late"))


@pytest.mark.integration
def test_a_stopped_controller_drops_its_backlog_instead_of_working_through_it() -> None:
    """A deposed leader must not go on reconciling a queue of keys (its writes are refused anyway)."""
    release = threading.Event()
    seen: list[Request] = []

    def reconcile(req: Request) -> None:
        seen.append(req)
        release.wait(10)

    controller = Controller("backlog", reconcile).watch_source(
        lambda enqueue: [enqueue(Request("", str(i))) for i in range(100)])
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,))
    thread.start()
    eventually(lambda: seen, what="the first key in work")
    stop.set()
    eventually(lambda: not controller.enqueue(Request("", "late")), what="the controller stopping")
    release.set()  # the key in hand finishes; the 99 queued are not reconciled
    thread.join(10)
    assert not thread.is_alive() and seen == [Request("", "0")]
