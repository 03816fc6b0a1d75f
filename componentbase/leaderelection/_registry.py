"""The electors running in this process, by Lease: one started from its own Lease's leader work is refused.

``run_component`` elected, and the work it runs while leading built a ``Manager`` that elected again on the
same Lease: the second elector waited forever for a Lease its own process held, and the component hung
without a word. Such an elector, or a second one with the same identity (both would think they lead), is
a ``DuplicateElectorError`` at start. Electors with their own identities, started side by side, are
distinct candidates (tests run several replicas in one process) and are allowed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["DuplicateElectorError", "claim", "leading", "release"]

_lock = threading.Lock()
_running: dict[tuple[str, str], list[str]] = {}  # (server, namespace/name) -> identities
_local = threading.local()  # .leases: the Leases whose leader work runs on this thread


class DuplicateElectorError(RuntimeError):
    """A second elector for one Lease in this process that could never lead, or would lead twice."""


def _key(lock: Any) -> tuple[str, str]:
    client = getattr(lock, "_api_client", None)
    return str(getattr(getattr(client, "configuration", None), "host", "") or ""), lock.describe()


def claim(lock: Any, identity: str) -> None:
    """Record a starting elector, or raise ``DuplicateElectorError`` saying why it must not start."""
    key = _key(lock)
    lease = lock.describe()
    if key in getattr(_local, "leases", ()):
        raise DuplicateElectorError(
            f"leader election for lease {lease} started by the work of this process's leader of that lease: it "
            f"would wait forever for a lease its own process holds. Elect once: a Manager built with "
            f"Manager.from_config runs under run_component's election; a run function whose Manager elects "
            f"is marked run.elects_leader = True")
    with _lock:
        identities = _running.setdefault(key, [])
        if identity in identities:
            raise DuplicateElectorError(f"leader election for lease {lease} is already running in this process "
                                        f"as {identity}: both would think they lead")
        identities.append(identity)


def release(lock: Any, identity: str) -> None:
    key = _key(lock)
    with _lock:
        identities = _running.get(key, [])
        if identity in identities:
            identities.remove(identity)
        if not identities:
            _running.pop(key, None)


@contextlib.contextmanager
def leading(lock: Any) -> Iterator[None]:
    """Mark the current thread as running the leader work of ``lock``'s Lease."""
    leases: frozenset[tuple[str, str]] = getattr(_local, "leases", frozenset())
    _local.leases = leases | {_key(lock)}
    try:
        yield
    finally:
        _local.leases = leases
