"""``--provider=process``: every container of a pod is its own ``command`` + ``args``, run as a child process.

There is no image and no isolation: a container runs what its spec says on this machine, with its
resolved ``env`` (ConfigMaps and Secrets included) in its ``workingDir``. Logs are kept per container
and restart under ``<root>/pods/<namespace>_<name>_<uid>/<container>/``. This is for development and
tests, where a pod that really runs (and exits, and is killed) is worth more than a mock.
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from typing import Any

import componentbase
from componentbase.client import format_time
from componentbase_examples.virtual_kubelet.podenv import container_env, expand
from componentbase_examples.virtual_kubelet.provider_types import (
    ExecIO,
    LogOptions,
    PodNotFound,
    PortStream,
    ProviderContext,
)
from componentbase_examples.virtual_kubelet.providers.process import execute, machine, state
from componentbase_examples.virtual_kubelet.providers.process.attach import attach
from componentbase_examples.virtual_kubelet.providers.process.config import ProcessConfig
from componentbase_examples.virtual_kubelet.providers.process.container import ContainerProcess
from componentbase_examples.virtual_kubelet.providers.process.crilog import read_log
from componentbase_examples.virtual_kubelet.providers.process.forward import forward
from componentbase_examples.virtual_kubelet.providers.process.podstatus import Conditions, pod_status
from componentbase_examples.virtual_kubelet.providers.process.probes import ContainerProbes
from componentbase_examples.virtual_kubelet.providers.process.stats import Sampler

__all__ = ["ProcessProvider"]

log = logging.getLogger("componentbase_examples.virtual_kubelet.process")

Pod = dict[str, Any]


def _key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _key_of(pod: Pod) -> str:
    meta = pod.get("metadata") or {}
    return _key(str(meta.get("namespace") or ""), str(meta.get("name") or ""))


class _PodRecord:
    """A pod the provider runs: its spec as given, its containers, and what it looked like last."""

    def __init__(self, pod: Pod, log_dir: str) -> None:
        self.pod = pod
        self.log_dir = log_dir
        self.containers: dict[str, ContainerProcess] = {}  # init containers first, in order
        self.init_names: list[str] = []
        self.images: dict[str, str] = {}
        self.start_time = format_time()
        self.conditions = Conditions()
        self.failure: tuple[str, str] | None = None  # (reason, message): the pod cannot run at all


class ProcessProvider:
    """Pods as process trees; status changes are pushed through ``notify_pods``."""

    def __init__(self, context: ProviderContext) -> None:
        self.context = context
        self.config: ProcessConfig = context.config if isinstance(context.config, ProcessConfig) else ProcessConfig()
        self.root = self.config.root_dir(context.node_name)
        self._lock = threading.RLock()
        self._pods: dict[str, _PodRecord] = {}
        self._notify: Callable[[Pod], None] = lambda pod: None
        self._adopted = False

    # --- status ---------------------------------------------------------------------------------

    def _status(self, rec: _PodRecord) -> dict[str, Any]:
        init = [rec.containers[n] for n in rec.init_names if n in rec.containers]
        return pod_status(host_ip=self.context.internal_ip or "127.0.0.1", start_time=rec.start_time,
                          conditions=rec.conditions, init=init,
                          containers=[c for n, c in rec.containers.items() if n not in rec.init_names],
                          images=rec.images, failure=rec.failure, spec=rec.pod.get("spec") or {})

    def _pod_with_status(self, rec: _PodRecord) -> Pod:
        pod = copy.deepcopy(rec.pod)
        pod["status"] = self._status(rec)
        return pod

    def _changed(self, key: str) -> None:
        with self._lock:
            rec = self._pods.get(key)
        if rec is not None:
            self._advance(rec)
        with self._lock:
            pod = self._pod_with_status(rec) if rec is not None and self._pods.get(key) is rec else None
        if pod is not None:
            self._notify(pod)

    # --- pods -----------------------------------------------------------------------------------

    @componentbase.hookimpl
    def create_pod(self, pod: Pod) -> None:
        self._adopt_once()
        meta = pod.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        key = _key(namespace, name)
        spec = pod.get("spec") or {}
        containers = [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
        envs = {str(c.get("name")): container_env(self.context.resources, pod, c) for c in containers}
        log_dir = os.path.join(self.root, "pods", f"{namespace}_{name}_{meta.get('uid', '')}")
        rec = _PodRecord(copy.deepcopy(pod), log_dir)
        missing = [str(c.get("name")) for c in containers if not c.get("command")]
        if missing:
            rec.failure = ("NoCommand", f"container {', '.join(repr(m) for m in missing)} has no command: "
                           "the process provider runs a container's command and args, never an image")
        with self._lock:
            if key in self._pods:
                raise ValueError(f'pod "{key}" already runs in the provider')
            self._pods[key] = rec
            if rec.failure is None:
                for c in containers:
                    cname = str(c.get("name"))
                    env = {"PATH": os.environ.get("PATH", os.defpath), **envs[cname]}
                    argv = [expand(str(a), env) for a in [*c.get("command", ()), *c.get("args", ())]]
                    rec.containers[cname] = ContainerProcess(
                        name=cname, argv=argv, env=env, working_dir=str(c.get("workingDir") or ""),
                        **self._container_args(key, rec, c))
                    rec.containers[cname].keep_stdin = bool(c.get("stdin"))
                    rec.containers[cname].stdin_once = bool(c.get("stdinOnce"))
                    rec.containers[cname].tty = bool(c.get("tty"))
                self._probes(rec)
        if rec.failure is not None:
            log.info("pod %s cannot run: %s", key, rec.failure[1])
        else:
            state.save_pod(log_dir, rec.pod, rec.start_time)
            for proc in rec.containers.values():
                proc.save_spec()
        self._changed(key)

    def _container_args(self, key: str, rec: _PodRecord, container: dict[str, Any]) -> dict[str, Any]:
        """What a container is given whether it is new or adopted."""
        cname = str(container.get("name"))
        rec.images[cname] = str(container.get("image", ""))
        spec = rec.pod.get("spec") or {}
        policy = str(spec.get("restartPolicy") or "Always")
        if any(c.get("name") == cname for c in spec.get("initContainers") or ()):
            rec.init_names.append(cname)
            policy = "OnFailure" if policy == "Always" else policy  # an init container must end, and succeed
        return {"log_dir": os.path.join(rec.log_dir, cname), "restart_policy": policy,
                "backoff": float(self.config.restart_backoff), "max_backoff": float(self.config.max_restart_backoff),
                "on_change": functools.partial(self._changed, key)}

    def _probes(self, rec: _PodRecord) -> None:
        """The startup, readiness and liveness probes of the pod's (not init) containers follow their runs."""
        spec = rec.pod.get("spec") or {}
        grace = float(spec.get("terminationGracePeriodSeconds", 30))
        for c in spec.get("containers") or ():
            proc = rec.containers.get(str(c.get("name")))
            if proc is not None and (c.get("startupProbe") or c.get("readinessProbe") or c.get("livenessProbe")):
                proc.on_run = ContainerProbes(c, host=self.context.internal_ip or "127.0.0.1", grace=grace,
                                              record=functools.partial(self.context.record_event, rec.pod))

    def _adopt_once(self) -> None:
        """At the first call after a start: take up the pods a previous run of the provider left running."""
        with self._lock:
            if self._adopted:
                return
            self._adopted = True
            for pod, start_time, log_dir in state.load_pods(self.root):
                key = _key_of(pod)
                rec = _PodRecord(pod, log_dir)
                rec.start_time = start_time
                spec = pod.get("spec") or {}
                for c in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]:
                    rec.containers[str(c.get("name"))] = ContainerProcess.adopt(
                        name=str(c.get("name")), **self._container_args(key, rec, c))
                self._probes(rec)
                self._pods[key] = rec
                log.info("pod %s: taken up from %s", key, log_dir)
            adopted = list(self._pods.values())
        for rec in adopted:
            self._advance(rec)

    def _advance(self, rec: _PodRecord) -> None:
        """Start what may run now: the next init container once the one before succeeded, then the others."""
        with self._lock:
            if rec.failure is not None:
                return
            for name in rec.init_names:
                proc = rec.containers[name]
                if not proc.succeeded:
                    ready = [] if proc.launched else [proc]
                    break
            else:
                ready = [c for n, c in rec.containers.items() if n not in rec.init_names and not c.launched]
        for proc in ready:
            proc.start()

    @componentbase.hookimpl
    def update_pod(self, pod: Pod) -> None:
        """Labels and annotations are taken; a running process is not restarted for a spec change."""
        key = _key_of(pod)
        with self._lock:
            rec = self._pods.get(key)
            if rec is None:
                raise PodNotFound(f'pod "{key}" is not known to the provider')
            rec.pod = copy.deepcopy(pod)
        self._changed(key)

    @componentbase.hookimpl
    def delete_pod(self, pod: Pod) -> None:
        meta = pod.get("metadata") or {}
        key = _key_of(pod)
        with self._lock:
            rec = self._pods.get(key)
        if rec is None:
            raise PodNotFound(f'pod "{key}" is not known to the provider')
        grace = meta.get("deletionGracePeriodSeconds")
        if grace is None:
            grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        self._stop(rec, float(grace))
        final = self._pod_with_status(rec)
        with self._lock:
            self._pods.pop(key, None)
        shutil.rmtree(rec.log_dir, ignore_errors=True)
        self._notify(final)

    def _stop(self, rec: _PodRecord, grace: float) -> None:
        """Stop every container at once, so the pod's grace period is not spent once per container."""
        threads = [threading.Thread(target=c.stop, args=(grace,), daemon=True) for c in rec.containers.values()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    @componentbase.hookimpl
    def get_pod(self, namespace: str, name: str) -> Pod | None:
        self._adopt_once()
        with self._lock:
            rec = self._pods.get(_key(namespace, name))
            return self._pod_with_status(rec) if rec is not None else None

    @componentbase.hookimpl
    def get_pod_status(self, namespace: str, name: str) -> dict[str, Any] | None:
        pod = self.get_pod(namespace, name)
        if pod is None:
            raise PodNotFound(f'pod "{namespace}/{name}" is not known to the provider')
        status: dict[str, Any] = pod["status"]
        return status

    @componentbase.hookimpl
    def get_pods(self) -> list[Pod]:
        self._adopt_once()
        with self._lock:
            return [self._pod_with_status(rec) for rec in self._pods.values()]

    @componentbase.hookimpl
    def notify_pods(self, callback: Callable[[Pod], None]) -> None:
        """Also reports every pod it runs now: those taken up from a previous run have news (ended meanwhile)."""
        self._notify = callback
        self._adopt_once()
        for pod in self.get_pods():
            callback(pod)

    def pids(self, namespace: str, name: str) -> dict[str, int | None]:
        """The process id of each container now (None: not running); for tests and debugging."""
        with self._lock:
            rec = self._pods.get(_key(namespace, name))
            return {n: c.pid for n, c in rec.containers.items()} if rec is not None else {}

    # --- logs and exec --------------------------------------------------------------------------

    def _container(self, namespace: str, pod: str, container: str) -> tuple[_PodRecord, ContainerProcess]:
        with self._lock:
            rec = self._pods.get(_key(namespace, pod))
        if rec is None:
            raise PodNotFound(f'pod "{namespace}/{pod}" is not known to the provider')
        proc = rec.containers.get(container)
        if proc is None:
            raise PodNotFound(f'container "{container}" in pod "{namespace}/{pod}" is not available')
        return rec, proc

    @componentbase.hookimpl
    def get_container_logs(self, namespace: str, pod: str, container: str, opts: LogOptions) -> Iterator[bytes]:
        _, proc = self._container(namespace, pod, container)
        restart = proc.restart_count
        if opts.previous:
            if restart == 0:
                raise PodNotFound(f'previous terminated container "{container}" in pod "{pod}" not found')
            restart -= 1
        since = opts.since_time
        if opts.since_seconds is not None:
            since = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=opts.since_seconds)
        path = proc.log_path(restart)

        def more() -> bool:
            return proc.restart_count == restart and not proc.finished and not opts.previous

        return read_log(path, tail=opts.tail, limit_bytes=opts.limit_bytes, timestamps=opts.timestamps,
                        since=since, follow=more if opts.follow else None)

    @componentbase.hookimpl
    def run_in_container(self, namespace: str, pod: str, container: str, command: list[str], io: ExecIO) -> int:
        _, proc = self._container(namespace, pod, container)
        if not proc.running:
            raise ValueError(f'container "{container}" in pod "{pod}" is not running')
        return execute.run(command, proc.env, proc.working_dir, io)

    @componentbase.hookimpl
    def attach_to_container(self, namespace: str, pod: str, container: str, io: ExecIO) -> int:
        """The container's own process: its stdin (through its shim) and its output as logged (``attach``)."""
        _, proc = self._container(namespace, pod, container)
        return attach(proc, io)

    @componentbase.hookimpl
    def port_forward(self, namespace: str, pod: str, port: int, stream: PortStream) -> None:
        """A TCP connection to ``port`` at the pod's address (this machine's): ``forward``."""
        with self._lock:
            if _key(namespace, pod) not in self._pods:
                raise PodNotFound(f'pod "{namespace}/{pod}" is not known to the provider')
        forward("127.0.0.1", port, stream)

    @componentbase.hookimpl
    def get_stats_summary(self) -> dict[str, Any]:
        """The node (this machine) and every pod's process trees, measured now (``stats.Sampler``)."""
        with self._lock:
            sampler = self.__dict__.setdefault("_sampler", Sampler())
            records = list(self._pods.values())
        summary: dict[str, Any] = sampler.summary(self.context.node_name, records)
        return summary

    # --- node -----------------------------------------------------------------------------------

    @componentbase.hookimpl
    def configure_node(self, node: dict[str, Any]) -> None:
        capacity = {"cpu": self.config.cpu or str(os.cpu_count() or 1),
                    "memory": self.config.memory or machine.memory(), "pods": self.config.pods}
        status = node.setdefault("status", {})
        status["capacity"] = capacity
        status["allocatable"] = dict(capacity)
        status["addresses"] = [{"type": "InternalIP", "address": self.context.internal_ip or "127.0.0.1"},
                               {"type": "Hostname", "address": self.context.node_name}]

    @componentbase.hookimpl
    def ping(self) -> None:
        if not os.access(self.root if os.path.isdir(self.root) else os.path.dirname(self.root), os.W_OK):
            raise OSError(f"cannot write to {self.root}")

    @componentbase.hookimpl
    def shutdown(self) -> None:
        """Leave the containers running for the next start to take up, as a kubelet does; with
        ``stopContainersOnShutdown``, stop them all (within ``shutdownGracePeriod``)."""
        if not self.config.stop_containers_on_shutdown:
            return
        with self._lock:
            records = list(self._pods.values())
        grace = float(self.config.shutdown_grace_period)
        threads = [threading.Thread(target=self._stop, args=(rec, grace), daemon=True) for rec in records]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

