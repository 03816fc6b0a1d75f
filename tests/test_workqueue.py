"""The work queue: de-duplication, one worker per item, delays, per-item backoff, shutdown, workers."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator

import pytest

from componentbase.testing import FakeClock, eventually
from componentbase.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimitingQueue,
    ShutDown,
    TaskPool,
    WorkQueue,
    default_controller_rate_limiter,
    run_workers,
)


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


@pytest.mark.unit
def test_fifo_and_deduplication() -> None:
    q: WorkQueue[str] = WorkQueue()
    for item in ("a", "b", "a", "c", "b"):
        q.add(item)
    assert len(q) == 3
    assert [q.get(), q.get(), q.get()] == ["a", "b", "c"]
    assert len(q) == 0


@pytest.mark.integration
def test_an_item_added_while_processing_comes_back_after_done() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    assert q.get() == "a"
    q.add("a")
    q.add("a")
    assert len(q) == 0  # not handed to a second worker while the first holds it
    with pytest.raises(TimeoutError):
        q.get(timeout=0.05)
    q.done("a")
    assert len(q) == 1
    assert q.get() == "a"
    q.done("a")
    assert len(q) == 0


@pytest.mark.integration
def test_get_blocks_until_an_add() -> None:
    q: WorkQueue[int] = WorkQueue()
    started = time.monotonic()  # before the timer: it may fire before a line after it runs, on a loaded machine
    threading.Timer(0.05, q.add, args=(7,)).start()
    assert q.get(timeout=2) == 7
    assert time.monotonic() - started >= 0.05


@pytest.mark.unit
def test_shut_down_hands_out_what_is_queued_then_raises() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.shut_down()
    q.add("b")  # refused
    assert q.get() == "a"
    with pytest.raises(ShutDown):
        q.get()


@pytest.mark.integration
def test_shut_down_wakes_blocked_getters() -> None:
    q: WorkQueue[str] = WorkQueue()
    errors: list[BaseException] = []

    def getter() -> None:
        try:
            q.get()
        except ShutDown as err:
            errors.append(err)

    threads = [threading.Thread(target=getter) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    q.shut_down()
    for t in threads:
        t.join(2)
    assert len(errors) == 3


@pytest.mark.integration
def test_shut_down_with_drain_waits_for_items_in_flight() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("b")
    item = q.get()
    finished: list[str] = []

    def finish() -> None:
        time.sleep(0.1)
        finished.append(item)
        q.done(item)
        other = q.get()
        finished.append(other)
        q.done(other)

    threading.Thread(target=finish).start()
    assert q.shut_down_with_drain(timeout=2)
    assert finished == ["a", "b"]


@pytest.mark.integration
def test_shut_down_with_drain_times_out() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.get()
    assert not q.shut_down_with_drain(timeout=0.05)


@pytest.mark.integration
def test_add_after_delays_and_the_earliest_time_wins() -> None:
    q: WorkQueue[str] = WorkQueue()
    start = time.monotonic()
    q.add_after("late", 5.0)
    q.add_after("soon", 0.1)
    q.add_after("late", 0.15)  # earlier than pending: moves it up
    q.add_after("soon", 5.0)  # later than pending: ignored
    assert len(q) == 0
    assert q.get(timeout=10) == "soon"
    first = time.monotonic() - start
    assert q.get(timeout=10) == "late"
    second = time.monotonic() - start
    # Ignoring the earlier time would take 5 s: the upper bounds leave seconds to a loaded machine.
    assert 0.09 <= first < 4 and 0.14 <= second < 4


@pytest.mark.integration
def test_delayed_items_are_dropped_at_shut_down() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add_after("x", 0.05)
    q.shut_down()
    time.sleep(0.1)
    with pytest.raises(ShutDown):
        q.get()


@pytest.mark.unit
def test_item_exponential_backoff() -> None:
    limiter = ItemExponentialFailureRateLimiter(base_delay=0.01, max_delay=0.1)
    assert [limiter.when("a") for _ in range(6)] == [0.01, 0.02, 0.04, 0.08, 0.1, 0.1]
    assert limiter.when("b") == 0.01  # per item
    assert limiter.num_requeues("a") == 6
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.01
    huge = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    assert max(huge.when("x") for _ in range(100)) == 1000.0


@pytest.mark.unit
def test_bucket_limiter_allows_a_burst_then_spaces_tries() -> None:
    clock = FakeClock()
    limiter = BucketRateLimiter(qps=10, burst=3, clock=clock)
    delays = [limiter.when(i) for i in range(5)]
    assert delays[:3] == [0.0, 0.0, 0.0]
    assert delays[3:] == pytest.approx([0.1, 0.2])
    clock.step(0.2)  # the reservations made are paid off; nothing is saved up yet
    assert limiter.when("late") == pytest.approx(0.1)
    assert limiter.num_requeues("late") == 0 and clock.waits == []  # it only says how long; it never sleeps


@pytest.mark.unit
def test_default_controller_limiter_is_the_max_of_both() -> None:
    limiter = default_controller_rate_limiter()
    assert isinstance(limiter, MaxOfRateLimiter)
    assert limiter.when("a") == 0.005
    assert limiter.when("a") == 0.01
    assert limiter.num_requeues("a") == 2
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0


@pytest.mark.integration
def test_add_rate_limited_waits_the_backoff() -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue(ItemExponentialFailureRateLimiter(0.05, 1.0))
    timings = []
    for _ in range(3):
        start = time.monotonic()
        q.add_rate_limited("a")
        assert q.get(timeout=2) == "a"
        q.done("a")
        timings.append(time.monotonic() - start)
    assert q.num_requeues("a") == 3
    for got, want in zip(timings, (0.05, 0.1, 0.2), strict=True):
        assert want - 0.005 <= got <= want + 0.15, timings
    q.forget("a")
    assert q.num_requeues("a") == 0


@pytest.mark.integration
def test_workers_never_process_one_item_twice_at_once(stop: threading.Event) -> None:
    q: WorkQueue[int] = WorkQueue("test")
    lock = threading.Lock()
    active: set[int] = set()
    overlaps: list[int] = []
    processed: list[int] = []

    def process(item: int) -> None:
        with lock:
            if item in active:
                overlaps.append(item)
            active.add(item)
        time.sleep(0.001)
        with lock:
            active.discard(item)
            processed.append(item)

    workers = run_workers(q, 4, process, stop)
    adders = [threading.Thread(target=lambda: [q.add(i % 5) for i in range(300)]) for _ in range(3)]
    for t in adders:
        t.start()
    for t in adders:
        t.join()
    eventually(lambda: not len(q) and not active, 5, interval=0.01, what="the queue to drain")
    stop.set()
    assert workers.join(2)
    assert overlaps == []
    assert set(processed) == {0, 1, 2, 3, 4}
    assert len(processed) < 900  # duplicates folded while queued


@pytest.mark.integration
def test_workers_retry_failures_with_backoff_then_forget(stop: threading.Event) -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue(ItemExponentialFailureRateLimiter(0.02, 1.0))
    attempts: list[float] = []

    def flaky(item: str) -> None:
        attempts.append(time.monotonic())
        if len(attempts) < 4:
            raise RuntimeError("not yet")

    workers = run_workers(q, 2, flaky, stop)
    q.add("x")
    deadline = time.monotonic() + 3
    while len(attempts) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    assert len(attempts) == 4
    gaps = [b - a for a, b in itertools.pairwise(attempts)]
    assert gaps[0] >= 0.018 and gaps[1] >= 0.038 and gaps[2] >= 0.078, gaps
    assert q.num_requeues("x") == 0  # the success forgot the failures
    stop.set()
    assert workers.join(2)


@pytest.mark.integration
def test_workers_give_up_after_max_retries(stop: threading.Event, caplog: pytest.LogCaptureFixture) -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue(ItemExponentialFailureRateLimiter(0.001, 0.01))
    attempts: list[str] = []

    def always_fails(item: str) -> None:
        attempts.append(item)
        raise ValueError("broken")

    run_workers(q, 1, always_fails, stop, max_retries=3)
    q.add("y")
    eventually(lambda: any("dropping" in r.getMessage() for r in caplog.records), 3, interval=0.01,
               what="the item dropped")
    assert attempts == ["y"] * 4
    assert any("dropping 'y' after 3 retries: ValueError: broken" in r.getMessage() for r in caplog.records)
    assert all(r.exc_info is None for r in caplog.records)


@pytest.mark.integration
def test_stop_ends_idle_workers(stop: threading.Event) -> None:
    q: WorkQueue[str] = WorkQueue()
    workers = run_workers(q, 3, lambda item: None, stop)
    stop.set()
    assert workers.join(2)
    assert q.shutting_down()


@pytest.mark.unit
def test_workers_stop_without_a_stop_event() -> None:
    q: WorkQueue[str] = WorkQueue()
    seen: list[str] = []
    workers = run_workers(q, 2, seen.append)
    q.add("a")
    assert workers.close(2)  # stop, then join: the item queued first is still processed
    assert seen == ["a"] and q.shutting_down() and workers.alive() == 0


@pytest.mark.integration
def test_task_pool_runs_what_was_queued_before_it_closes() -> None:
    pool = TaskPool(2, "test")
    gate = threading.Event()
    done: list[int] = []
    pool.submit(gate.wait)
    pool.submit(gate.wait)
    for i in range(5):
        pool.submit(lambda i=i: done.append(i))
    gate.set()
    assert pool.close(2)
    assert sorted(done) == [0, 1, 2, 3, 4]
    pool.submit(lambda: done.append(99))  # closed: dropped, not run
    assert 99 not in done


@pytest.mark.integration
def test_task_pool_survives_a_failing_task_and_says_when_a_worker_did_not_end(
        caplog: pytest.LogCaptureFixture) -> None:
    pool = TaskPool(1, "test")
    release = threading.Event()
    ran: list[str] = []
    pool.submit(lambda: 1 / 0)
    pool.submit(lambda: ran.append("after the failure"))
    pool.submit(release.wait)
    assert not pool.close(0.05)  # the last task still holds its worker
    assert pool.workers.alive() == 1
    release.set()
    assert pool.workers.join(2)
    assert ran == ["after the failure"]
    assert any("test: task failed" in r.getMessage() for r in caplog.records)


@pytest.mark.unit
def test_work_in_progress_gauges_are_computed_when_scraped_and_the_newest_queue_of_a_name_counts() -> None:
    """client-go's unfinished-work and longest-running-processor gauges, by queue name; disabled by name."""
    from componentbase.metrics import Metrics

    def gauges(metrics: Metrics) -> list[str]:
        return [line.split(" ")[0] for line in metrics.render().decode().splitlines()
                if line.startswith(("workqueue_unfinished", "workqueue_longest"))]

    metrics = Metrics(process_metrics=False)
    old: WorkQueue[str] = WorkQueue("q", metrics)
    old.add("stale")
    old.get()  # never done: a queue replaced by a new one of its name (its controller restarted) is not counted
    q: WorkQueue[str] = WorkQueue("q", metrics)
    for item in ("a", "b"):
        q.add(item)
        q.get()
    [a, b] = q.in_flight()
    assert 0 < b <= a
    text = metrics.render().decode()
    unfinished = float(text.split('workqueue_unfinished_work_seconds{name="q"} ')[1].split()[0])
    longest = float(text.split('workqueue_longest_running_processor_seconds{name="q"} ')[1].split()[0])
    assert longest >= a and unfinished >= longest + b  # read later than in_flight(): only larger
    q.done("a")
    q.done("b")
    assert q.in_flight() == []
    assert 'workqueue_unfinished_work_seconds{name="q"} 0.0' in metrics.render().decode()
    assert gauges(metrics) == ['workqueue_unfinished_work_seconds{name="q"}',
                               'workqueue_longest_running_processor_seconds{name="q"}']
    quiet = Metrics(process_metrics=False, disabled=["workqueue_unfinished_work_seconds"])
    WorkQueue("q", quiet)
    assert gauges(quiet) == ['workqueue_longest_running_processor_seconds{name="q"}']
