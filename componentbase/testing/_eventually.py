"""``eventually``: the one way tests wait for something another thread or process does."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["eventually"]

T = TypeVar("T")

_FIRST_PAUSE = 0.01
_MAX_PAUSE = 0.1


def eventually(condition: Callable[[], T], timeout: float = 10.0, interval: float | None = None, *, what: str = "",
               ignoring: tuple[type[BaseException], ...] = ()) -> T:
    """Poll ``condition`` until it returns something truthy, and return that value.

    Controllers converge asynchronously, so a test asserts the state it waits for rather than sleeping a
    guessed time: it passes as soon as the state is reached, and a slow machine only makes it wait longer.
    After ``timeout`` seconds it raises ``AssertionError`` naming ``what`` (or the condition), its last value
    and the last of the ``ignoring`` exceptions (errors that mean "not yet", such as a port not listening).

    Without an ``interval`` the pause between polls starts at 10 ms and grows by half each time up to
    100 ms: a quick change is seen at once, and a long wait does not spend its CPU polling (a condition
    is often a list through the client, a few milliseconds each; on two cores the waits of a whole test
    run added up to a tenth of its CPU at a fixed 20 ms). A given ``interval`` is kept fixed.
    """
    name = what or getattr(condition, "__qualname__", "") or repr(condition)
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    value: T | None = None
    pause = interval if interval is not None else _FIRST_PAUSE
    while True:
        try:
            value = condition()
        except ignoring as err:
            last_error = err
        else:
            if value:
                return value
        left = deadline - time.monotonic()
        if left <= 0:
            break
        time.sleep(min(pause, left))
        if interval is None:
            pause = min(pause * 1.5, _MAX_PAUSE)
    detail = f"; last error: {last_error!r}" if last_error is not None else ""
    raise AssertionError(f"timed out after {timeout}s waiting for {name} (last value: {value!r}{detail})")
