"""``eventually``: the one way tests wait for something another thread or process does."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["eventually"]

T = TypeVar("T")


def eventually(condition: Callable[[], T], timeout: float = 10.0, interval: float = 0.02, *, what: str = "",
               ignoring: tuple[type[BaseException], ...] = ()) -> T:
    """Poll ``condition`` until it returns something truthy, and return that value.

    Controllers converge asynchronously, so a test asserts the state it waits for rather than sleeping a
    guessed time: it passes as soon as the state is reached, and a slow machine only makes it wait longer.
    After ``timeout`` seconds it raises ``AssertionError`` naming ``what`` (or the condition), its last value
    and the last of the ``ignoring`` exceptions (errors that mean "not yet", such as a port not listening).
    """
    name = what or getattr(condition, "__qualname__", "") or repr(condition)
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    value: T | None = None
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
        time.sleep(min(interval, left))
    detail = f"; last error: {last_error!r}" if last_error is not None else ""
    raise AssertionError(f"timed out after {timeout}s waiting for {name} (last value: {value!r}{detail})")
