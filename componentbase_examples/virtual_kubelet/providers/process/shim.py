"""The process provider's shim (what conmon is to CRI-O): one per container run, outliving the virtual kubelet.

``python -I -S shim.py <container dir> <attempt> <token>`` starts the container's process (``spec.json`` in
the container's directory: argv, env, working dir), writes ``<attempt>.run.json`` (the process's pid and
start time, its own pid, start time and token) and prints it on stdout, copies the process's output into the
CRI log ``<attempt>.log``, and when the process ends writes ``<attempt>.exit.json`` (exit code, reason,
times). For a container with ``stdin`` it also makes the FIFO ``<attempt>.stdin`` and relays what attached
clients write there into the process's stdin pipe (``relay_stdin``), so any virtual kubelet can attach.
For a container with ``tty`` the process runs on a pseudo-terminal instead (stdin, stdout and stderr, as a
container runtime's TTY, with ``TERM=xterm``): the shim copies the terminal's output into the log as stdout,
relays clients' input into it, and records its path in the run record so a client's resize can set its size.
The shim is its own session and has no death signal, so a virtual kubelet killed by SIGKILL loses neither
the output nor the exit code; the process gets ``PR_SET_PDEATHSIG`` from the shim, so it never runs
unwatched. Only the standard library is imported, so a shim costs about four bare interpreter starts.

The virtual kubelet imports this module too, for ``LogWriter``, ``start_time`` and the file names.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import termios
import threading
import time
from typing import IO, Any

__all__ = ["CANNOT_RUN", "LogWriter", "exit_path", "read_json", "run_path", "start_time", "stdin_path",
           "write_json"]

#: Exit code the kubelet reports when a container's command cannot be started.
CANNOT_RUN = 128


def _stamp() -> bytes:
    """RFC3339Nano at a fixed nine digits, so records sort as text too."""
    ns = time.time_ns()
    return (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 10**9)) + f".{ns % 10**9:09d}Z").encode()


class LogWriter:
    """Appends a process's output to one CRI log file; one ``write`` per chunk read from a pipe."""

    def __init__(self, path: str) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.path = path
        self._file: IO[bytes] = open(path, "ab")
        self._partial: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def write(self, stream: str, data: bytes) -> None:
        with self._lock:
            lines = (self._partial.pop(stream, b"") + data).split(b"\n")
            rest = lines.pop()
            tag = stream.encode()
            out = b"".join(_stamp() + b" " + tag + b" F " + line + b"\n" for line in lines)
            if len(rest) >= 16384:  # a very long line is written out in parts, marked P
                out += _stamp() + b" " + tag + b" P " + rest + b"\n"
                rest = b""
            if rest:
                self._partial[stream] = rest
            if out:
                self._file.write(out)
                self._file.flush()

    def close(self) -> None:
        with self._lock:
            for stream, rest in self._partial.items():
                self._file.write(_stamp() + b" " + stream.encode() + b" P " + rest + b"\n")
            self._partial.clear()
            self._file.close()


def start_time(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat`` field 22); None: no such process.

    A pid and its start time name one process for the machine's uptime: a pid reused by another program
    has another start time. Read from ``/proc`` rather than psutil, so the example needs no extra package.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    return int(fields[19]) if len(fields) > 19 and fields[0] != b"Z" else None


def run_path(directory: str, attempt: int) -> str:
    return os.path.join(directory, f"{attempt}.run.json")


def exit_path(directory: str, attempt: int) -> str:
    return os.path.join(directory, f"{attempt}.exit.json")


def stdin_path(directory: str, attempt: int) -> str:
    """The FIFO an attached client writes the process's input into (a container with ``stdin: true``)."""
    return os.path.join(directory, f"{attempt}.stdin")


def write_json(path: str, data: Any) -> None:
    """Written whole or not at all (a reader never sees half a record), readable by this user only."""
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"  # two writers never share a temporary file
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def read_json(path: str) -> Any:
    """The record at ``path``; None when it is missing or unreadable."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the shim goes (Linux ``prctl``)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _on_terminal() -> None:
    """In a ``tty`` container's child, after ``setsid``: its terminal (stdout) becomes its controlling one."""
    _die_with_parent()
    fcntl.ioctl(1, termios.TIOCSCTTY, 0)


def pump(streams: list[tuple[int, str]], writer: LogWriter) -> None:
    """Copy each ``(fd, stream name)`` into the log until all are closed (a terminal's EIO is its close)."""
    sel = selectors.DefaultSelector()
    for fd, name in streams:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ, name)
    while sel.get_map():
        for key, _ in sel.select(timeout=1.0):
            try:
                data = os.read(key.fd, 65536)
            except BlockingIOError:
                continue
            except OSError:  # EIO: every holder of the terminal's other end is gone
                data = b""
            if not data:
                sel.unregister(key.fileobj)
                continue
            writer.write(str(key.data), data)
    sel.close()
    for fd, _ in streams:
        os.close(fd)


def relay_stdin(fifo: str, pipe: IO[bytes], once: bool) -> None:
    """Each attached client's input, written into ``fifo``, into the process's stdin ``pipe``.

    The shim holds the pipe's write end, so the process sees no end of input while nobody is attached; a
    client's input ends when it closes its end of the FIFO (an open waits for a client), and with ``once``
    (``stdinOnce``) that closes the pipe and removes the FIFO, so later clients find no stdin.
    """
    try:
        while True:
            with open(fifo, "rb", buffering=0) as client:
                while data := client.read(65536):
                    pipe.write(data)
                    pipe.flush()
            if once:
                break
    except OSError:
        pass  # the process closed its stdin or exited
    finally:
        _remove(fifo)
        try:
            pipe.close()
        except OSError:
            pass


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def _announce(run: dict[str, Any]) -> None:
    """Tell the virtual kubelet that started us, if it still listens."""
    try:
        sys.stdout.write(json.dumps(run) + "\n")
        sys.stdout.close()
    except OSError:
        pass


def main(directory: str, attempt: int, token: str) -> int:
    spec = read_json(os.path.join(directory, "spec.json")) or {}
    argv: list[str] = spec.get("argv") or [""]
    env: dict[str, str] = spec.get("env") or {}
    started = time.time()
    writer = LogWriter(os.path.join(directory, f"{attempt}.log"))
    fifo = stdin_path(directory, attempt) if spec.get("stdin") else None
    master, terminal = os.openpty() if spec.get("tty") else (-1, -1)
    try:
        program = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env.get("PATH", os.defpath))
        if not program:
            raise FileNotFoundError(2, "executable file not found in $PATH")
        if terminal >= 0:
            proc = subprocess.Popen(
                [program, *argv[1:]], env={"TERM": "xterm", **env}, cwd=spec.get("workingDir") or None,
                stdin=terminal if fifo else subprocess.DEVNULL, stdout=terminal, stderr=terminal,
                start_new_session=True, preexec_fn=_on_terminal)
        else:
            proc = subprocess.Popen(
                [program, *argv[1:]], env=env, cwd=spec.get("workingDir") or None,
                stdin=subprocess.PIPE if fifo else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    except OSError as err:
        writer.close()
        write_json(exit_path(directory, attempt), {
            "exitCode": CANNOT_RUN, "reason": "ContainerCannotRun", "startedAt": started, "finishedAt": time.time(),
            "message": f'exec: "{argv[0]}": {err.strerror or err}'})
        _announce({})
        return 0
    run = {"pid": proc.pid, "startTime": start_time(proc.pid), "shimPid": os.getpid(),
           "shimStartTime": start_time(os.getpid()), "token": token, "startedAt": started}
    streams = [(s.fileno(), name) for s, name in ((proc.stdout, "stdout"), (proc.stderr, "stderr")) if s is not None]
    pipe = proc.stdin
    if terminal >= 0:
        run["tty"] = os.ttyname(terminal)
        os.close(terminal)  # the process holds it now: its exit closes the terminal
        streams = [(master, "stdout")]
        pipe = open(os.dup(master), "wb", buffering=0) if fifo else None
    if fifo and pipe is not None:
        _remove(fifo)
        os.mkfifo(fifo, 0o600)
        # A terminal has no end of input to pass on (its typist sends ^D for that): stdinOnce applies to pipes.
        once = bool(spec.get("stdinOnce")) and terminal < 0
        threading.Thread(target=relay_stdin, args=(fifo, pipe, once), daemon=True).start()
    write_json(run_path(directory, attempt), run)
    _announce(run)
    pump(streams, writer)
    code = proc.wait()
    writer.close()
    if fifo:
        _remove(fifo)  # a client that comes now finds no stdin instead of waiting for a reader
    exit_code = code if code >= 0 else 128 - code  # killed by signal n: 128+n, as a container runtime says
    write_json(exit_path(directory, attempt), {
        "exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error", "startedAt": started,
        "finishedAt": time.time()})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
