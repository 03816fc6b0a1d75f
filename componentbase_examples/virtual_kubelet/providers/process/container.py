"""One container as a supervised process: start, restart per policy, stop in time, and survive our own restart.

Each run of the container is started by a shim (``shim.py``, the provider's conmon), which outlives the
virtual kubelet: it keeps the log and records the exit code in the container's directory. Everything a
restarted virtual kubelet needs is on disk there: ``spec.json`` (argv, env, working dir; mode 0600, as it
holds Secret values), ``state.json`` (restartCount, lastState, whether the container is done for good),
and per run ``<n>.run.json``, ``<n>.exit.json`` and ``<n>.log``. ``ContainerProcess.adopt`` picks a
container up from them: a run whose shim still lives (same pid, start time and token) is watched again, a
run that ended meanwhile is reported with its exit code, and ``restartPolicy`` goes on from there.

The process runs exactly the container's ``command`` + ``args`` (no shell, no image), in its own process
group so a stop reaches everything it started. One thread per container starts the shim, waits for the
run to end and restarts it after a backoff.
"""

from __future__ import annotations

import errno
import logging
import os
import secrets
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from componentbase.client import format_time
from componentbase.util import Backoff, wait_until
from componentbase_examples.virtual_kubelet.providers.process import shim

__all__ = ["ContainerProcess", "exit_restarts"]

log = logging.getLogger("componentbase_examples.virtual_kubelet.process")

#: What the kubelet reports for a container whose end nobody saw (its runtime lost it).
UNKNOWN = {"exitCode": 137, "reason": "ContainerStatusUnknown",
           "message": "The container could not be located when the pod was terminated"}


def exit_restarts(policy: str, exit_code: int) -> bool:
    """Whether a container that exited with ``exit_code`` is started again under ``policy``."""
    if policy == "Always":
        return True
    if policy == "OnFailure":
        return exit_code != 0
    return False


def _alive(pid: Any, started: Any) -> bool:
    """The process ``pid`` is the one that started at ``started`` (not a later one given the same pid)."""
    return isinstance(pid, int) and started is not None and shim.start_time(pid) == started


def _wait_gone(pid: int, started: int) -> None:
    """Until the process (not our child) ends: a pidfd where Linux has one, else a poll."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        while _alive(pid, started):
            time.sleep(0.2)
        return
    try:
        if _alive(pid, started):  # the pidfd names the same process
            select.select([fd], [], [])
    finally:
        os.close(fd)


class ContainerProcess:
    """A container's process and its state, in the shape of a ``containerStatus``."""

    #: The container's ``stdin: true``: its process reads a pipe that ``kubectl attach`` writes into.
    keep_stdin = False
    #: The container's ``stdinOnce``: the shim closes that pipe when the first attached client's input ends.
    stdin_once = False
    #: The container's ``tty``: its process runs on a pseudo-terminal the shim holds (``kubectl attach -t``).
    tty = False

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
        self._run_record: dict[str, Any] | None = None  # the run in progress: pids, start times, token
        self.restart_count = 0
        self.state: dict[str, Any] = {"waiting": {"reason": "ContainerCreating"}}
        self.last_state: dict[str, Any] = {}
        #: Terminated for good: it will not be started again.
        self.finished = False
        #: The readiness probe's verdict on this run; None: no readiness probe (running means ready).
        self.probe_ready: bool | None = None
        #: The startup probe's verdict on this run; None: no startup probe (running means started).
        self.probe_started: bool | None = None
        #: Called with this container when a run starts and with None when it ends (the provider's probes).
        self.on_run: Callable[[ContainerProcess, dict[str, Any] | None], None] = lambda proc, run: None
        self._launched = False
        self._thread = threading.Thread(target=self._run, name=f"container-{name}", daemon=True)

    @classmethod
    def adopt(cls, *, name: str, log_dir: str, restart_policy: str, backoff: float, max_backoff: float,
              on_change: Callable[[], None]) -> ContainerProcess:
        """The container as a previous virtual kubelet left it in ``log_dir``; ``start()`` takes it up."""
        spec = shim.read_json(os.path.join(log_dir, "spec.json")) or {}
        proc = cls(name=name, argv=list(spec.get("argv") or []), env=dict(spec.get("env") or {}),
                   working_dir=str(spec.get("workingDir") or ""), log_dir=log_dir, restart_policy=restart_policy,
                   backoff=backoff, max_backoff=max_backoff, on_change=on_change)
        saved = shim.read_json(os.path.join(log_dir, "state.json")) or {}
        proc.keep_stdin, proc.stdin_once, proc.tty = (bool(spec.get(k)) for k in ("stdin", "stdinOnce", "tty"))
        proc.restart_count = int(saved.get("restartCount") or 0)
        proc.last_state = dict(saved.get("lastState") or {})
        if saved.get("finished") and saved.get("state"):
            proc.state, proc.finished = dict(saved["state"]), True
        return proc

    def save_spec(self) -> None:
        """Record what to run before anything runs: a restarted virtual kubelet starts from this file too."""
        os.makedirs(self.log_dir, mode=0o700, exist_ok=True)
        shim.write_json(os.path.join(self.log_dir, "spec.json"), {
            "argv": self.argv, "env": self.env, "workingDir": self.working_dir,
            "stdin": self.keep_stdin, "stdinOnce": self.stdin_once, "tty": self.tty})

    # --- what the provider reads --------------------------------------------------------------

    def log_path(self, restart: int | None = None) -> str:
        return os.path.join(self.log_dir, f"{self.restart_count if restart is None else restart}.log")

    def terminal(self) -> str | None:
        """The path of the running process's terminal (a ``tty`` container's), for setting its size."""
        run = self._run_record
        return run.get("tty") if run is not None and "running" in self.state else None

    @property
    def pid(self) -> int | None:
        run = self._run_record
        return run["pid"] if run is not None and "running" in self.state else None

    def open_stdin(self) -> IO[bytes] | None:
        """A writer into the running process's stdin (the shim's FIFO, ``keep_stdin``); the caller closes it.

        None when the process is not running or its stdin is closed for good (``stdinOnce`` after the first
        client, or the run ended). Any virtual kubelet can open it, also one that adopted the run.
        """
        if not self.keep_stdin or self.pid is None:
            return None
        return _open_fifo(shim.stdin_path(self.log_dir, self.restart_count))

    @property
    def running(self) -> bool:
        return "running" in self.state

    @property
    def launched(self) -> bool:
        """Its thread was started (it ran, runs or waits to run again), or it finished before."""
        return self._launched or self.finished

    @property
    def succeeded(self) -> bool:
        """Done for good with exit code 0: what an init container must be before the next one starts."""
        return self.finished and (self.state.get("terminated") or {}).get("exitCode") == 0

    def set_ready(self, ready: bool | None) -> None:
        """The readiness probe's verdict (None: no probe), as the status shows it."""
        with self._lock:
            changed, self.probe_ready = self.probe_ready != ready, ready
        if changed:
            self._on_change()

    def set_started(self, started: bool | None) -> None:
        """The startup probe's verdict (None: no probe); not started is not ready either."""
        with self._lock:
            changed, self.probe_started = self.probe_started != started, started
        if changed:
            self._on_change()

    def status(self, image: str) -> dict[str, Any]:
        with self._lock:
            running = "running" in self.state
            started = running and self.probe_started is not False
            status: dict[str, Any] = {"name": self.name, "image": image, "imageID": "",
                                      "ready": started and self.probe_ready is not False, "started": started,
                                      "restartCount": self.restart_count, "state": dict(self.state)}
            pid = self.pid
            if pid is not None:
                status["containerID"] = f"process://{pid}"
            if self.last_state:
                status["lastState"] = dict(self.last_state)
            return status

    # --- life cycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Run it (or, adopted, take its run up); a second call does nothing."""
        with self._lock:
            if self.finished or self._launched:
                return
            self._launched = True
        self._thread.start()

    def stop(self, grace: float) -> None:
        """SIGTERM the process group, SIGKILL it after ``grace`` seconds; no restart follows."""
        with self._lock:
            self._stopping = True
            self._wake.notify_all()
        self.kill(grace)
        if self._thread.ident is not None:
            self._thread.join(timeout=max(grace, 0.0) + 5.0)

    def kill(self, grace: float) -> None:
        """End the current run (SIGTERM, SIGKILL after ``grace``); ``restartPolicy`` decides what follows."""
        with self._lock:
            run = self._run_record
        if run is None:
            return
        _signal_group(run, signal.SIGTERM)
        with self._lock:
            over = self._wake.wait_for(lambda: self._run_record is not run, timeout=max(grace, 0.0))
        if not over:
            _signal_group(run, signal.SIGKILL)

    def _save(self) -> None:
        """What a restarted virtual kubelet needs to go on counting and not to run a finished container again."""
        shim.write_json(os.path.join(self.log_dir, "state.json"), {
            "restartCount": self.restart_count, "lastState": self.last_state, "finished": self.finished,
            "state": self.state})

    def _set(self, state: dict[str, Any], last: dict[str, Any] | None = None, final: bool = False) -> None:
        with self._lock:
            if last is not None:
                self.last_state = last
            self.state = state
            self.finished = final
            self._save()
        self._on_change()

    def _run(self) -> None:
        restarts = Backoff(duration=self.backoff, factor=2.0, jitter=0.0, cap=self.max_backoff)  # CrashLoopBackOff
        terminated = self._resume()
        while True:
            started = time.monotonic()
            if terminated is None:
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
            with self._lock:
                self.restart_count += 1  # counted (and saved) before the wait: a restart meanwhile keeps it
            self._set({"waiting": {"reason": reason, "message": message}}, {"terminated": terminated})
            with self._lock:
                if not self._stopping:
                    self._wake.wait(delay)
                stopped = self._stopping
            if stopped:
                self._set({"terminated": terminated}, final=True)
                return
            terminated = None

    # --- one run --------------------------------------------------------------------------------

    def _terminated(self, attempt: int, run: dict[str, Any]) -> dict[str, Any]:
        """How run ``attempt`` ended, from the shim's record (UNKNOWN if the shim died without one)."""
        record = shim.read_json(shim.exit_path(self.log_dir, attempt)) or {
            **UNKNOWN, "startedAt": run.get("startedAt"), "finishedAt": time.time()}
        out = {k: record[k] for k in ("exitCode", "reason", "message") if record.get(k) is not None}
        for key in ("startedAt", "finishedAt"):
            out[key] = format_time(record.get(key) or time.time())
        if run.get("pid"):
            out["containerID"] = f"process://{run['pid']}"
        return out

    def _resume(self) -> dict[str, Any] | None:
        """Run ``restart_count`` as a previous virtual kubelet left it: None if it never started, else how it
        ended (waited for, if its shim still runs)."""
        attempt = self.restart_count
        run = shim.read_json(shim.run_path(self.log_dir, attempt))
        if run is None:
            if os.path.exists(shim.exit_path(self.log_dir, attempt)):
                return self._terminated(attempt, {})  # it could not start
            return None
        if os.path.exists(shim.exit_path(self.log_dir, attempt)):
            return self._terminated(attempt, run)
        if _alive(run.get("shimPid"), run.get("shimStartTime")) and _has_token(run):
            log.info("container %s: adopted its running process %s", self.name, run.get("pid"))
            with self._lock:
                self._run_record = run
            self._set({"running": {"startedAt": format_time(run.get("startedAt"))}})
            self.on_run(self, run)
            _wait_gone(int(run["shimPid"]), int(run["shimStartTime"]))
            self._run_over()
            return self._terminated(attempt, run)
        _signal_group(run, signal.SIGKILL)  # its shim is gone: nothing would record how it ends
        return self._terminated(attempt, run)

    def _run_once(self) -> dict[str, Any]:
        """Start run ``restart_count`` through a shim and wait for it; the ``terminated`` state it ended in."""
        attempt = self.restart_count
        os.makedirs(self.log_dir, mode=0o700, exist_ok=True)
        with open(os.path.join(self.log_dir, "shim.err"), "ab") as errors:
            runner = subprocess.Popen(
                [sys.executable, "-I", "-S", shim.__file__, self.log_dir, str(attempt), secrets.token_hex(16)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors, start_new_session=True)
        assert runner.stdout is not None
        line = runner.stdout.readline()  # the shim's run record, or nothing if the process could not start
        runner.stdout.close()
        run: dict[str, Any] = (shim.read_json(shim.run_path(self.log_dir, attempt)) or {}) if line.strip() else {}
        with self._lock:
            self._run_record = run if run else None
            stopping = self._stopping
        if stopping and run:  # stop() came while starting: it could not see this process
            _signal_group(run, signal.SIGKILL)
        if run:
            self._set({"running": {"startedAt": format_time(run.get("startedAt"))}})
            self.on_run(self, run)
        runner.wait()
        self._run_over()
        return self._terminated(attempt, run)

    def _run_over(self) -> None:
        self.on_run(self, None)
        with self._lock:
            self._run_record = None
            self._wake.notify_all()


def _open_fifo(path: str, timeout: float = 2.0) -> IO[bytes] | None:
    """The FIFO's write end, once its shim reads it; None if it is gone or nobody reads it within ``timeout``.

    Opened non-blocking, as a blocking open would wait forever for a shim that died; the shim reopens its
    end after each client, so a client between two of them waits a moment.
    """
    fds: list[int] = []

    def opened() -> bool:
        try:
            fds.append(os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC))
        except FileNotFoundError:
            return True  # gone: the run ended, or stdinOnce closed it
        except OSError as err:
            if err.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
            return False
        return True

    if not wait_until(opened, timeout=timeout) or not fds:
        return None
    os.set_blocking(fds[0], True)
    return open(fds[0], "wb")


def _has_token(run: dict[str, Any]) -> bool:
    """The shim's command line carries the token it was started with (where ``/proc`` shows it)."""
    try:
        with open(f"/proc/{run['shimPid']}/cmdline", "rb") as f:
            return str(run.get("token", "")).encode() in f.read().split(b"\0")
    except OSError:
        return False


def _signal_group(run: dict[str, Any], sig: int) -> None:
    """Signal the run's process group, if its leader is still the process the shim started."""
    pid = run.get("pid")
    if not _alive(pid, run.get("startTime")):
        return
    try:
        os.killpg(int(pid), sig)  # type: ignore[arg-type]
    except (ProcessLookupError, PermissionError):
        pass
