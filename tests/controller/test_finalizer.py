"""A controller's own finalizer and owned children, through the official client against the loopback server.

One server and one Manager for the module: each test uses its own objects.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from componentbase.client import ObjectClient
from componentbase.controller import (
    Controller,
    FinalizerError,
    Manager,
    Request,
    has_finalizer,
    set_controller_reference,
)
from componentbase.controller._cleanup import Finalizing
from componentbase.informers import InformerFactory
from componentbase.testing import LoopbackAPIServer, eventually
from componentbase.workqueue import ItemExponentialFailureRateLimiter
from tests.controller.helpers import configmap

pytestmark = pytest.mark.integration

FINALIZER = "demo.example.com/cleanup"
BASE_DELAY = 0.05


@dataclass
class Web:
    """The module's Manager and what its controller saw."""

    mgr: Manager
    api: Any
    objects: ObjectClient
    #: Per object, whether the server showed our finalizer at each reconcile.
    reconciled: dict[str, list[bool]] = field(default_factory=dict)
    #: Per object, the monotonic time of each cleanup call.
    cleanups: dict[str, list[float]] = field(default_factory=dict)
    #: Objects whose cleanup raises.
    failing: set[str] = field(default_factory=set)
    #: Objects whose cleanup writes the object itself (through the Manager's client) before it returns.
    writing: set[str] = field(default_factory=set)
    standalone: Finalizing | None = None

    def exists(self, name: str) -> dict[str, Any] | None:
        try:
            got: dict[str, Any] = self.objects.get("v1", "ConfigMap", name, "default")
        except ApiException as err:
            if err.status == 404:
                return None
            raise
        return got


@pytest.fixture(scope="module")
def web() -> Iterator[Web]:
    with LoopbackAPIServer() as server:
        api = server.api_client()
        mgr = Manager(api)
        state = Web(mgr, api, ObjectClient(api))
        cms = mgr.informer("v1", "ConfigMap", label_selector="app=web")

        def reconcile(req: Request) -> None:
            live = state.exists(req.name)
            if live is None:
                return
            state.reconciled.setdefault(req.name, []).append(has_finalizer(live, FINALIZER))
            existing = state.exists(f"{req.name}-child")
            child = existing or configmap(f"{req.name}-child")
            set_controller_reference(live, child)  # another controller's child: AlreadyOwnedError
            if existing is None:
                mgr.objects.create(child)

        def cleanup(obj: dict[str, Any]) -> None:
            name = obj["metadata"]["name"]
            state.cleanups.setdefault(name, []).append(time.monotonic())
            if name in state.failing:
                raise RuntimeError(f"the backend still holds {name}")
            if name in state.writing:  # a note on the object being deleted, as a "Deleting" status would be
                mgr.objects.patch(obj, {"metadata": {"annotations": {"cleaned": "yes"}}})

        mgr.controller("web", reconcile, finalizer=FINALIZER, cleanup=cleanup,
                       rate_limiter=ItemExponentialFailureRateLimiter(BASE_DELAY, 2.0)).watch(cms)
        _async_controller(mgr, state)
        state.standalone = _standalone(mgr)
        stop = threading.Event()
        thread = threading.Thread(target=mgr.run, args=(stop,))
        thread.start()
        try:
            # Its threads run before the first test: the leak check snapshots them as the module's.
            state.objects.create(configmap("warm-up", app="web"))
            state.objects.create(configmap("warm-up-async", app="async"))
            eventually(lambda: state.reconciled.get("warm-up") and state.reconciled.get("warm-up-async"),
                       what="the controllers running")
            yield state
        finally:
            stop.set()
            thread.join(10)
            api.close()


def _async_controller(mgr: Manager, state: Web) -> None:
    """The same controller written with ``async def``: the wrapper awaits both functions."""

    async def reconcile(req: Request) -> None:
        live = await asyncio.to_thread(state.exists, req.name)
        if live is not None:
            state.reconciled.setdefault(req.name, []).append(has_finalizer(live, FINALIZER))

    async def cleanup(obj: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        state.cleanups.setdefault(obj["metadata"]["name"], []).append(time.monotonic())

    mgr.controller("async-web", reconcile, finalizer=FINALIZER, cleanup=cleanup).watch(
        mgr.informer("v1", "ConfigMap", label_selector="app=async"))


def _standalone(mgr: Manager) -> Finalizing:
    """A wrapper bound to a controller that is not run: a test calls its parts itself."""
    finalizing = Finalizing(lambda req: None, FINALIZER, lambda obj: None, mgr.objects)
    finalizing.bind(Controller("standalone", finalizing.reconcile).watch(
        mgr.informer("v1", "ConfigMap", label_selector="app=stale")))
    return finalizing


def _delete(web: Web, name: str) -> None:
    client.CoreV1Api(web.api).delete_namespaced_config_map(name, "default")


def test_the_finalizer_is_there_before_the_first_reconcile_and_cleanup_runs_on_delete(web: Web) -> None:
    web.objects.create(configmap("a", app="web"))
    eventually(lambda: web.reconciled.get("a"), what="a reconciled")
    assert web.reconciled["a"][0] is True, "the server had our finalizer when the reconcile first ran"
    held = web.exists("a")
    assert held is not None and held["metadata"]["finalizers"] == [FINALIZER]
    _delete(web, "a")
    eventually(lambda: web.exists("a") is None, what="a gone once cleaned up")
    assert len(web.cleanups["a"]) == 1


def test_cleanup_that_raises_keeps_the_finalizer_and_backs_off(web: Web, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="componentbase.controller")
    web.failing.add("b")
    web.objects.create(configmap("b", app="web"))
    # Twice: once the finalizer is added, once more for the finalizer's own MODIFIED event.
    eventually(lambda: len(web.reconciled.get("b", ())) == 2, what="b reconciled")
    _delete(web, "b")
    eventually(lambda: len(web.cleanups.get("b", ())) >= 4, what="cleanup retried")
    held = web.exists("b")
    assert held is not None and held["metadata"].get("deletionTimestamp"), "deleted, held by the finalizer"
    assert held["metadata"]["finalizers"] == [FINALIZER]
    times = web.cleanups["b"][:4]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert all(gap >= BASE_DELAY * 2**i * 0.9 for i, gap in enumerate(gaps)), f"exponential backoff: {gaps}"
    lines = [r.getMessage() for r in caplog.records if "key=default/b" in r.getMessage()]
    assert lines and all(line.startswith("Reconciler error controller=web key=default/b (retry ") for line in lines)
    assert lines[0].endswith("RuntimeError: the backend still holds b"), lines[0]
    assert len(web.reconciled["b"]) == 2, "an object being deleted is not reconciled"
    web.failing.discard("b")
    eventually(lambda: web.exists("b") is None, what="b gone once cleanup succeeded")


def test_a_cleanup_that_writes_its_object_runs_once_and_lets_it_go(web: Web) -> None:
    web.writing.add("w")
    web.objects.create(configmap("w", app="web"))
    eventually(lambda: web.reconciled.get("w"), what="w reconciled")
    _delete(web, "w")
    eventually(lambda: web.exists("w") is None, what="w gone once cleaned up")
    assert len(web.cleanups["w"]) == 1, "the finalizer goes with the object's newer resourceVersion, no retry"


def test_a_key_reconciled_again_before_the_cache_shows_the_finalizer_gone_is_not_cleaned_up_twice(web: Web) -> None:
    """An event during cleanup (cleanup's own write, a child's) queues the key again, and the removal's answer
    is the resourceVersion the cache already holds: the cache still shows the finalizer until the DELETED
    event comes. A cache stopped at that moment holds it there."""
    cleaned: list[str] = []
    cache = InformerFactory(web.api)
    finalizing = Finalizing(lambda req: None, FINALIZER, lambda obj: cleaned.append(obj["metadata"]["name"]),
                            web.mgr.objects)
    finalizing.bind(Controller("frozen", finalizing.reconcile).watch(
        cache.for_kind("v1", "ConfigMap", "default", label_selector="app=frozen")))
    web.objects.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "g", "namespace": "default", "labels": {"app": "frozen"}, "finalizers": [FINALIZER]}})
    _delete(web, "g")
    stop = threading.Event()
    cache.start(stop)
    eventually(lambda: (c := finalizing._cached(Request("default", "g"))) and c["metadata"].get("deletionTimestamp"),
               what="the cache showing g being deleted")
    stop.set()
    assert cache.join(5)
    finalizing.reconcile_sync(Request("default", "g"))
    assert web.exists("g") is None and cleaned == ["g"]
    finalizing.reconcile_sync(Request("default", "g"))  # the cache still shows g with the finalizer
    assert cleaned == ["g"], "cleanup ran once"


def test_an_owned_child_is_garbage_collected_with_its_owner(web: Web) -> None:
    web.objects.create(configmap("c", app="web"))
    child = eventually(lambda: web.exists("c-child"), what="the child created")
    owner = web.exists("c")
    assert owner is not None and child is not None
    assert child["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": owner["metadata"]["uid"], "controller": True,
         "blockOwnerDeletion": True}]
    _delete(web, "c")
    eventually(lambda: web.exists("c") is None and web.exists("c-child") is None, what="owner and child gone")


def test_async_reconcile_and_cleanup_are_awaited(web: Web) -> None:
    web.objects.create(configmap("d", app="async"))
    eventually(lambda: len(web.reconciled.get("d", ())) == 2, what="d reconciled, again for the finalizer")
    assert web.reconciled["d"][0] is True, "the finalizer was there before the first reconcile"
    _delete(web, "d")
    eventually(lambda: web.exists("d") is None, what="d gone once cleaned up")
    assert len(web.cleanups["d"]) == 1 and len(web.reconciled["d"]) == 2


def test_a_stale_view_conflicts_instead_of_dropping_another_finalizer(web: Web) -> None:
    finalizing = web.standalone
    assert finalizing is not None
    stale = web.objects.create(configmap("e", app="stale"))
    web.objects.patch(stale, {"metadata": {"finalizers": ["other.example.com/keep"]}})
    with pytest.raises(FinalizerError) as err:
        finalizing._add(stale)
    assert str(err.value) == (
        "adding finalizer demo.example.com/cleanup to ConfigMap default/e: 409 Conflict: Operation cannot be "
        'fulfilled on configmaps "e": the object has been modified; please apply your changes to the latest '
        "version and try again")
    kept = web.exists("e")
    assert kept is not None and kept["metadata"]["finalizers"] == ["other.example.com/keep"]


def test_a_child_another_object_controls_is_one_logged_line_retried_with_backoff(
        web: Web, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="componentbase.controller")
    other = web.objects.create(configmap("other"))
    taken = configmap("f-child")
    set_controller_reference(other, taken)
    web.objects.create(taken)
    web.objects.create(configmap("f", app="web"))

    def errors() -> list[str]:
        return [r.getMessage() for r in caplog.records if "key=default/f " in r.getMessage()]

    eventually(lambda: len(errors()) >= 3, what="the reconcile retried")
    assert errors()[0] == ("Reconciler error controller=web key=default/f (retry 1 in 0.050s): AlreadyOwnedError: "
                           "Object default/f-child is already owned by another ConfigMap controller other")
    assert [line.split("(")[1].split(")")[0] for line in errors()[:3]] == [
        "retry 1 in 0.050s", "retry 2 in 0.100s", "retry 3 in 0.200s"]
    _delete(web, "f")
    eventually(lambda: web.exists("f") is None, what="f gone")
