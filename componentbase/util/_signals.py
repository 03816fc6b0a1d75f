"""Signals handled on a thread of their own, never in a Python signal handler.

Python runs a signal handler in the main thread between two of its bytecodes, which may be inside
``event.wait()`` while it holds the event's lock: a handler calling ``event.set()`` on that event then waits
for the lock forever (reproduced with faulthandler: 1 of 60 SIGTERMs sent from another process to a main
thread looping on ``stop.wait(timeout)``). Here the Python handler does nothing; the interpreter writes the
signal's number to a pipe (``signal.set_wakeup_fd``) and a thread reading it calls ``handle``, whichever
thread the kernel interrupted and whatever the main thread is blocked in.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["SignalThread"]


def _ignore(signum: int, frame: object) -> None:
    """The Python-level handler: nothing, the signal's number is in the wakeup pipe already."""


class SignalThread:
    """While entered (in the main thread), ``handle(signum)`` runs on a thread for each of ``signals``.

    Elsewhere than in the main thread it does nothing (only the main thread may set signal handlers).
    """

    def __init__(self, handle: Callable[[int], None],
                 signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> None:
        self.handle = handle
        self.signals = signals
        self.saved: dict[int, Any] = {}
        self.pipe: tuple[int, int] | None = None
        self.saved_fd = -1
        self.thread: threading.Thread | None = None

    def _read(self, read_end: int) -> None:
        while data := os.read(read_end, 64):  # empty once __exit__ closes the write end
            for signum in data:
                if signum in self.saved:
                    self.handle(signum)

    def __enter__(self) -> SignalThread:
        if threading.current_thread() is not threading.main_thread():
            return self
        read_end, write_end = self.pipe = os.pipe()
        os.set_blocking(write_end, False)
        self.saved_fd = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
        for sig in self.signals:
            self.saved[sig] = signal.signal(sig, _ignore)
        self.thread = threading.Thread(target=self._read, args=(read_end,), name="signal-handler", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
        if self.pipe is not None:
            signal.set_wakeup_fd(self.saved_fd)
            os.close(self.pipe[1])
            if self.thread is not None:
                self.thread.join()
            os.close(self.pipe[0])
