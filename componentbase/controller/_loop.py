"""The event loop a controller runs its ``async`` reconciles on: one loop thread per controller, started with
the first awaitable and ended, in-flight reconciles cancelled, when the controller stops.

The controller's worker threads stay what they are (the queue, backoff, metrics and the bound of
``max_concurrent_reconciles`` are theirs); a worker whose reconcile returned an awaitable hands it to the loop
and waits for its end, so up to N keys are in flight on the loop at once. A watchdog notices the loop not
answering for longer than ``BLOCKED_AFTER`` and names the key whose coroutine holds it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Awaitable
from typing import Any

from componentbase.controller._types import Request

__all__ = ["BLOCKED_AFTER", "Expired", "Panicked", "ReconcileLoop", "Stopped"]

log = logging.getLogger("componentbase.controller")

#: A loop that does not run a callback for this long is blocked by the coroutine it runs (asyncio's debug mode
#: calls a callback slow at the same 0.1 s).
BLOCKED_AFTER = 0.1
#: How often the watchdog looks, while keys are in flight.
WATCH_EVERY = 0.05


class Stopped(Exception):
    """The controller stopped while the reconcile was in flight: it was cancelled, not failed."""


class Expired(TimeoutError):
    """The reconcile was cancelled at its timeout."""


class Panicked(Exception):
    """A coroutine ended by an exception outside ``Exception`` (``SystemExit``, a ``CancelledError`` the
    controller did not cause): carried out of the loop, which such an exception would otherwise stop."""


class ReconcileLoop:
    """``run(req, awaitable, timeout)`` from a worker thread: the awaitable's result, once the loop ran it."""

    def __init__(self, controller: str, workers: int) -> None:
        self.controller = controller
        self.workers = workers
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._threads: list[threading.Thread] = []
        self._running: dict[asyncio.Task[Any], Request] = {}
        self._answered = 0.0

    # --- from the controller's threads ------------------------------------------------------------

    def run(self, req: Request, awaitable: Awaitable[Any], timeout: float | None) -> Any:
        """Run ``awaitable`` on the loop and wait for it. Raises what it raised, ``Expired`` once ``timeout``
        seconds passed (it is cancelled), ``Stopped`` if the controller stops first."""
        with self._lock:
            if self._closed.is_set():
                _discard(awaitable)
                raise Stopped(req.key)
            if not self._threads:
                self._start()
            assert self._loop is not None
            future = asyncio.run_coroutine_threadsafe(self._guard(req, awaitable, timeout), self._loop)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            _discard(awaitable)  # cancelled before its first step, it was never awaited: no warning of that
            raise Stopped(req.key) from None

    def close(self) -> None:
        """Cancel the reconciles in flight, wait for them to end, and end the loop's threads."""
        with self._lock:
            self._closed.set()
            if not self._threads:
                return
            assert self._loop is not None and self._stop is not None
            self._loop.call_soon_threadsafe(self._stop.set)
        for thread in self._threads:
            thread.join()

    def _start(self) -> None:
        main = threading.Thread(target=asyncio.run, args=(self._serve(),), name=f"{self.controller}-loop")
        watchdog = threading.Thread(target=self._watch, name=f"{self.controller}-loop-watchdog")
        self._threads = [main, watchdog]
        main.start()
        self._ready.wait()
        watchdog.start()

    # --- on the loop ------------------------------------------------------------------------------

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        # asyncio.to_thread's pool, as wide as the reconciles that may call it at once; asyncio.run joins it
        self._loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(
            self.workers, thread_name_prefix=f"{self.controller}-to-thread"))
        self._stop = asyncio.Event()
        self._ready.set()
        await self._stop.wait()
        tasks = list(self._running)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _guard(self, req: Request, awaitable: Awaitable[Any], timeout: float | None) -> Any:
        task = asyncio.current_task()
        assert task is not None
        task.set_name(f"reconcile {self.controller} {req.key}")
        self._running[task] = req
        try:
            async with asyncio.timeout(timeout) as deadline:
                return await awaitable
        except TimeoutError:
            if deadline.expired():
                raise Expired(req.key) from None
            raise
        except asyncio.CancelledError as err:
            if task.cancelling():
                raise  # the controller is stopping
            raise Panicked(f"{type(err).__name__}: {err}") from err
        except Exception:
            raise
        except BaseException as err:
            raise Panicked(f"{type(err).__name__}: {err}") from err
        finally:
            del self._running[task]

    def _answer(self) -> None:
        self._answered = time.monotonic()

    # --- the watchdog -----------------------------------------------------------------------------

    def _watch(self) -> None:
        """Ask the loop to run a callback; one not run for ``BLOCKED_AFTER`` means a coroutine holds the loop."""
        loop = self._loop
        assert loop is not None
        asked = warned = 0.0
        while not self._closed.wait(WATCH_EVERY):
            now = time.monotonic()
            if asked > self._answered:  # the last question is unanswered
                if now - asked > BLOCKED_AFTER and warned != asked:
                    warned = asked
                    self._warn_blocked(loop, now - asked)
            elif self._running:
                asked = now
                try:
                    loop.call_soon_threadsafe(self._answer)
                except RuntimeError:  # the loop closed meanwhile
                    return

    def _warn_blocked(self, loop: asyncio.AbstractEventLoop, seconds: float) -> None:
        task = asyncio.current_task(loop)
        if task is None:
            return
        req = self._running.get(task)
        key = req.key if req is not None else f"? (task {task.get_name()})"
        log.warning("controller=%s key=%s: the async reconcile has blocked the event loop for %.2fs so far; every "
                    "key on the loop waits. Await blocking calls through asyncio.to_thread.", self.controller, key,
                    seconds)


def _discard(awaitable: Awaitable[Any]) -> None:
    """Close a coroutine that will never run, so Python does not warn it was never awaited."""
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()
