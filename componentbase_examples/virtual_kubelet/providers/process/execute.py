"""``exec`` in a process container: run a command with the container's environment, wired to the client."""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import threading

from componentbase_examples.virtual_kubelet.provider_types import ExecIO
from componentbase_examples.virtual_kubelet.providers.process.terminal import run_on_terminal

__all__ = ["run"]


def _feed(src: ExecIO, dst: object) -> None:
    """Copy the client's stdin into the command until either side closes it."""
    assert src.stdin is not None
    try:
        while True:
            data = src.stdin.read1(65536) if hasattr(src.stdin, "read1") else src.stdin.read(65536)
            if not data:
                break
            dst.write(data)  # type: ignore[attr-defined]
            dst.flush()  # type: ignore[attr-defined]
    except (OSError, ValueError):
        pass
    finally:
        try:
            dst.close()  # type: ignore[attr-defined]
        except OSError:
            pass


def run(command: list[str], env: dict[str, str], working_dir: str, io: ExecIO) -> int:
    """The command's exit code; its output goes to ``io`` as it comes."""
    if not command:
        raise ValueError("no command given")
    program = command[0] if "/" in command[0] else shutil.which(command[0], path=env.get("PATH", os.defpath))
    if program is None:
        raise FileNotFoundError(f'exec: "{command[0]}": executable file not found in $PATH')
    if io.tty:
        return run_on_terminal([program, *command[1:]], env, working_dir, io)
    proc = subprocess.Popen([program, *command[1:]], env=env, cwd=working_dir or None,
                            stdin=subprocess.PIPE if io.stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT if io.tty else subprocess.PIPE,
                            start_new_session=True)
    if io.stdin is not None:
        threading.Thread(target=_feed, args=(io, proc.stdin), name="exec-stdin", daemon=True).start()
    sel = selectors.DefaultSelector()
    sinks = {}
    for stream, sink in ((proc.stdout, io.stdout), (proc.stderr, io.stderr)):
        if stream is not None:
            sel.register(stream, selectors.EVENT_READ)
            sinks[stream.fileno()] = sink
    while sel.get_map():
        if io.closed():
            proc.kill()
            break
        for key, _ in sel.select(timeout=0.5):
            data = os.read(key.fd, 65536)
            if not data:
                sel.unregister(key.fileobj)
                continue
            sink = sinks.get(key.fd)
            if sink is not None:
                sink(data)
    sel.close()
    return proc.wait()
