"""The process provider's ``/stats/summary``: its containers' process trees and the machine, measured by psutil.

A container's CPU is the user+system time of its process and every descendant (and of the children it
already reaped); its memory is their resident set, reported as the working set (a process has no page
cache of its own to subtract, which is what the kubelet's working set leaves out). The node is this
machine: busy CPU time since boot and total minus available memory. ``usageNanoCores`` is the rate
between this reading and the previous one, so the first reading of a container has none, as the
kubelet's first does not.

psutil is imported here only: it is in the test extra, not a runtime dependency of componentbase, whose
users never need it; without it the endpoints answer 501 and say what to install.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from componentbase.client import format_time
from componentbase_examples.virtual_kubelet.statsapi import StatsUnavailable

__all__ = ["Sampler"]


class _Container(Protocol):
    name: str
    state: dict[str, Any]

    @property
    def pid(self) -> int | None: ...


class _Record(Protocol):
    pod: dict[str, Any]
    start_time: str
    containers: Mapping[str, _Container]


def _psutil() -> Any:
    try:
        import psutil  # only here: a dependency of this endpoint alone
    except ImportError:
        raise StatsUnavailable("the process provider measures its processes with psutil, which is not "
                               "installed: pip install psutil") from None
    return psutil


class Sampler:
    """Keeps the previous CPU reading of each container and of the node, for ``usageNanoCores``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, tuple[float, int]] = {}  # key -> (monotonic seconds, core-nanoseconds)

    def _cpu(self, key: str, core_ns: int, stamp: str, now: float, seen: set[str]) -> dict[str, Any]:
        seen.add(key)
        cpu: dict[str, Any] = {"time": stamp, "usageCoreNanoSeconds": core_ns}
        with self._lock:
            last = self._last.get(key)
            self._last[key] = (now, core_ns)
        if last is not None and now > last[0]:
            cpu["usageNanoCores"] = max(0, int((core_ns - last[1]) / (now - last[0])))
        return cpu

    def summary(self, node_name: str, records: Iterable[_Record]) -> dict[str, Any]:
        psutil = _psutil()
        stamp, now, seen = format_time(), time.monotonic(), set[str]()
        busy = psutil.cpu_times()
        idle = busy.idle + getattr(busy, "iowait", 0.0)
        vm = psutil.virtual_memory()
        node = {"nodeName": node_name, "startTime": format_time(psutil.boot_time()),
                "cpu": self._cpu("", int((sum(busy) - idle) * 1e9), stamp, now, seen),
                "memory": {"time": stamp, "availableBytes": vm.available, "usageBytes": vm.total - vm.available,
                           "workingSetBytes": vm.total - vm.available}}
        pods = [self._pod(psutil, rec, stamp, now, seen) for rec in records]
        with self._lock:
            for key in set(self._last) - seen:
                del self._last[key]  # containers gone: forget them
        return {"node": node, "pods": pods}

    def _pod(self, psutil: Any, rec: _Record, stamp: str, now: float, seen: set[str]) -> dict[str, Any]:
        meta = rec.pod.get("metadata") or {}
        ref = {"name": meta.get("name", ""), "namespace": meta.get("namespace", ""), "uid": meta.get("uid", "")}
        containers = []
        total_ns = total_rss = 0
        for name, proc in rec.containers.items():
            measured = _measure(psutil, proc.pid)
            if measured is None:
                continue
            core_ns, rss = measured
            total_ns, total_rss = total_ns + core_ns, total_rss + rss
            started = (proc.state.get("running") or {}).get("startedAt") or rec.start_time
            key = f"{ref['namespace']}/{ref['name']}/{ref['uid']}/{name}"
            containers.append({"name": name, "startTime": started,
                               "cpu": self._cpu(key, core_ns, stamp, now, seen), "memory": _memory(stamp, rss)})
        pod_key = f"{ref['namespace']}/{ref['name']}/{ref['uid']}"
        return {"podRef": ref, "startTime": rec.start_time, "containers": containers,
                "cpu": self._cpu(pod_key, total_ns, stamp, now, seen), "memory": _memory(stamp, total_rss)}


def _memory(stamp: str, rss: int) -> dict[str, Any]:
    return {"time": stamp, "usageBytes": rss, "workingSetBytes": rss, "rssBytes": rss}


def _measure(psutil: Any, pid: int | None) -> tuple[int, int] | None:
    """(CPU core-nanoseconds, resident bytes) of ``pid`` and its descendants; None when it is gone."""
    if pid is None:
        return None
    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.Error:
        return None
    seconds = 0.0
    rss = 0
    for index, proc in enumerate(tree):
        try:
            with proc.oneshot():
                t = proc.cpu_times()
                seconds += t.user + t.system + (t.children_user + t.children_system if index == 0 else 0.0)
                rss += proc.memory_info().rss
        except psutil.Error:
            continue  # exited while being read
    return int(seconds * 1e9), rss
