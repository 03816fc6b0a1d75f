"""CPU the loopback API server spends per request, by kind of request: the figure that bounds every test
and benchmark that talks to it, read as CPU (not rate) so it holds on a loaded machine.

Each round starts a fresh server through its CLI (its own process), creates one pod to warm it up (the
first write loads the official client's models for field validation, about a second of CPU once), sends
``--requests`` requests of each kind over one keep-alive connection with the official client's headers,
and charges the server process's CPU time (user + system) to the phase:

- create: a pod about the size tests and the scheduler benchmark create;
- patch: a strategic merge patch of one label, as controllers send;
- bind+event: the binding POST and the Scheduled Event POST a scheduler sends per pod;
- get: a pod by name;
- watch event: the same patches again with ``--watchers`` watches of the namespace's pods open: the CPU of
  the watches' own server threads, per event delivered.

Prints each figure per round and the medians. Run: ``python benchmarks/apiserver_cpu.py [--requests 2000]
[--rounds 3] [--watchers 4]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import psutil

_HEADERS = {"Accept": "application/json", "User-Agent": "OpenAPI-Generator/31.0.0/python"}
_PODS = "/api/v1/namespaces/bench/pods"
PHASES = ("create", "patch", "bind+event", "get", "watch event")

#: ``--profile``: the server's CLI with each connection thread under cProfile, the stats summed at exit.
PROFILED = textwrap.dedent('''
    import atexit, cProfile, pstats, socketserver, sys, time
    out, profiles, serve = sys.argv.pop(1), [], socketserver.ThreadingMixIn.process_request_thread
    def profiled(self, request, address):
        profile = cProfile.Profile(time.thread_time)  # CPU, not the wall clock: GIL waits are not cost
        profiles.append(profile)
        profile.runcall(serve, self, request, address)
    socketserver.ThreadingMixIn.process_request_thread = profiled
    def dump():
        stats = pstats.Stats()
        for profile in list(profiles):
            profile.disable()
            stats.add(profile)
        stats.dump_stats(out)
    atexit.register(dump)
    from componentbase.testing.apiserver.__main__ import main
    sys.exit(main())
''')


def _pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "bench", "tier": "backend"}},
        "spec": {
            "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.9",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                            "ports": [{"containerPort": 8080, "protocol": "TCP"}]}],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                             "effect": "NoExecute", "tolerationSeconds": 300}],
        },
    }


class _Conn:
    """One keep-alive connection; every answer is read and its status checked."""

    def __init__(self, host: str, port: int) -> None:
        self.conn = http.client.HTTPConnection(host, port, timeout=60)

    def call(self, method: str, path: str, body: Any = None, want: int = 200,
             content_type: str = "application/json") -> None:
        headers = dict(_HEADERS, **({"Content-Type": content_type} if body is not None else {}))
        self.conn.request(method, path, json.dumps(body) if body is not None else None, headers)
        resp = self.conn.getresponse()
        data = resp.read()
        if resp.status != want:
            raise RuntimeError(f"{method} {path}: {resp.status} {data[:200]!r}")


def _watch(host: str, port: int, ready: threading.Event, stop: threading.Event, seen: list[int]) -> None:
    conn = http.client.HTTPConnection(host, port, timeout=120)
    conn.request("GET", f"{_PODS}?watch=true&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=600",
                 headers=_HEADERS)
    resp = conn.getresponse()
    ready.set()
    for _ in resp:
        seen[0] += 1
        if stop.is_set():
            break
    conn.close()


def _charge(server: psutil.Process, work: Callable[[], None]) -> float:
    """Server CPU seconds spent while ``work`` runs."""
    before = server.cpu_times()
    work()
    after = server.cpu_times()
    return (after.user - before.user) + (after.system - before.system)


def one_round(n: int, watchers: int, profile: str | None = None) -> dict[str, float]:
    """Milliseconds of server CPU per request of each phase, on a fresh server."""
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = os.path.join(tmp, "kubeconfig")
        run = ["-c", PROFILED, profile] if profile else ["-m", "componentbase.testing.apiserver"]
        proc = subprocess.Popen([sys.executable, *run, "--port", "0", "--kubeconfig", kubeconfig],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            parts = urlsplit(proc.stdout.readline().strip())
            host, port = parts.hostname or "127.0.0.1", parts.port or 0
            server = psutil.Process(proc.pid)
            c = _Conn(host, port)
            c.call("POST", "/api/v1/namespaces", {"metadata": {"name": "bench"}}, 201)
            # warm: the first write loads the official client's models (about a second of CPU, once)
            c.call("POST", _PODS, _pod("warm-up"), 201)
            names = [f"p-{i}" for i in range(n)]
            ms: dict[str, float] = {}

            def create() -> None:
                for name in names:
                    c.call("POST", _PODS, _pod(name), 201)

            def patch(value: str) -> Callable[[], None]:
                def run() -> None:
                    for name in names:
                        c.call("PATCH", f"{_PODS}/{name}", {"metadata": {"labels": {"round": value}}},
                               content_type="application/strategic-merge-patch+json")
                return run

            def bind_and_event() -> None:
                for name in names:
                    c.call("POST", f"{_PODS}/{name}/binding",
                           {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": "bench"},
                            "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}, 201)
                    c.call("POST", "/api/v1/namespaces/bench/events", {
                        "metadata": {"name": f"{name}.event", "namespace": "bench"}, "type": "Normal",
                        "involvedObject": {"kind": "Pod", "namespace": "bench", "name": name},
                        "reason": "Scheduled", "message": f"Successfully assigned bench/{name} to node-1",
                        "count": 1, "source": {"component": "default-scheduler"},
                        "reportingComponent": "default-scheduler"}, 201)

            def get() -> None:
                for name in names:
                    c.call("GET", f"{_PODS}/{name}")

            ms["create"] = _charge(server, create)
            ms["patch"] = _charge(server, patch("a"))
            ms["bind+event"] = _charge(server, bind_and_event)
            ms["get"] = _charge(server, get)
            stop, seen = threading.Event(), [[0] for _ in range(watchers)]
            readies = [threading.Event() for _ in range(watchers)]
            earlier = {t.id for t in server.threads()}
            threads = [threading.Thread(target=_watch, args=(host, port, readies[i], stop, seen[i]), daemon=True)
                       for i in range(watchers)]
            for t in threads:
                t.start()
            for r in readies:
                r.wait(30)
            time.sleep(0.5)  # the initial ADDEDs of every watch are out before the charged phase
            base = [s[0] for s in seen]
            before = {t.id: t.user_time + t.system_time for t in server.threads() if t.id not in earlier}
            patch("b")()
            deadline = time.monotonic() + 30
            while any(s[0] - b < n for s, b in zip(seen, base, strict=True)) and time.monotonic() < deadline:
                time.sleep(0.02)
            after = {t.id: t.user_time + t.system_time for t in server.threads() if t.id in before}
            delivered = sum(s[0] - b for s, b in zip(seen, base, strict=True))
            # the watches' own threads (their selection, encoding and writes), per event they sent
            ms["watch event"] = 1000 * sum(after[i] - before[i] for i in after) / max(1, delivered)
            stop.set()
            for key in ("create", "patch", "bind+event", "get"):
                ms[key] = 1000 * ms[key] / n
            return ms
        finally:
            proc.terminate()
            try:
                proc.wait(30)  # a loaded machine can take a while to close the open watches
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests of each kind per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--watchers", type=int, default=4, help="watches open during the watch-event phase")
    parser.add_argument("--profile", metavar="FILE", help="run the server under cProfile (its figures then "
                        "include the profiler's overhead) and write the stats of the last round to FILE")
    args = parser.parse_args()
    rounds = []
    for r in range(args.rounds):
        ms = one_round(args.requests, args.watchers, args.profile)
        rounds.append(ms)
        print(f"round {r + 1}: " + ", ".join(f"{k} {ms[k]:.3f}" for k in PHASES) + " (ms server CPU per request)")
    print("median:  " + ", ".join(f"{k} {statistics.median(m[k] for m in rounds):.3f}" for k in PHASES)
          + " ms server CPU per request (watch: per event delivered)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
