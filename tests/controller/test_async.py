"""``async def`` reconcilers: the controller's own event loop, with the queue, backoff, bounds and metrics of sync
ones; a coroutine blocking the loop is named; stopping cancels what is in flight and leaves no thread."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter
from collections.abc import Awaitable

import pytest

from componentbase.client import ObjectClient
from componentbase.controller import Controller, Manager, Request
from componentbase.metrics import Metrics
from componentbase.testing import LoopbackAPIServer, eventually
from tests.controller.helpers import configmap
from tests.controller.test_failures import errors_of, fast, running, sample

pytestmark = pytest.mark.integration


def test_async_reconciles_run_n_at_once_on_one_loop() -> None:
    in_flight: list[str] = []
    peaks: list[int] = []
    released: list[str] = []
    loops: set[int] = set()

    async def reconcile(req: Request) -> None:
        loops.add(id(asyncio.get_running_loop()))
        in_flight.append(req.name)
        peaks.append(len(in_flight))
        for _ in range(1000):  # until three are in at once (or one was), at most 10 s
            if len(in_flight) == 3 or released:
                break
            await asyncio.sleep(0.01)
        released.append(req.name)
        await asyncio.sleep(0.01)
        in_flight.remove(req.name)

    with running(Controller("fanout", reconcile, max_concurrent_reconciles=3), "a", "b", "c", "d"):
        eventually(lambda: len(released) == 4 and not in_flight, what="the four reconciles")
    assert max(peaks) == 3 and len(loops) == 1  # three at once on one loop, never four


def test_an_async_reconcile_that_raises_is_retried_with_backoff_and_counted(
        caplog: pytest.LogCaptureFixture) -> None:
    metrics = Metrics(process_metrics=False)
    times: Counter[str] = Counter()

    async def inner(req: Request) -> None:
        times[req.name] += 1
        await asyncio.sleep(0)
        if times[req.name] < 3:
            raise RuntimeError("not yet")

    def wrapper(req: Request) -> Awaitable[None]:
        """A sync wrapper handing back its async reconcile's coroutine, as a finalizer wrapper may."""
        return inner(req)

    with caplog.at_level(logging.ERROR, "componentbase.controller"), \
            running(Controller("async-flaky", wrapper, metrics=metrics, rate_limiter=fast()), "k"):
        eventually(lambda: times["k"] == 3, what="two retries")
        eventually(lambda: sample(metrics, 'controller_runtime_reconcile_total{controller="async-flaky",'
                                  'result="success"}') == 1, what="the success counted")
    assert errors_of(caplog, "key=default/k") == [
        "Reconciler error controller=async-flaky key=default/k (retry 1 in 0.001s): RuntimeError: not yet",
        "Reconciler error controller=async-flaky key=default/k (retry 2 in 0.002s): RuntimeError: not yet"]
    assert sample(metrics, 'controller_runtime_reconcile_errors_total{controller="async-flaky"}') == 2
    assert sample(metrics, 'workqueue_retries_total{name="async-flaky"}') == 2


def test_an_async_reconcile_past_its_timeout_is_cancelled_and_retried(caplog: pytest.LogCaptureFixture) -> None:
    times: Counter[str] = Counter()
    cancelled: list[str] = []

    async def reconcile(req: Request) -> None:
        times[req.name] += 1
        if times[req.name] == 1:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.append(req.name)
                raise

    with caplog.at_level(logging.ERROR, "componentbase.controller"), \
            running(Controller("async-slow", reconcile, reconcile_timeout=0.1, rate_limiter=fast()), "k"):
        eventually(lambda: times["k"] == 2, what="the retry")
    assert cancelled == ["k"]
    [error] = errors_of(caplog, "key=default/k")
    assert error.endswith("(retry 1 in 0.001s): TimeoutError: reconcile timed out after 0.1s (cancelled)")


def test_a_panic_in_a_coroutine_is_recovered_and_the_loop_lives(caplog: pytest.LogCaptureFixture) -> None:
    """A ``SystemExit`` would stop an event loop running it; it is carried out and counted as a panic."""
    metrics = Metrics(process_metrics=False)
    times: Counter[str] = Counter()

    async def reconcile(req: Request) -> None:
        times[req.name] += 1
        if times[req.name] == 1:
            raise SystemExit("bye")

    with caplog.at_level(logging.ERROR, "componentbase.controller"), \
            running(Controller("async-panic", reconcile, metrics=metrics, rate_limiter=fast()), "k"):
        eventually(lambda: times["k"] == 2, what="the retry on the same loop")
    assert sample(metrics, 'controller_runtime_reconcile_panics_total{controller="async-panic"}') == 1
    [record] = [r for r in caplog.records if "Reconciler error" in r.getMessage()]
    assert record.getMessage().endswith("(retry 1 in 0.001s): SystemExit: bye") and record.exc_info is not None


def test_a_coroutine_blocking_the_loop_is_named_in_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    done: list[str] = []

    def blocked_warnings() -> list[str]:
        return [r.getMessage() for r in caplog.records if "blocked the event loop" in r.getMessage()]

    async def reconcile(req: Request) -> None:
        # A sync call in async code holds the loop until the warning came (bounded), however late a loaded
        # machine runs the watchdog's thread: the block is not a guessed 0.4 s that a busy CI may outlast.
        deadline = time.monotonic() + 20
        while req.name == "blocker" and not blocked_warnings() and time.monotonic() < deadline:
            time.sleep(0.05)
        done.append(req.name)

    with caplog.at_level(logging.WARNING, "componentbase.controller"), \
            running(Controller("blocky", reconcile, max_concurrent_reconciles=2), "blocker"):
        eventually(lambda: done, 30, what="the reconcile")
    warnings = blocked_warnings()
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("controller=blocky key=default/blocker: the async reconcile has blocked the "
                                  "event loop for ")
    assert "asyncio.to_thread" in warnings[0]


def test_stopping_cancels_async_reconciles_in_flight_and_ends_the_loop(caplog: pytest.LogCaptureFixture) -> None:
    started = threading.Event()
    cancelled: list[str] = []

    async def reconcile(req: Request) -> None:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(req.name)
            raise

    with caplog.at_level(logging.INFO), running(Controller("forever", reconcile), "k"):
        assert started.wait(10)
        assert [t.name for t in threading.enumerate() if t.name.startswith("forever-loop")]
    assert cancelled == ["k"]
    assert not [t for t in threading.enumerate() if t.name.startswith("forever-")]
    messages = [r.getMessage() for r in caplog.records]
    assert "controller=forever key=default/k: reconcile cancelled: the controller is stopping" in messages
    assert not [m for m in messages if "destroyed" in m or "Reconciler error" in m]


def test_an_async_reconcile_writes_through_the_managers_client(kube_apiserver: LoopbackAPIServer) -> None:
    """Writes go through the fenced, read-your-writes ``mgr.objects`` in a thread: a sync call on the loop
    would hold every other key for the round trip."""
    api = kube_apiserver.api_client()
    for name in ("w1", "w2"):
        ObjectClient(api).create(configmap(name, hello="true"))
    mgr = Manager(api)
    cms = mgr.informer("v1", "ConfigMap", label_selector="hello=true")

    async def reconcile(req: Request) -> None:
        cm = cms.get(req.key)
        if cm is not None and "greeting" not in (cm.get("data") or {}):
            await asyncio.to_thread(mgr.objects.patch, cm, {"data": {"greeting": f"hello, {req.name}"}})

    mgr.controller("async-hello", reconcile, max_concurrent_reconciles=2).watch(cms)
    stop = threading.Event()
    code: list[int] = []
    thread = threading.Thread(target=lambda: code.append(mgr.run(stop)))
    thread.start()
    try:
        for name in ("w1", "w2"):
            eventually(lambda name=name: ObjectClient(api).get("v1", "ConfigMap", name, "default")["data"]
                       .get("greeting") == f"hello, {name}", what=f"{name}'s greeting")
    finally:
        stop.set()
        thread.join(10)
    assert code == [0]
