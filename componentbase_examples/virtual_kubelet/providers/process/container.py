"""One container as a supervised child process: start, capture output, restart per policy, stop in time.

The process runs exactly the container's ``command`` + ``args`` (no shell, no image), in its own process
group so a stop reaches everything it started. On Linux the child also gets ``PR_SET_PDEATHSIG``: if the
virtual kubelet dies, even by SIGKILL, its containers die with it instead of running on unsupervised.
One thread per container spawns the process (the death signal follows that thread), pumps its output
into the log and waits for it; the same thread restarts it after a backoff.
"""

from __future__ import annotations

import ctypes
import logging
import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from componentbase.client import format_time
from componentbase.util import Backoff
from componentbase_examples.virtual_kubelet.providers.process.crilog import LogWriter

__all__ = ["ContainerProcess", "exit_restarts"]

log = logging.getLogger("componentbase_examples.virtual_kubelet.process")

#: Exit code and reason the kubelet reports when a container's command cannot be started.
CANNOT_RUN = 128


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the parent thread goes (Linux ``prctl``)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def exit_restarts(policy: str, exit_code: int) -> bool:
    """Whether a container that exited with ``exit_code`` is started again under ``policy``."""
    if policy == "Always":
        return True
    if policy == "OnFailure":
        return exit_code != 0
    return False


class ContainerProcess:
    """A container's process and its state, in the shape of a ``containerStatus``."""

    #: The container's ``stdin: true``: its process reads a pipe that ``kubectl attach`` writes into.
    keep_stdin = False

    def __init__(self, *, name: str, argv: list[str], env: dict[str, str], working_dir: str, log_dir: str,
                 restart_policy: str, backoff: float, max_backoff: float,
                 on_change: Callable[[], None]) -> None:
        self.name = name
        self.argv = argv
        self.env = env
        self.working_dir = working_dir
        self.log_dir = log_dir
        self.restart_policy = restart_policy
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._on_change = on_change
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._stopping = False
        self._proc: subprocess.Popen[bytes] | None = None
        self.restart_count = 0
        self.state: dict[str, Any] = {"waiting": {"reason": "ContainerCreating"}}
        self.last_state: dict[str, Any] = {}
        #: Terminated for good: it will not be started again.
        self.finished = False
        self._thread = threading.Thread(target=self._run, name=f"container-{name}", daemon=True)

    # --- what the provider reads --------------------------------------------------------------

    def log_path(self, restart: int | None = None) -> str:
        return os.path.join(self.log_dir, f"{self.restart_count if restart is None else restart}.log")

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.returncode is None else None

    @property
    def stdin(self) -> IO[bytes] | None:
        """The running process's stdin pipe (``keep_stdin``), or None."""
        proc = self._proc
        return proc.stdin if proc is not None and proc.returncode is None else None

    @property
    def running(self) -> bool:
        return "running" in self.state

    def status(self, image: str) -> dict[str, Any]:
        with self._lock:
            status: dict[str, Any] = {"name": self.name, "image": image, "imageID": "",
                                      "ready": "running" in self.state, "started": "running" in self.state,
                                      "restartCount": self.restart_count, "state": dict(self.state)}
            if self.pid is not None:
                status["containerID"] = f"process://{self.pid}"
            if self.last_state:
                status["lastState"] = dict(self.last_state)
            return status

    # --- life cycle -----------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self, grace: float) -> None:
        """SIGTERM the process group, SIGKILL it after ``grace`` seconds; no restart follows."""
        with self._lock:
            self._stopping = True
            self._wake.notify_all()
            proc = self._proc
        if proc is not None and proc.returncode is None:
            _signal_group(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=max(grace, 0.0))
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
        if self._thread.ident is not None:
            self._thread.join(timeout=max(grace, 0.0) + 5.0)

    def _set(self, state: dict[str, Any], last: dict[str, Any] | None = None, final: bool = False) -> None:
        with self._lock:
            if last is not None:
                self.last_state = last
            self.state = state
            self.finished = final
        self._on_change()

    def _run(self) -> None:
        restarts = Backoff(duration=self.backoff, factor=2.0, jitter=0.0, cap=self.max_backoff)  # CrashLoopBackOff
        while True:
            started = time.monotonic()
            terminated = self._run_once()
            with self._lock:
                stopping = self._stopping
            if stopping or not exit_restarts(self.restart_policy, terminated["exitCode"]):
                self._set({"terminated": terminated}, final=True)
                return
            if time.monotonic() - started > 2 * self.max_backoff:
                restarts.reset()  # ran long enough: the kubelet forgets the backoff
            delay = restarts.step()
            reason = "CrashLoopBackOff" if terminated["exitCode"] != 0 else "Completed"
            message = f"back-off {delay:g}s restarting failed container={self.name}"
            self._set({"waiting": {"reason": reason, "message": message}}, {"terminated": terminated})
            with self._lock:
                if not self._stopping:
                    self._wake.wait(delay)
                stopped = self._stopping
                if not stopped:
                    self.restart_count += 1
            if stopped:
                self._set({"terminated": terminated}, final=True)
                return

    def _run_once(self) -> dict[str, Any]:
        """Start the process, pump its output until it exits; the ``terminated`` state it ended in."""
        writer = LogWriter(self.log_path())
        started = format_time()
        try:
            proc = self._spawn()
        except OSError as err:
            writer.close()
            message = f'exec: "{self.argv[0]}": {err.strerror or err}'
            return {"exitCode": CANNOT_RUN, "reason": "ContainerCannotRun", "message": message,
                    "startedAt": started, "finishedAt": format_time()}
        with self._lock:
            self._proc = proc
            stopping = self._stopping
        if stopping:  # stop() came while spawning: it could not see this process
            _signal_group(proc, signal.SIGKILL)
        self._set({"running": {"startedAt": started}})
        _pump(proc, writer)
        code = proc.wait()
        writer.close()
        exit_code = code if code >= 0 else 128 - code  # killed by signal n: 128+n, as a container runtime says
        reason = "Completed" if exit_code == 0 else "Error"
        return {"exitCode": exit_code, "reason": reason, "startedAt": started, "finishedAt": format_time(),
                "containerID": f"process://{proc.pid}"}

    def _spawn(self) -> subprocess.Popen[bytes]:
        program = shutil.which(self.argv[0], path=self.env.get("PATH", os.defpath)) if "/" not in self.argv[0] \
            else self.argv[0]
        if program is None:
            raise FileNotFoundError(2, "executable file not found in $PATH")
        return subprocess.Popen(
            [program, *self.argv[1:]], env=self.env, cwd=self.working_dir or None,
            stdin=subprocess.PIPE if self.keep_stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _pump(proc: subprocess.Popen[bytes], writer: LogWriter) -> None:
    """Copy stdout and stderr into the log until both are closed."""
    sel = selectors.DefaultSelector()
    for stream, name in ((proc.stdout, "stdout"), (proc.stderr, "stderr")):
        if stream is not None:
            os.set_blocking(stream.fileno(), False)
            sel.register(stream, selectors.EVENT_READ, name)
    while sel.get_map():
        for key, _ in sel.select(timeout=1.0):
            try:
                data = os.read(key.fd, 65536)
            except BlockingIOError:
                continue
            if not data:
                sel.unregister(key.fileobj)
                continue
            writer.write(str(key.data), data)
    sel.close()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
