"""Suite-wide settings for componentbase's own tests."""

from __future__ import annotations

import os
import sys
import threading

import pytest

_status: list[int] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _status.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """End the process as ``Command.main`` does when threads are still alive.

    Calls abandoned at their deadline (leader election stops waiting on a stalled API by design) can
    leave a daemon thread blocked in a socket; if one writes to stderr while the interpreter shuts down,
    CPython aborts the process after every test has passed. The report is already printed here.
    """
    if _status and threading.active_count() > 1:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_status[0])
