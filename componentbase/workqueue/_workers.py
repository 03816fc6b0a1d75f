"""Worker pools that stop cleanly: ``stop()`` asks every worker to return, ``join(timeout)`` says whether all did.

Two shapes, one mechanism: ``run_workers`` drains a work queue the way client-go controllers'
``processNextWorkItem`` loops do; ``TaskPool`` runs submitted calls (the scheduler's binding cycles).
Workers finish what they hold and what is already queued, then return; none is left running unjoined.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from componentbase.workqueue._queue import RateLimitingQueue, ShutDown, WorkQueue

__all__ = ["TaskPool", "Workers", "run_workers"]

log = logging.getLogger("componentbase.workqueue")

T = TypeVar("T")


class Workers:
    """``n`` threads each running ``work()`` until it returns; ``stop()`` calls ``halt`` to make them return."""

    def __init__(self, n: int, work: Callable[[], None], *, name: str, halt: Callable[[], None]) -> None:
        if n < 1:
            raise ValueError("a worker pool needs at least one worker")
        self._halt = halt
        self.threads = [threading.Thread(target=work, name=f"{name}-worker-{i}", daemon=True) for i in range(n)]
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        """Ask the workers to return once they have finished what is queued; does not wait."""
        self._halt()

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds in all (None: no limit) for every worker; True if all returned."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self.threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return not self.alive()

    def alive(self) -> int:
        """How many workers are still running."""
        return sum(t.is_alive() for t in self.threads)

    def close(self, timeout: float | None = None) -> bool:
        """``stop()`` then ``join(timeout)``."""
        self.stop()
        return self.join(timeout)


def run_workers(queue: WorkQueue[T], n: int, process: Callable[[T], object], stop: threading.Event | None = None,
                *, name: str = "", max_retries: int = 0) -> Workers:
    """Start ``n`` workers that take items and call ``process(item)``, until the queue shuts down.

    As client-go controllers' ``processNextWorkItem``: success forgets the item's backoff; an exception
    is logged on one line and, on a ``RateLimitingQueue``, the item is retried with backoff (given up
    after ``max_retries`` retries, if set). ``Workers.stop()`` shuts the queue down, as does setting
    ``stop`` if one is given; workers finish the item in hand and return.
    """
    label = name or queue.name or "workqueue"
    limited = queue if isinstance(queue, RateLimitingQueue) else None

    def handle(item: T) -> None:
        try:
            process(item)
        except Exception as err:
            if limited is None:
                log.error("%s: error processing %r: %s: %s", label, item, type(err).__name__, err)
            elif max_retries and limited.num_requeues(item) >= max_retries:
                log.error("%s: dropping %r after %d retries: %s: %s", label, item, max_retries,
                          type(err).__name__, err)
                limited.forget(item)
            else:
                log.error("%s: error processing %r (retry %d): %s: %s", label, item,
                          limited.num_requeues(item) + 1, type(err).__name__, err)
                limited.add_rate_limited(item)
        else:
            if limited is not None:
                limited.forget(item)

    def work() -> None:
        while True:
            try:
                item = queue.get()
            except ShutDown:
                return
            try:
                handle(item)
            finally:
                queue.done(item)

    workers = Workers(n, work, name=label, halt=queue.shut_down)
    if stop is not None:
        def stop_on() -> None:
            stop.wait()
            workers.stop()

        threading.Thread(target=stop_on, name=f"{label}-stop", daemon=True).start()
    return workers


class TaskPool:
    """``n`` workers running submitted calls in order; ``close`` lets them finish what is queued, then ends them."""

    def __init__(self, n: int, name: str = "tasks") -> None:
        self._tasks: queue.SimpleQueue[Callable[[], object] | None] = queue.SimpleQueue()
        self._name = name
        self._lock = threading.Lock()
        self._closed = False
        self.workers = Workers(n, self._work, name=name, halt=self._halt)

    def submit(self, task: Callable[[], object]) -> None:
        """Queue ``task``; after ``close`` it is dropped with a log line, as nothing would run it."""
        with self._lock:
            if not self._closed:
                self._tasks.put(task)
                return
        log.warning("%s: pool closed; task dropped", self._name)

    def _work(self) -> None:
        while (task := self._tasks.get()) is not None:
            try:
                task()
            except Exception:  # a bug in one task must not end its worker
                log.exception("%s: task failed", self._name)

    def _halt(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for _ in self.workers.threads:
                self._tasks.put(None)  # after every queued task: those run first

    def close(self, timeout: float | None = None) -> bool:
        """Refuse new tasks, let the queued ones run, wait up to ``timeout``; True if every worker returned."""
        return self.workers.close(timeout)
