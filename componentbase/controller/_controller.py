"""``Controller``: reconcile the objects its watches name, one key at a time, as controller-runtime's controller.

Watches feed requests into a rate-limited work queue (duplicates collapse); ``max_concurrent_reconciles``
workers call the reconcile. A reconcile that raises is logged with its key and retried with the key's
exponential backoff, never stopping the controller; ``TerminalError`` is not retried, ``max_retries`` drops a
key that keeps failing, ``reconcile_timeout`` bounds a try. An ``async def`` reconcile runs on an event loop
the controller owns (``_loop``). A controller runs only while its ``run`` is running: stopping it drops what
is queued instead of draining it, and cancels async reconciles in flight, so a deposed leader does not work
through a backlog.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from collections.abc import Callable, Iterable

from componentbase.client import describe, status_of
from componentbase.controller._handlers import enqueue_object
from componentbase.controller._loop import Expired, Panicked, ReconcileLoop, Stopped
from componentbase.controller._types import Event, MapFunc, Predicate, Reconciler, Request, Result, TerminalError
from componentbase.controller._writes import WriteTracker
from componentbase.informers import SharedInformer, deleted_object
from componentbase.metrics import Metrics
from componentbase.workqueue import RateLimiter, RateLimitingQueue, ShutDown, default_controller_rate_limiter

__all__ = ["Controller"]

log = logging.getLogger("componentbase.controller")

#: A source of requests no informer carries (a backend's callback, its own list): called with the controller's
#: ``enqueue`` each time the controller starts, before its workers do (controller-runtime's ``source.Func``).
Source = Callable[[Callable[[Request], bool]], object]


class _Watch:
    def __init__(self, informer: SharedInformer, map_to: MapFunc, predicates: tuple[Predicate, ...]) -> None:
        self.informer = informer
        self.map_to = map_to
        self.predicates = predicates

    def requests(self, event: Event) -> Iterable[Request]:
        if all(p(event) for p in self.predicates):
            yield from self.map_to(event.object)


class Controller:
    """``Controller("hello", reconcile).watch(informer)``; add it to a ``Manager``, which runs it while leading.

    ``needs_leader`` (default true) makes the manager run it only on the leader; ``rate_limiter`` is the
    per-key backoff of failed reconciles (client-go's default controller rate limiter).

    Failures, as controller-runtime's: every exception is an error, counted and retried with backoff. A
    ``TerminalError`` is counted as terminal too and not retried. ``max_retries`` (0: no cap) drops a key
    whose failures reached that many retries (kube's controllers' ``maxRetries``). An exception outside
    ``Exception`` (``SystemExit``...) is what Go calls a panic: recovered, logged with its traceback, counted
    in ``controller_runtime_reconcile_panics_total`` as well, and retried. ``reconcile_timeout`` (seconds,
    controller-runtime's ``ReconciliationTimeout``) cancels an async reconcile at its deadline; a thread
    cannot be interrupted, so a sync reconcile runs to its end and, if that is past the deadline, its result
    is dropped and the try is an error, retried: what a Go reconcile's calls return once its context expired.
    """

    def __init__(self, name: str, reconcile: Reconciler, *, max_concurrent_reconciles: int = 1,
                 rate_limiter: RateLimiter | None = None, needs_leader: bool = True,
                 metrics: Metrics | None = None, writes: WriteTracker | None = None,
                 read_your_writes_timeout: float = 5.0, reconcile_timeout: float | None = None,
                 max_retries: int = 0) -> None:
        if max_concurrent_reconciles < 1:
            raise ValueError(f"controller {name}: max_concurrent_reconciles must be at least 1")
        if reconcile_timeout is not None and reconcile_timeout <= 0:
            raise ValueError(f"controller {name}: reconcile_timeout must be positive (None: no timeout)")
        if max_retries < 0:
            raise ValueError(f"controller {name}: max_retries must be 0 (no cap) or more")
        self.name = name
        self.reconcile = reconcile
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self.needs_leader = needs_leader
        #: Where reconciles are counted (controller-runtime's metric names); the manager sets its own.
        self.metrics = metrics
        #: This process's writes not yet in the cache; a reconcile of such an object waits for it first.
        self.writes = writes
        self.read_your_writes_timeout = read_your_writes_timeout
        self.reconcile_timeout = reconcile_timeout
        self.max_retries = max_retries
        self._rate_limiter = rate_limiter
        self._watches: list[_Watch] = []
        self._sources: list[Source] = []
        self._lock = threading.Lock()
        self._queue: RateLimitingQueue[Request] | None = None

    def watch(self, informer: SharedInformer, *predicates: Predicate,
              map_to: MapFunc = enqueue_object) -> Controller:
        """Reconcile what ``map_to`` names for each event of ``informer`` that every predicate accepts."""
        w = _Watch(informer, map_to, predicates)
        self._watches.append(w)
        informer.add_event_handler(
            on_add=lambda obj: self._enqueue(w, Event("ADDED", obj)),
            on_update=lambda old, new: self._enqueue(w, Event("MODIFIED", new, old)),
            on_delete=lambda obj: self._enqueue(w, Event("DELETED", deleted_object(obj))),
        )
        return self

    def watch_source(self, start: Source) -> Controller:
        """Reconcile what ``start(enqueue)`` hands to ``enqueue``: keys from outside the informers.

        ``start`` runs at each start of the controller, once its queue exists and before its workers run, so
        it can enqueue what only it knows of (a backend's objects) and hand ``enqueue`` to a callback.
        """
        self._sources.append(start)
        return self

    def enqueue(self, request: Request) -> bool:
        """Reconcile ``request`` soon; False (dropped) while the controller is not running: its next start
        reconciles every cached object and calls its sources again."""
        queue = self._queue
        if queue is None:
            return False
        queue.add(request)
        return True

    @property
    def informers(self) -> list[SharedInformer]:
        """The informers this controller reads; the manager starts them and waits for their sync."""
        return [w.informer for w in self._watches]

    def _enqueue(self, watch: _Watch, event: Event) -> None:
        queue = self._queue
        if queue is None:
            return  # not running: run() enqueues the whole cache when it starts
        for req in watch.requests(event):
            queue.add(req)

    def run(self, stop: threading.Event) -> None:
        """Reconcile until ``stop`` is set: every cached object first, then what changes. Blocks."""
        queue: RateLimitingQueue[Request] = RateLimitingQueue(
            self._rate_limiter or default_controller_rate_limiter(), name=self.name, metrics=self.metrics)
        with self._lock:
            self._queue = queue
        for w in self._watches:
            for obj in w.informer.list():
                for req in w.requests(Event("ADDED", obj)):
                    queue.add(req)
        for start in self._sources:
            start(self.enqueue)
        if self.metrics is not None:
            self.metrics.controller_started(self.name, self.max_concurrent_reconciles)
        aio = ReconcileLoop(self.name, self.max_concurrent_reconciles)  # its thread starts with the first await
        workers = [threading.Thread(target=self._work, args=(queue, aio), name=f"{self.name}-reconcile-{i}")
                   for i in range(self.max_concurrent_reconciles)]
        for t in workers:
            t.start()
        try:
            stop.wait()
        finally:
            with self._lock:
                self._queue = None
            queue.shut_down()  # drop the backlog: workers finish the key in hand and return
            aio.close()  # cancel async reconciles in flight; their workers return
            for t in workers:
                t.join()

    def _work(self, queue: RateLimitingQueue[Request], aio: ReconcileLoop) -> None:
        metrics = self.metrics
        while True:
            try:
                req = queue.get()
            except ShutDown:
                return
            if self._queue is not queue:  # stopped: the queue hands out its backlog, which is dropped here
                queue.done(req)
                continue
            if metrics is not None:
                metrics.worker_active(self.name, 1)
            try:
                self._reconcile(queue, aio, req)
            finally:
                queue.done(req)
                if metrics is not None:
                    metrics.worker_active(self.name, -1)

    def _wait_for_own_write(self, req: Request) -> None:
        if self.writes is None or not self._watches:
            return
        cached = self._watches[0].informer.get(req.key)
        if cached is not None and not self.writes.wait(cached, self.read_your_writes_timeout):
            log.info("controller=%s key=%s: own write not seen in the cache after %gs; reconciling anyway",
                     self.name, req, self.read_your_writes_timeout)

    def _reconcile(self, queue: RateLimitingQueue[Request], aio: ReconcileLoop, req: Request) -> None:
        self._wait_for_own_write(req)
        start = time.monotonic()
        try:
            result = self._call(aio, req, start)
        except Stopped:
            log.info("controller=%s key=%s: reconcile cancelled: the controller is stopping", self.name, req)
            return
        except BaseException as err:  # a panic too: recovered, as controller-runtime recovers it
            self._failed(queue, req, err, start)
            return
        if result and result.requeue_after > 0:  # None (done, the usual answer) builds no Result
            queue.forget(req)
            queue.add_after(req, result.requeue_after)
            self._observe("requeue_after", start)
        elif result and result.requeue:
            queue.add_rate_limited(req)
            self._observe("requeue", start)
        else:
            queue.forget(req)
            self._observe("success", start)

    def _call(self, aio: ReconcileLoop, req: Request, start: float) -> Result | None:
        """The reconcile's answer: awaited on the loop if it is awaitable; a sync try past its timeout fails."""
        result = self.reconcile(req)
        timeout = self.reconcile_timeout
        if result is None or isinstance(result, Result):
            if timeout is not None and time.monotonic() - start > timeout:
                raise TimeoutError(f"reconcile ran {time.monotonic() - start:.3f}s, past its {timeout:g}s timeout "
                                   "(a sync reconcile is not interrupted; its result is dropped)")
            return result
        if not inspect.isawaitable(result):
            raise TypeError(f"reconcile returned {type(result).__name__}, not a Result, None or an awaitable")
        left = None if timeout is None else timeout - (time.monotonic() - start)
        try:
            answer = aio.run(req, result, None if left is None else max(left, 0.0))
        except Expired:
            raise TimeoutError(f"reconcile timed out after {timeout:g}s (cancelled)") from None
        if answer is not None and not isinstance(answer, Result):
            raise TypeError(f"reconcile returned {type(answer).__name__}, not a Result or None")
        return answer

    def _failed(self, queue: RateLimitingQueue[Request], req: Request, err: BaseException, start: float) -> None:
        """A failed try: counted, logged with its key, then retried with backoff, dropped or, terminal, forgotten."""
        panic = isinstance(err, Panicked) or not isinstance(err, Exception)
        self._observe("error", start)
        if self.metrics is not None:
            if panic:
                self.metrics.observe_panic(self.name)
            if isinstance(err, TerminalError):
                self.metrics.observe_terminal_error(self.name)
        what = str(err) if isinstance(err, Panicked) else f"{type(err).__name__}: {_one_line(err)}"
        trace = err if panic else None
        if isinstance(err, TerminalError):
            queue.forget(req)
            log.error("Reconciler error controller=%s key=%s (terminal, not retried): %s", self.name, req, what)
        elif self.max_retries and queue.num_requeues(req) >= self.max_retries:
            queue.forget(req)
            log.error("Reconciler error controller=%s key=%s (dropped after %d tries): %s", self.name, req,
                      self.max_retries + 1, what, exc_info=trace)
        else:
            delay = queue.add_rate_limited(req)
            log.error("Reconciler error controller=%s key=%s (retry %d in %.3fs): %s", self.name, req,
                      queue.num_requeues(req), delay, what, exc_info=trace)

    def _observe(self, result: str, start: float) -> None:
        if self.metrics is not None:
            self.metrics.observe_reconcile(self.name, result, time.monotonic() - start)


def _one_line(err: BaseException) -> str:
    """An API error as the server's Status says it (``422 Invalid: ConfigMap "x" is invalid: ...``): the
    official client's ``str()`` is five lines with the response headers. Others (a ``Conflict``) as they are."""
    text = str(err)
    return describe(err).summary if status_of(err) is not None and "\n" in text else text
