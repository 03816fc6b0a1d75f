"""``attach`` to a process container: the client's stdin into the process, its output back to the client.

Output is followed in the container's CRI log from the moment of attaching (what the kubelet streams is
the same bytes, as the runtime writes them), split back into stdout and stderr by the records' stream
tag; the log writer keeps a line until its newline, so a prompt without one reaches the client with the
next line. Input goes into the process's stdin, which exists when the container asked for ``stdin: true``:
each attached client opens its own writer into the FIFO the container's shim reads and relays into the
process's stdin pipe, and closes it when its input ends; the shim keeps the pipe open between clients,
or with ``stdinOnce`` closes it when the first client's input ends. A later client asking for stdin is
then refused with an error (its input would go nowhere), as upstream's runtimes fail its write; one that
only watches the output is served. A ``tty`` container's process runs on a terminal its shim holds: input
goes in through the same FIFO, and a client with ``tty`` sets the terminal's size through its path. The
session ends when the client leaves or the process exits or restarts.
"""

from __future__ import annotations

import fcntl
import os
import struct
import termios
import threading
import time
from typing import IO, Protocol

from componentbase_examples.virtual_kubelet.provider_types import ExecIO

__all__ = ["attach"]

_POLL = 0.05


class _Container(Protocol):
    restart_count: int
    finished: bool
    keep_stdin: bool
    stdin_once: bool

    def log_path(self, restart: int | None = None) -> str: ...

    def open_stdin(self) -> IO[bytes] | None: ...

    def terminal(self) -> str | None: ...

    @property
    def running(self) -> bool: ...


def _feed(src: IO[bytes], dst: IO[bytes] | None) -> None:
    """The client's input into ``dst`` until it ends (None: dropped); then ``dst`` is closed."""
    try:
        while data := (src.read1(65536) if hasattr(src, "read1") else src.read(65536)):
            if dst is not None:
                dst.write(data)
                dst.flush()
    except (OSError, ValueError):
        pass  # the process's stdin closed (it exited): nothing more to feed
    finally:
        if dst is not None:
            try:
                dst.close()
            except OSError:
                pass


def _emit(record: bytes, io: ExecIO) -> None:
    """One CRI record (``<time> <stream> <P|F> <text>``) to the client's matching stream."""
    parts = record.rstrip(b"\n").split(b" ", 3)
    if len(parts) < 3:
        return
    text = (parts[3] if len(parts) == 4 else b"") + (b"\n" if parts[2] == b"F" else b"")
    sink = io.stderr if parts[1] == b"stderr" and io.stderr is not None else io.stdout
    if sink is not None and text:
        sink(text)


def _resize(terminal: str, width: int, height: int) -> None:
    """Set the size of the process's terminal (its shim holds the other end); the process gets SIGWINCH."""
    try:
        fd = os.open(terminal, os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return  # the process ended: nothing to resize
    try:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))
    finally:
        os.close(fd)


def attach(proc: _Container, io: ExecIO) -> int:
    """Stream until the client goes or the process ends; 0 (the kubelet reports an attach's end as Success)."""
    if not proc.running:
        raise ValueError("cannot attach to a container that is not running")
    terminal = proc.terminal() if io.tty else None
    if terminal is not None:
        io.resize = lambda width, height: _resize(terminal, width, height)
        io.on_terminal()  # a size the client sent already is applied now
    if io.stdin is not None and not proc.keep_stdin:
        raise ValueError("stdin is not enabled for this container: set stdin: true in its spec")
    restart = proc.restart_count
    path = proc.log_path(restart)
    with open(path, "rb") as log:
        log.seek(0, os.SEEK_END)  # before any input goes in: the answer to it is not skipped
        if io.stdin is not None:
            writer = proc.open_stdin()
            if writer is None and proc.stdin_once and proc.running and proc.restart_count == restart:
                raise ValueError("the container's stdin was closed when its first attached client's input ended "
                                 "(stdinOnce): attach without stdin, or restart the container")
            threading.Thread(target=_feed, args=(io.stdin, writer), name="attach-stdin", daemon=True).start()
        partial = b""
        while not io.closed():
            chunk = log.read()
            if chunk:
                lines = (partial + chunk).split(b"\n")
                partial = lines.pop()
                for line in lines:
                    _emit(line, io)
                continue
            if proc.restart_count != restart or proc.finished or not proc.running:
                break
            time.sleep(_POLL)
        for line in (partial + log.read()).split(b"\n"):
            _emit(line, io)  # what the process wrote before it ended
    return 0
