"""A controller's own finalizer: ``mgr.controller("web", reconcile, finalizer="x.example.com/cleanup", cleanup=fn)``.

What kopf does for delete handlers and what controller-runtime users write by hand in every reconcile:
before an object is first reconciled its finalizer is added, so it cannot vanish before its cleanup ran;
once it is being deleted (``deletionTimestamp`` set), ``cleanup(obj)`` runs instead of the reconcile, and
the finalizer is removed only after cleanup returned. A cleanup that raises leaves the finalizer: the
exception goes to the controller, which logs it with the key and retries with the key's backoff.

An object being deleted is not reconciled, whether or not it still has our finalizer (other finalizers
may hold it for a while): reconciling it would re-create the children its deletion is taking away, which
is why controller-runtime reconcilers return early at a ``deletionTimestamp``. An object gone from the
cache is still reconciled, as a deleted object always is.

Finalizer writes are JSON merge patches of the whole list carrying the object's ``resourceVersion``: a
stale cache gets a 409 conflict (and a retry once the cache caught up) instead of overwriting a finalizer
another controller added meanwhile. The removal after a cleanup that wrote the object itself meets that
conflict too: it reads the object again and removes the finalizer from it, so cleanup runs once.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from componentbase.client import ObjectClient, describe, is_conflict, is_not_found, status_of
from componentbase.controller._finalizers import finalizers_of, is_being_deleted
from componentbase.controller._types import Obj, Reconciler, Request, Result
from componentbase.util import deepcopy_json

if TYPE_CHECKING:
    from componentbase.controller._controller import Controller

__all__ = ["Cleanup", "FinalizerError", "Finalizing"]

log = logging.getLogger("componentbase.controller")

#: The cleanup function: called with a copy of the object being deleted; may be ``async def``.
Cleanup = Callable[[Obj], Any]


class FinalizerError(RuntimeError):
    """Adding or removing the controller's finalizer failed (one line: the object, the finalizer, the
    server's answer); the controller retries it with the key's backoff."""


class Finalizing:
    """The reconcile wrapper; ``Manager.controller`` builds it, then ``bind``\\ s it to its controller."""

    def __init__(self, reconcile: Callable[[Request], Any], finalizer: str, cleanup: Cleanup,
                 objects: ObjectClient) -> None:
        if not finalizer or not isinstance(finalizer, str):
            raise ValueError(f"finalizer must be a name such as example.com/cleanup, not {finalizer!r}")
        if "/" not in finalizer:  # kube-apiserver's warning, at start instead of on each write
            log.warning("finalizer %s: prefer a domain-qualified finalizer name to avoid accidental conflicts "
                        "with other finalizer writers", finalizer)
        if not callable(cleanup):
            raise ValueError(f"finalizer {finalizer}: cleanup must be a function of the object, not {cleanup!r}")
        self.user_reconcile = reconcile
        self.finalizer = finalizer
        self.cleanup = cleanup
        self.objects = objects
        self.controller: Controller | None = None
        #: key -> uid of the objects whose finalizer was removed after their cleanup. The removal's answer is
        #: the resourceVersion the cache holds, so read-your-own-writes does not wait, and until the DELETED
        #: event the cache shows the finalizer: a key queued again meanwhile (an event during cleanup) would
        #: run cleanup twice. By uid: kube adds no finalizer to an object being deleted, so it never returns.
        self._released: dict[str, str] = {}

    def bind(self, controller: Controller) -> None:
        """The controller whose primary (first-watched) informer holds the objects to finalize."""
        self.controller = controller

    @property
    def is_async(self) -> bool:
        """Whether the reconcile or the cleanup is a coroutine function: the wrapper is one too."""
        return inspect.iscoroutinefunction(self.user_reconcile) or inspect.iscoroutinefunction(self.cleanup)

    @property
    def reconcile(self) -> Reconciler:
        """What the controller calls: ``reconcile_async`` if either function is async, else ``reconcile_sync``."""
        return cast(Reconciler, self.reconcile_async if self.is_async else self.reconcile_sync)

    def _cached(self, req: Request) -> Obj | None:
        c = self.controller
        if c is None or not c.informers:
            name = c.name if c is not None else "?"
            raise FinalizerError(f"controller {name}: finalizer {self.finalizer} needs a watched kind: "
                                 "call .watch(informer) on the controller")
        return c.informers[0].get(req.key)

    def _patch(self, obj: Obj, finalizers: list[str], action: str) -> bool:
        """Write ``finalizers`` guarded by ``obj``'s resourceVersion; False if the object is gone.

        ``action`` (``adding finalizer x to``) starts the one-line error of a refused write.
        """
        try:
            self._write(obj, finalizers)
        except Exception as err:
            return self._refused(err, obj, action)
        log.debug("%s %s %s", action, obj.get("kind"), Request.of(obj))
        return True

    def _write(self, obj: Obj, finalizers: list[str]) -> None:
        guard = (obj.get("metadata") or {}).get("resourceVersion")  # a stale view conflicts, never overwrites
        self.objects.patch(obj, {"metadata": {"finalizers": finalizers, "resourceVersion": guard}})

    def _refused(self, err: Exception, obj: Obj, action: str) -> bool:
        """False for an object gone (404); else ``err`` raised again, as one line when the server refused."""
        if is_not_found(err):
            return False
        if status_of(err) is None:
            raise err
        raise FinalizerError(f"{action} {obj.get('kind')} {Request.of(obj)}: {describe(err).summary}") from None

    def _add(self, cached: Obj) -> bool:
        """Add the finalizer and wait until the cache shows it; False if the object is gone."""
        if not self._patch(cached, [*finalizers_of(cached), self.finalizer],
                           f"adding finalizer {self.finalizer} to"):
            return False
        c = self.controller
        if c is not None and c.writes is not None:
            fresh = c.informers[0].get(Request.of(cached).key)
            if fresh is not None:
                c.writes.wait(fresh, c.read_your_writes_timeout)
        return True

    def _remove(self, cached: Obj) -> None:
        self._drop(cached)
        self._released[Request.of(cached).key] = _uid(cached)

    def _drop(self, cached: Obj) -> None:
        """Remove the finalizer once cleanup returned. A cleanup that wrote the object itself (a status
        saying it is going) moved it past ``cached``: on that conflict the object is read again and the
        finalizer removed from it, rather than failing the key and running the cleanup a second time."""
        action = f"removing finalizer {self.finalizer} from"
        try:
            self._write(cached, [f for f in finalizers_of(cached) if f != self.finalizer])
        except Exception as err:
            if not is_conflict(err):
                self._refused(err, cached, action)
                return
            meta = cached.get("metadata") or {}
            try:
                live = self.objects.get(str(cached.get("apiVersion", "")), str(cached.get("kind", "")),
                                        str(meta.get("name", "")), str(meta.get("namespace") or ""))
            except Exception as read:
                self._refused(read, cached, action)
                return
            if self.finalizer in finalizers_of(live):
                self._patch(live, [f for f in finalizers_of(live) if f != self.finalizer], action)

    def _step(self, req: Request) -> tuple[str, Obj | None]:
        """What this key needs: ``reconcile``, ``add`` (then reconcile), ``cleanup`` or ``skip``."""
        cached = self._cached(req)
        if cached is None or not is_being_deleted(cached):
            self._released.pop(req.key, None)  # gone, or another object of that name
        if cached is None:
            return "reconcile", None
        held = self.finalizer in finalizers_of(cached)
        if is_being_deleted(cached):
            cleaned = self._released.get(req.key) == _uid(cached)
            return ("cleanup", cached) if held and not cleaned else ("skip", cached)
        return ("reconcile", cached) if held else ("add", cached)

    def reconcile_sync(self, req: Request) -> Result | Awaitable[Result | None] | None:
        """Finalizer first, cleanup on deletion, else the user's reconcile (its answer returned as is)."""
        step, cached = self._step(req)
        if step == "add" and cached is not None and not self._add(cached):
            return None
        if step == "cleanup" and cached is not None:
            self.cleanup(deepcopy_json(cached))
            self._remove(cached)
        if step in ("cleanup", "skip"):
            return None
        answer: Result | Awaitable[Result | None] | None = self.user_reconcile(req)
        return answer  # an awaitable (a reconcile returning one) the controller awaits

    async def reconcile_async(self, req: Request) -> Result | None:
        """As ``reconcile_sync``, awaiting whichever function is async; blocking calls (the API server,
        a plain function) run in a worker thread so the controller's event loop keeps going."""
        step, cached = self._step(req)
        if step == "add" and cached is not None and not await asyncio.to_thread(self._add, cached):
            return None
        if step == "cleanup" and cached is not None:
            await _call(self.cleanup, deepcopy_json(cached))
            await asyncio.to_thread(self._remove, cached)
        if step in ("cleanup", "skip"):
            return None
        answer: Result | None = await _call(self.user_reconcile, req)
        return answer


def _uid(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


async def _call(fn: Callable[[Any], Any], arg: Any) -> Any:
    """``fn(arg)``, awaited if async; a plain function runs in a thread."""
    if inspect.iscoroutinefunction(fn):
        return await fn(arg)
    result = await asyncio.to_thread(fn, arg)
    return await result if inspect.isawaitable(result) else result
