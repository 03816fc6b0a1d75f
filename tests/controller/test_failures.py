"""A Controller's failure semantics, as controller-runtime's: terminal errors, a retry cap, timeouts, panics, and
the metrics that count them, under controller-runtime's and client-go's names."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from componentbase.client import ObjectClient
from componentbase.controller import Controller, Request, TerminalError
from componentbase.metrics import Metrics
from componentbase.testing import LoopbackAPIServer, eventually
from componentbase.workqueue import ItemExponentialFailureRateLimiter

pytestmark = pytest.mark.integration

def fast() -> ItemExponentialFailureRateLimiter:
    """Backoff from 1 ms, capped at 4 ms: retries come at once, still counted and logged."""
    return ItemExponentialFailureRateLimiter(0.001, 0.004)


@contextmanager
def running(controller: Controller, *names: str) -> Iterator[None]:
    """Run ``controller`` on the keys ``default/<name>`` until the block ends, then stop it and check it did."""
    controller.watch_source(lambda enqueue: [enqueue(Request("default", n)) for n in names])
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,))
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()


def sample(metrics: Metrics, series: str) -> float:
    """The value of one series (``name{labels}``) in the registry's exposition."""
    for line in metrics.render().decode().splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{series} not exposed")


def errors_of(caplog: pytest.LogCaptureFixture, key: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if "Reconciler error" in r.getMessage() and key in r.getMessage()]


def failing(times: Counter[str], fails: Callable[[str, int], BaseException | None]) -> Callable[[Request], None]:
    def reconcile(req: Request) -> None:
        times[req.name] += 1
        err = fails(req.name, times[req.name])
        if err is not None:
            raise err
    return reconcile


def test_a_terminal_error_is_logged_counted_and_not_retried(caplog: pytest.LogCaptureFixture) -> None:
    metrics = Metrics(process_metrics=False)
    times: Counter[str] = Counter()
    # "flaky" fails four times with the same backoff "bad" would get: its retries are the clock
    reconcile = failing(times, lambda name, n: TerminalError("spec.size must be positive") if name == "bad"
                        else RuntimeError("not yet") if n <= 4 else None)
    with caplog.at_level(logging.ERROR, "componentbase.controller"), \
            running(Controller("terminal", reconcile, metrics=metrics, rate_limiter=fast()), "bad", "flaky"):
        eventually(lambda: times["flaky"] == 5, what="the flaky key's four retries")
    assert times["bad"] == 1
    assert errors_of(caplog, "key=default/bad") == [
        "Reconciler error controller=terminal key=default/bad (terminal, not retried): "
        "TerminalError: spec.size must be positive"]
    assert sample(metrics, 'controller_runtime_terminal_reconcile_errors_total{controller="terminal"}') == 1
    # a terminal error is an error too, as controller-runtime counts it
    assert sample(metrics, 'controller_runtime_reconcile_errors_total{controller="terminal"}') == 5
    assert sample(metrics, 'controller_runtime_reconcile_total{controller="terminal",result="error"}') == 5


def test_a_key_failing_past_max_retries_is_dropped_with_its_tries(caplog: pytest.LogCaptureFixture) -> None:
    times: Counter[str] = Counter()
    reconcile = failing(times, lambda name, n: RuntimeError("still broken") if name == "broken"
                        else RuntimeError("not yet") if n <= 5 else None)
    with caplog.at_level(logging.ERROR, "componentbase.controller"), \
            running(Controller("capped", reconcile, max_retries=2, rate_limiter=fast()), "broken"):
        eventually(lambda: any("dropped" in m for m in errors_of(caplog, "broken")), what="the drop")
        dropped_at = times["broken"]
        time.sleep(0.05)  # twelve times the longest backoff: a retry would have come
    assert dropped_at == times["broken"] == 3  # the first try and two retries
    assert len(errors_of(caplog, "broken")) == 3
    assert errors_of(caplog, "broken")[-1] == ("Reconciler error controller=capped key=default/broken "
                                               "(dropped after 3 tries): RuntimeError: still broken")


def test_a_sync_reconcile_past_its_timeout_is_an_error_and_retried(caplog: pytest.LogCaptureFixture) -> None:
    times: Counter[str] = Counter()

    def reconcile(req: Request) -> None:
        times[req.name] += 1
        if times[req.name] == 1:
            time.sleep(0.2)  # a thread cannot be interrupted: it runs to its end

    with caplog.at_level(logging.ERROR, "componentbase.controller"), \
            running(Controller("slow", reconcile, reconcile_timeout=0.1, rate_limiter=fast()), "k"):
        eventually(lambda: times["k"] == 2, what="the retry")
    [error] = errors_of(caplog, "key=default/k")
    assert "(retry 1 in 0.001s): TimeoutError: reconcile ran " in error
    assert "past its 0.1s timeout (a sync reconcile is not interrupted; its result is dropped)" in error


def test_a_panic_is_recovered_counted_and_retried_and_the_worker_lives(caplog: pytest.LogCaptureFixture) -> None:
    """``SystemExit`` is what Go calls a panic: it used to end the worker thread, silently."""
    metrics = Metrics(process_metrics=False)
    times: Counter[str] = Counter()
    reconcile = failing(times, lambda name, n: SystemExit("bye") if n == 1 else None)
    with caplog.at_level(logging.ERROR, "componentbase.controller"), \
            running(Controller("panicky", reconcile, metrics=metrics, rate_limiter=fast()), "a", "b"):
        eventually(lambda: times["a"] == times["b"] == 2, what="both keys retried by the one worker")
    assert sample(metrics, 'controller_runtime_reconcile_panics_total{controller="panicky"}') == 2
    assert sample(metrics, 'controller_runtime_reconcile_errors_total{controller="panicky"}') == 2
    [record] = [r for r in caplog.records if "key=default/a" in r.getMessage()]
    assert record.getMessage().endswith("(retry 1 in 0.001s): SystemExit: bye") and record.exc_info is not None


def test_an_api_error_is_logged_on_one_line_as_the_server_said_it(kube_apiserver: LoopbackAPIServer,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """The official client's ``str()`` of an ``ApiException`` is five lines, response headers and all."""
    objects = ObjectClient(kube_apiserver.api_client())
    times: Counter[str] = Counter()

    def reconcile(req: Request) -> None:  # a child the server refuses: the usual failure of an operator
        times[req.name] += 1
        objects.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name",
                                                                              "namespace": "default"}})

    with caplog.at_level(logging.ERROR, "componentbase.controller"), \
            running(Controller("refused", reconcile, rate_limiter=fast()), "k"):
        eventually(lambda: times["k"] >= 2, what="the retry")
    error = errors_of(caplog, "key=default/k")[0]
    assert error == (
        "Reconciler error controller=refused key=default/k (retry 1 in 0.001s): UnprocessableEntityException: "
        "422 Invalid: "
        'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 '
        "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
        "an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def test_work_in_progress_is_exposed_under_controller_runtime_and_client_go_names() -> None:
    metrics = Metrics(process_metrics=False)
    release = threading.Event()
    started: list[str] = []

    def reconcile(req: Request) -> None:
        started.append(req.name)
        release.wait(10)

    with running(Controller("busy", reconcile, metrics=metrics, max_concurrent_reconciles=3), "a", "b"):
        eventually(lambda: len(started) == 2, what="both keys in work")
        time.sleep(0.02)
        assert sample(metrics, 'controller_runtime_active_workers{controller="busy"}') == 2
        longest = sample(metrics, 'workqueue_longest_running_processor_seconds{name="busy"}')
        unfinished = sample(metrics, 'workqueue_unfinished_work_seconds{name="busy"}')
        assert longest >= 0.02 and unfinished >= longest + 0.02  # the two keys' time in work, summed
        release.set()
        eventually(lambda: sample(metrics, 'controller_runtime_active_workers{controller="busy"}') == 0,
                   what="the workers idle")
    assert sample(metrics, 'workqueue_unfinished_work_seconds{name="busy"}') == 0
    assert sample(metrics, 'workqueue_longest_running_processor_seconds{name="busy"}') == 0
    assert sample(metrics, 'controller_runtime_terminal_reconcile_errors_total{controller="busy"}') == 0
    assert sample(metrics, 'controller_runtime_reconcile_panics_total{controller="busy"}') == 0


@pytest.mark.parametrize(("kw", "message"), [
    ({"reconcile_timeout": 0}, "reconcile_timeout must be positive"),
    ({"max_retries": -1}, "max_retries must be 0 (no cap) or more"),
])
def test_bad_failure_settings_are_refused_naming_the_controller(kw: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"controller c: {message}")):
        Controller("c", lambda req: None, **kw)  # type: ignore[arg-type]
