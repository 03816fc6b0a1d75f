"""Startup, readiness and liveness probes of a process container, run as the kubelet's prober workers run them.

One worker per probe and container run: it waits ``initialDelaySeconds``, then probes every ``periodSeconds``
(each probe given ``timeoutSeconds``); ``successThreshold`` successes in a row make the result a success,
``failureThreshold`` failures in a row a failure. Readiness starts as a failure (not ready until a probe
succeeds) and sets the container's ``ready``; liveness starts as a success, and its failure kills the run
(SIGTERM, SIGKILL after the probe's or the pod's ``terminationGracePeriodSeconds``), after which
``restartPolicy`` decides, as the kubelet does. A startup probe holds the other two back: until it succeeds
the container is not ``started`` (nor ready), and failing ``failureThreshold`` times kills it as a failed
liveness probe does; once it succeeded it is not run again in that run. ``exec`` runs the command with
the container's environment and succeeds on exit code 0; ``httpGet`` succeeds on a status from 200 to 399
(HTTPS unverified, as the kubelet's); ``tcpSocket`` on an accepted connection. ``grpc`` probes are not run.
As the kubelet, each failed probe records a Warning ``Unhealthy`` Event ("Readiness probe failed: ...") and a
kill for a failed probe a Normal ``Killing`` one; the recorder folds repeats into one Event's count.
"""

from __future__ import annotations

import logging
import socket
import ssl
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

__all__ = ["ContainerProbes", "probe_once"]

log = logging.getLogger("componentbase_examples.virtual_kubelet.process")


def _port(value: Any, ports: list[dict[str, Any]]) -> int:
    """A probe's port: a number, or the name of one of the container's ports."""
    if isinstance(value, int):
        return value
    for port in ports:
        if port.get("name") == value:
            return int(port["containerPort"])
    return int(value)


def probe_once(probe: dict[str, Any], *, host: str, env: dict[str, str], working_dir: str,
               ports: list[dict[str, Any]]) -> tuple[bool, str]:
    """(success, why not) of one probe."""
    timeout = float(probe.get("timeoutSeconds") or 1)
    try:
        if "exec" in probe:
            command = list((probe["exec"] or {}).get("command") or ())
            done = subprocess.run(command, env=env, cwd=working_dir or None, timeout=timeout,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  check=False)
            return done.returncode == 0, f"command {command} exited with {done.returncode}"
        if "httpGet" in probe:
            get = probe["httpGet"] or {}
            scheme = str(get.get("scheme") or "HTTP").lower()
            url = f"{scheme}://{get.get('host') or host}:{_port(get.get('port'), ports)}{get.get('path') or '/'}"
            headers = {h["name"]: h.get("value", "") for h in get.get("httpHeaders") or ()}
            request = urllib.request.Request(url, headers={"User-Agent": "kube-probe/1.37", **headers})
            context = ssl._create_unverified_context() if scheme == "https" else None  # as the kubelet
            try:
                with urllib.request.urlopen(request, timeout=timeout, context=context) as resp:
                    code = resp.status
            except urllib.error.HTTPError as err:
                code = err.code
            return 200 <= code < 400, f"HTTP probe failed with statuscode: {code}"
        if "tcpSocket" in probe:
            tcp = probe["tcpSocket"] or {}
            with socket.create_connection((tcp.get("host") or host, _port(tcp.get("port"), ports)), timeout=timeout):
                return True, ""
    except (OSError, ValueError, subprocess.SubprocessError) as err:
        return False, str(err)
    return True, ""  # grpc, or no handler: not run


class _Worker:
    """One probe of one run (upstream's prober ``worker``)."""

    def __init__(self, kind: str, probe: dict[str, Any], run: Callable[[], tuple[bool, str]],
                 on_result: Callable[[bool], None], name: str,
                 failed: Callable[[str], None] = lambda message: None) -> None:
        self.kind, self.probe, self.run, self.on_result, self.failed = kind, probe, run, on_result, failed
        #: Liveness starts as a success, readiness as a failure; startup as neither (both results count).
        self.initial: bool | None = {"liveness": True, "readiness": False}.get(kind)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"probe-{kind}-{name}", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        result = self.initial
        in_a_row = 0
        last: bool | None = None
        if self.stop.wait(float(self.probe.get("initialDelaySeconds") or 0)):
            return
        while not self.stop.is_set():
            ok, why = self.run()
            if self.stop.is_set():
                return
            if not ok:
                self.failed(f"{self.kind.capitalize()} probe failed: {why}")
            in_a_row = in_a_row + 1 if ok == last else 1
            last = ok
            threshold = "successThreshold" if ok else "failureThreshold"
            needed = int(self.probe.get(threshold) or (1 if ok else 3))
            if in_a_row >= needed and ok != result:
                result = ok
                if not ok:
                    log.info("%s probe failed: %s", self.kind.capitalize(), why)
                self.on_result(ok)
                if self.kind == "startup":
                    return  # done for this run: started, or killed
            if self.stop.wait(float(self.probe.get("periodSeconds") or 10)):
                return


class ContainerProbes:
    """The probes of one container: started with each run, stopped when it ends (the container's ``on_run``)."""

    def __init__(self, container: dict[str, Any], *, host: str, grace: float,
                 record: Callable[[str, str, str], None] = lambda type, reason, message: None) -> None:
        self.container = container
        self.record = record  # (type, reason, message): an Event about the container's pod
        self.host = host
        self.grace = grace
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._runs = 0  # a startup probe's success may come as its run ends: its workers must not outlive it

    def __call__(self, proc: Any, run: dict[str, Any] | None) -> None:
        with self._lock:
            self._runs += 1
            workers, self._workers = self._workers, []
        for worker in workers:
            worker.stop.set()
        if run is None:
            return
        startup = self.container.get("startupProbe")
        proc.set_ready(False if self.container.get("readinessProbe") else None)
        proc.set_started(False if startup else None)
        this_run = self._runs
        if not startup:
            self._start(proc, self._after_startup(proc), this_run)
            return

        def started(ok: bool) -> None:
            if not ok:
                self._kill(proc, startup, "startup")
                return
            proc.set_started(True)
            self._start(proc, self._after_startup(proc), this_run)

        self._start(proc, [("startup", startup, started)], this_run)

    def _after_startup(self, proc: Any) -> list[tuple[str, Any, Callable[[bool], None]]]:
        liveness = self.container.get("livenessProbe")

        def alive(ok: bool) -> None:
            if not ok:
                self._kill(proc, liveness, "liveness")

        return [("readiness", self.container.get("readinessProbe"), proc.set_ready), ("liveness", liveness, alive)]

    def _start(self, proc: Any, probes: list[tuple[str, Any, Callable[[bool], None]]], run: int) -> None:
        started = []
        for kind, probe, on_result in probes:
            if probe:
                def once(probe: dict[str, Any] = probe) -> tuple[bool, str]:
                    return probe_once(probe, host=self.host, env=proc.env, working_dir=proc.working_dir,
                                      ports=list(self.container.get("ports") or ()))
                started.append(_Worker(kind, probe, once, on_result, proc.name,
                                       lambda message: self.record("Warning", "Unhealthy", message)))
        with self._lock:
            current = run == self._runs
            if current:
                self._workers.extend(started)
        for worker in () if current else started:
            worker.stop.set()

    def _kill(self, proc: Any, probe: dict[str, Any] | None, kind: str) -> None:
        log.info("Container %s failed %s probe, will be restarted", proc.name, kind)
        self.record("Normal", "Killing", f"Container {proc.name} failed {kind} probe, will be restarted")
        grace = (probe or {}).get("terminationGracePeriodSeconds")
        threading.Thread(target=proc.kill, args=(float(grace) if grace is not None else self.grace,),
                         daemon=True).start()
