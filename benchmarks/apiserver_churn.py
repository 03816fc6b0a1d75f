"""Memory of the loopback API server under create/update/delete churn: RSS must stay flat once full.

Runs the server as a subprocess through its CLI with a small ``--watch-history``, keeps ``--live`` pods
alive while creating, updating and deleting others over raw keep-alive HTTP, with a watch open and a
paged list now and then, and prints the server's RSS every ``--every`` seconds. The baseline is the RSS
measured in the same run once the history window is full and has turned over a few times (``--warmup``
windows of writes; the store trims at twice its size); the verdict compares the last samples against it
(target: at most ``TARGET`` times the baseline).
Run: ``python benchmarks/apiserver_churn.py [--seconds 600] [--history 2000] [--live 500]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import psutil
from _verdict import Verdicts

TARGET = 1.10  # the last samples' RSS over the baseline: within 10 %
_PODS = "/api/v1/namespaces/default/pods"


def _pod(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"app": "churn", "generation": "0"},
                     "annotations": {"note": "x" * 200}},
        "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.0",
                                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]},
    }


class _Client:
    """One keep-alive connection; every answer is read and checked."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)

    def call(self, method: str, path: str, body: Any = None, want: int = 200) -> bytes:
        data = json.dumps(body) if body is not None else None
        kind = "application/merge-patch+json" if method == "PATCH" else "application/json"
        self.conn.request(method, path, data, {"Content-Type": kind})
        resp = self.conn.getresponse()
        raw = resp.read()
        if resp.status != want:
            raise RuntimeError(f"{method} {path}: {resp.status} {raw[:200]!r}")
        return raw


def _watch(url: str, stop: threading.Event, seen: list[int]) -> None:
    """A watch kept open (reopened on timeout) as an informer would, counting the events it reads."""
    parts = urlsplit(url)
    while not stop.is_set():
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
        conn.request("GET", _PODS + "?watch=true&allowWatchBookmarks=true&timeoutSeconds=20")
        resp = conn.getresponse()
        while not stop.is_set():
            line = resp.readline()
            if not line:
                break
            seen[0] += 1
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="how long to churn (default 600)")
    parser.add_argument("--history", type=int, default=2000, help="the server's --watch-history")
    parser.add_argument("--live", type=int, default=500, help="pods kept alive while others churn")
    parser.add_argument("--every", type=float, default=15.0, help="seconds between RSS samples")
    parser.add_argument("--warmup", type=int, default=20, help="writes, in history windows, before the baseline "
                        "(the allocator settles after a few turns of the window)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = os.path.join(tmp, "kubeconfig")
        proc = subprocess.Popen(
            [sys.executable, "-m", "componentbase.testing.apiserver", "--port", "0", "--kubeconfig", kubeconfig,
             "--watch-history", str(args.history)],
            stdout=subprocess.PIPE, text=True,
        )
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            return _run(url, proc.pid, args)
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def _run(url: str, pid: int, args: argparse.Namespace) -> int:
    api = _Client(url)
    stop = threading.Event()
    seen = [0]
    watcher = threading.Thread(target=_watch, args=(url, stop, seen), daemon=True)
    watcher.start()
    server = psutil.Process(pid)
    print(f"server {url} pid {pid}, idle RSS {server.memory_info().rss / 2**20:.1f} MiB; history {args.history}, "
          f"live {args.live}")
    writes, i = 0, 0
    baseline: float | None = None
    full: float | None = None
    samples: list[tuple[float, float]] = []
    start = time.monotonic()
    next_sample = start + args.every
    while time.monotonic() - start < args.seconds:
        api.call("POST", _PODS, _pod(f"p-{i}"), want=201)
        pod = json.loads(api.call("GET", f"{_PODS}/p-{i}"))  # an update is a read-modify-write, as client-go's
        pod["metadata"]["labels"]["generation"] = "1"
        pod["spec"]["containers"][0]["image"] = "registry.k8s.io/pause:3.1"  # of a pod, only images may change
        api.call("PUT", f"{_PODS}/p-{i}", pod)
        api.call("PATCH", f"{_PODS}/p-{i}", {"metadata": {"labels": {"generation": "2"}}})
        writes += 3
        if i >= args.live:
            api.call("DELETE", f"{_PODS}/p-{i - args.live}")
            writes += 1
        if i % 200 == 0:
            token = ""
            while True:  # a paged list, as an informer's relist
                page = json.loads(api.call("GET", f"{_PODS}?limit=100&continue={token}"))
                token = page["metadata"].get("continue", "")
                if not token:
                    break
        i += 1
        now = time.monotonic()
        if full is None and writes >= 2 * args.history:
            full = server.memory_info().rss / 2**20
            print(f"{now - start:7.0f} s  history window full after {writes} writes: RSS {full:.1f} MiB")
        if baseline is None and writes >= args.warmup * args.history:
            baseline = server.memory_info().rss / 2**20
            print(f"{now - start:7.0f} s  window turned over {args.warmup // 2} times: baseline RSS {baseline:.1f} MiB")
        if now >= next_sample:
            rss = server.memory_info().rss / 2**20
            samples.append((now - start, rss))
            ratio = f"{rss / baseline:.3f}x baseline" if baseline else "filling"
            print(f"{now - start:7.0f} s  {writes:8d} writes  {writes / (now - start):6.0f}/s  "
                  f"RSS {rss:6.1f} MiB  {ratio}  (watch read {seen[0]} events)")
            next_sample = now + args.every
    stop.set()
    if baseline is None or not samples:
        print("too short: the history window never filled; run longer or with a smaller --history")
        return 1
    last = max(rss for _, rss in samples[-3:])
    peak = max(rss for _, rss in samples)
    print(f"baseline {baseline:.1f} MiB, last {last:.1f} MiB, peak {peak:.1f} MiB")
    verdicts = Verdicts()
    verdicts.at_most("last RSS / baseline", last / baseline, TARGET, unit="x", digits=3)
    return verdicts.exit_code


if __name__ == "__main__":
    sys.exit(main())
