"""SIGINT/SIGTERM set a component's stop event whatever its main thread is doing at that moment."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from componentbase.app._command import _signals_set

pytestmark = [pytest.mark.process, pytest.mark.timeout(60)]

#: Sends SIGTERM to its parent at random moments, one after each line it reads (the parent's "seen").
SENDER = """
import os, random, signal, sys, time
for line in sys.stdin:
    time.sleep(random.uniform(0, 0.003))
    os.kill(os.getppid(), signal.SIGTERM)
"""

ROUNDS = 300


def test_a_signal_sets_stop_even_while_the_main_thread_holds_the_events_lock() -> None:
    """A main thread looping on ``stop.wait(timeout)`` holds the event's lock for moments on each turn. A
    handler that set ``stop`` itself, run in such a moment, waited for that lock forever: about one signal in
    30 to 60 from another process hung so. 300 signals, each at a random moment of such a loop, must each
    set ``stop`` (the test clears it after each, so none counts as the second that exits at once)."""
    stop = threading.Event()
    with _signals_set(stop):
        sender = subprocess.Popen([sys.executable, "-c", SENDER], stdin=subprocess.PIPE)
        assert sender.stdin is not None
        try:
            for _ in range(ROUNDS):
                sender.stdin.write(b"go\n")
                sender.stdin.flush()
                deadline = time.monotonic() + 5
                while not stop.wait(0.00001):
                    assert time.monotonic() < deadline, "a SIGTERM did not set stop within 5 s"
                stop.clear()
        finally:
            sender.stdin.close()
            sender.wait(10)
