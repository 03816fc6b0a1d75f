"""``Command.main`` ends the process as a Python program ends (atexit handlers run) once the component's threads
have stopped; only a thread still running after the grace makes it exit without waiting, naming that thread."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent

COMPONENT = """
import atexit, sys, threading
import componentbase
from componentbase.app import _command

_command.EXIT_GRACE = 0.5
atexit.register(lambda: print("atexit ran", flush=True))

def run(completed, stop):
    {body}
    return 3

componentbase.Command("exiter", componentbase.Options(), run).main([])
"""


def main(body: str) -> subprocess.CompletedProcess[str]:
    code = COMPONENT.format(body=textwrap.indent(textwrap.dedent(body), "    ").strip())
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_threads_that_stop_with_the_component_let_it_exit_normally_with_its_code() -> None:
    result = main("""
        done = threading.Event()
        threading.Thread(target=done.wait, args=(0.2,), name="worker", daemon=True).start()
    """)
    assert result.returncode == 3, result.stderr
    assert "atexit ran" in result.stdout
    assert "Threads still running" not in result.stderr


def test_a_thread_that_never_stops_is_named_and_left_behind() -> None:
    result = main("""
        threading.Thread(target=threading.Event().wait, name="stubborn").start()
    """)
    assert result.returncode == 3, result.stderr
    assert "Threads still running 0.5s after stopping, exiting without them: stubborn" in result.stderr
    assert "atexit ran" not in result.stdout
