"""Running a completed component: its work, gated by leader election when the config asks for it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from componentbase.appconfig import CompletedConfig

__all__ = ["run_component"]

log = logging.getLogger("componentbase.run")


def run_component(
    completed: CompletedConfig[Any],
    work: Callable[[CompletedConfig[Any], threading.Event], int | None],
    stop: threading.Event,
) -> int:
    """Run ``work`` until ``stop``; the exit code is what it returns (``None`` is 0)."""
    if not isinstance(completed, CompletedConfig):
        raise TypeError("run needs a CompletedConfig: call Config.complete() first")
    le = completed.config.leader_election
    if le is not None and le.leader_elect:
        from componentbase.leaderelection.run import run_leading

        return run_leading(completed, work, stop)
    code = work(completed, stop)
    return 0 if code is None else int(code)
