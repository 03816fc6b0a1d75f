"""``exec -t``: the command runs on a pseudo-terminal, so a shell prompts, echoes and edits lines as it would
in a container runtime's TTY; the client's resize messages set the terminal's size.
"""

from __future__ import annotations

import fcntl
import os
import pty
import selectors
import struct
import subprocess
import termios
import threading

from componentbase_examples.virtual_kubelet.provider_types import ExecIO

__all__ = ["run_on_terminal"]


def _take_terminal() -> None:
    """In the child, after ``setsid``: make its stdin (the terminal) the controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _type_in(io: ExecIO, master: int) -> None:
    assert io.stdin is not None
    try:
        while data := (io.stdin.read1(65536) if hasattr(io.stdin, "read1") else io.stdin.read(65536)):
            os.write(master, data)
    except (OSError, ValueError):
        pass


def run_on_terminal(argv: list[str], env: dict[str, str], working_dir: str, io: ExecIO) -> int:
    """Run ``argv`` with a pseudo-terminal as stdin, stdout and stderr; the output goes to ``io.stdout``."""
    master, slave = pty.openpty()

    def resize(width: int, height: int) -> None:
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))

    try:
        proc = subprocess.Popen(argv, env=dict(env, TERM=env.get("TERM", "xterm")), cwd=working_dir or None,
                                stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                                preexec_fn=_take_terminal)
    finally:
        os.close(slave)
    io.resize = resize
    io.on_terminal()
    if io.stdin is not None:
        threading.Thread(target=_type_in, args=(io, master), name="exec-tty-stdin", daemon=True).start()
    sel = selectors.DefaultSelector()
    sel.register(master, selectors.EVENT_READ)
    try:
        while not io.closed():
            if not sel.select(timeout=0.5):
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every holder of the terminal's other end is gone
                break
            if not data:
                break
            if io.stdout is not None:
                io.stdout(data)
        else:
            proc.kill()
    finally:
        sel.close()
        os.close(master)
    return proc.wait()
