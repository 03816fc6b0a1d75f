"""What a reconcile is given and what it answers, as controller-runtime's ``reconcile.Request`` and ``Result``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = ["Event", "MapFunc", "Predicate", "Reconciler", "Request", "Result", "TerminalError"]

Obj = dict[str, Any]


class Request(NamedTuple):
    """The object to reconcile, by name only: the reconcile reads its current state from the cache.

    A named tuple, not a dataclass: a work queue hashes each key about seven times on its way through
    (dirty, processing, backoff), and a tuple's hash and equality are C code, a dataclass's Python.
    """

    namespace: str
    name: str

    @classmethod
    def of(cls, obj: Obj) -> Request:
        """The request naming ``obj``."""
        meta = obj.get("metadata") or {}
        return cls(str(meta.get("namespace") or ""), str(meta.get("name") or ""))

    @property
    def key(self) -> str:
        """``namespace/name`` (``name`` when cluster-scoped): the key of the object in an informer's cache."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def __str__(self) -> str:
        return self.key


@dataclass(frozen=True, slots=True)
class Result:
    """``requeue_after`` seconds: reconcile again then; ``requeue``: again soon, with the item's backoff."""

    requeue: bool = False
    requeue_after: float = 0.0


class TerminalError(Exception):
    """Raise it from a reconcile that no retry can fix (an invalid spec): logged with the key, counted in
    ``controller_runtime_terminal_reconcile_errors_total`` and not retried, as controller-runtime's
    ``reconcile.TerminalError``; the key's next event reconciles it again. ``raise TerminalError(msg) from err``.
    """


@dataclass(frozen=True, slots=True)
class Event:
    """A change an informer saw: ``type`` is ``ADDED``, ``MODIFIED`` or ``DELETED``; ``old`` only on updates."""

    type: str
    object: Obj
    old: Obj | None = None


#: The reconcile function: ``None`` means done. An ``async def`` one (or one returning an awaitable) runs on
#: the controller's event loop.
Reconciler = Callable[[Request], "Result | Awaitable[Result | None] | None"]
#: Whether an event is worth a reconcile (``generation_changed`` ...).
Predicate = Callable[[Event], bool]
#: Which objects an event concerns (the object itself, its owner, anything).
MapFunc = Callable[[Obj], Iterable[Request]]
