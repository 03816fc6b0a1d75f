"""Named health checks behind ``/healthz``, ``/livez`` and ``/readyz``, answering as apiserver's healthz does.

A check is anything with a ``name`` and a ``check()`` that raises when unhealthy (the leader election's
``HealthzAdaptor`` is one). The root endpoints are public, so a failure says only ``reason withheld``;
the reason is logged, and shown by ``/healthz/<name>``, which needs authorization.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import attrs

__all__ = ["PING", "HealthChecker", "NamedCheck", "ShutdownCheck", "check_one", "check_root"]

log = logging.getLogger("componentbase.serving")


class HealthChecker(Protocol):
    """One named check behind ``/healthz``, ``/livez`` or ``/readyz``; ``check`` raises to report unhealthy."""

    @property
    def name(self) -> str: ...

    def check(self) -> None: ...


@attrs.frozen
class NamedCheck:
    """A check from a function: ``NamedCheck("informer-sync", lambda: ...)``."""

    name: str
    func: Callable[[], None]

    def check(self) -> None:
        self.func()


PING = NamedCheck("ping", lambda: None)


class ShutdownCheck:
    """Fails once the component began stopping, so load balancers stop sending it work (readyz)."""

    name = "shutdown"

    def __init__(self, stopping: threading.Event) -> None:
        self._stopping = stopping

    def check(self) -> None:
        if self._stopping.is_set():
            raise RuntimeError("process is shutting down")


def check_root(kind: str, checks: Sequence[HealthChecker], query: Mapping[str, list[str]]) -> tuple[int, str]:
    """(status, body) for ``/<kind>``: ``ok``, or each check and the verdict with ``?verbose`` or on failure."""
    excluded = list(dict.fromkeys(query.get("exclude", [])))
    lines: list[str] = []
    failed: list[str] = []
    reasons: list[str] = []
    for c in checks:
        if c.name in excluded:
            excluded.remove(c.name)
            lines.append(f"[+]{c.name} excluded: ok")
            continue
        try:
            c.check()
        except Exception as err:
            lines.append(f"[-]{c.name} failed: reason withheld")
            failed.append(c.name)
            reasons.append(f"[-]{c.name} failed: {err}")
        else:
            lines.append(f"[+]{c.name} ok")
    if excluded:
        names = ",".join(f'"{name}"' for name in excluded)
        lines.append(f"warn: some health checks cannot be excluded: no matches for {names}")
    if failed:
        log.info("%s check failed: %s\n%s", ",".join(failed), kind, "\n".join(reasons))
        return 500, "".join(f"{line}\n" for line in lines) + f"{kind} check failed\n"
    if "verbose" not in query:
        return 200, "ok"
    return 200, "".join(f"{line}\n" for line in lines) + f"{kind} check passed\n"


def check_one(checks: Sequence[HealthChecker], name: str) -> tuple[int, str] | None:
    """(status, body) for ``/<kind>/<name>``; ``None`` when there is no such check."""
    for c in checks:
        if c.name == name:
            try:
                c.check()
            except Exception as err:
                return 500, f"internal server error: {err}\n"
            return 200, "ok"
    return None
