"""Throughput and memory of the loopback API server: the ceiling later benchmarks measure against.

Runs the server as a subprocess through its CLI (so client and server do not share a GIL, as with
a real kube-apiserver), drives it with one official ``kubernetes`` client, and prints its figures; the
server's RSS holding ``--pods`` pods is judged against ``TARGETS["rss"]`` (issue 3).

Then the cost of CRD validation rules (issue 30), in a fresh server: ``--cel-creates`` creates of a
custom resource whose CRD carries five typical rules (one a transition rule, which a create skips, as kube's
does), against as many of the same CRD without rules, in alternating rounds over one keep-alive
connection; the server's CPU (user + system) per create is charged to each, and the difference judged
against ``TARGETS["cel_ms"]``. The server's start-up (spawn to serving) is judged against
``TARGETS["startup_s"]``: the CEL runtime is imported by the first CRD with rules, not at start.
Run: ``python benchmarks/apiserver.py [--seconds 3] [--pods 10000] [--cel-creates 2000]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import psutil
from _verdict import Verdicts
from kubernetes import client, config

TARGETS = {
    "rss": 300,  # MiB of server RSS with 10,000 pods
    "cel_ms": 0.5,  # ms of server CPU five CRD validation rules add to a create
    "startup_s": 0.5,  # s from spawning the server to its serving
}


def _pod(name: str) -> dict[str, Any]:
    """A pod about the size a scheduler test creates: one container with requests, a few labels."""
    return {
        "metadata": {"name": name, "labels": {"app": "bench", "tier": "backend", "index": name[-1]}},
        "spec": {
            "containers": [{
                "name": "main",
                "image": "registry.k8s.io/pause:3.9",
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
            }],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                             "effect": "NoExecute", "tolerationSeconds": 300}],
        },
    }


def _rate(label: str, seconds: float, op: Callable[[int], object], limit: int | None = None) -> float:
    """Run ``op(i)`` back to back for ``seconds`` (at most ``limit`` times); print and return ops/s."""
    done, start = 0, time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline and (limit is None or done < limit):
        op(done)
        done += 1
    elapsed = time.perf_counter() - start
    rate = done / elapsed
    print(f"{label:<44} {rate:8.0f} /s   ({done} in {elapsed:.2f} s)")
    return rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of each throughput phase")
    parser.add_argument("--pods", type=int, default=10000, help="pods to hold for the memory figure")
    parser.add_argument("--cel-creates", type=int, default=2000, help="creates per CRD for the CEL figure")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = os.path.join(tmp, "kubeconfig")
        proc = subprocess.Popen(
            [sys.executable, "-m", "componentbase.testing.apiserver", "--port", "0", "--kubeconfig", kubeconfig],
            stdout=subprocess.PIPE, text=True,
        )
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            print(f"server {url} pid {proc.pid}, idle RSS {psutil.Process(proc.pid).memory_info().rss / 2**20:.1f} MiB")
            items, rss = _run(kubeconfig, url, proc.pid, args.seconds, args.pods)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    startup, plain, ruled = _cel(args.cel_creates)
    verdicts = Verdicts()
    verdicts.at_most(f"server RSS with {items} pods", rss, TARGETS["rss"], unit=" MiB", digits=1)
    verdicts.at_most("server start-up", startup, TARGETS["startup_s"], unit=" s")
    verdicts.at_most("server CPU five CEL rules add per create", ruled - plain, TARGETS["cel_ms"], unit=" ms",
                     digits=3)
    return verdicts.exit_code


_RULES = [  # what kubebuilder markers typically write: a cross-field check, a format, a list rule, a map
    # rule, and an immutable field (the transition rule)
    {"rule": "self.minReplicas <= self.replicas", "message": "replicas must be at least minReplicas"},
    {"rule": "self.image.matches('^[a-z0-9./-]+(:[a-zA-Z0-9._-]+)?$')", "message": "image must be a reference"},
    {"rule": "self.ports.all(p, p > 0 && p < 65536)"},
    {"rule": "self.labels.all(k, k.size() <= 63)"},
    {"rule": "self.class == oldSelf.class", "message": "class is immutable"},
]


def _crd(plural: str, rules: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "object", "properties": {
        "replicas": {"type": "integer"}, "minReplicas": {"type": "integer"},
        "image": {"type": "string", "maxLength": 256}, "class": {"type": "string", "maxLength": 63},
        "ports": {"type": "array", "maxItems": 16, "items": {"type": "integer"}},
        "labels": {"type": "object", "maxProperties": 16, "additionalProperties": {"type": "string", "maxLength": 63}}}}
    if rules:
        spec["x-kubernetes-validations"] = _RULES
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.bench.example.com"},
            "spec": {"group": "bench.example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "kind": plural[:-1].capitalize()},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}}


def _app(kind: str, name: str) -> bytes:
    return json.dumps({"apiVersion": "bench.example.com/v1", "kind": kind, "metadata": {"name": name},
                       "spec": {"replicas": 3, "minReplicas": 1, "image": "registry.example.com/app:1.2",
                                "class": "gold", "ports": [80, 443], "labels": {"app": "bench", "tier": "web"}}}
                      ).encode()


def _cel(creates: int) -> tuple[float, float, float]:
    """Start-up (s) of a fresh server, and its CPU per create (ms) without rules and with the five."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "componentbase.testing.apiserver", "--port", "0",
                                 "--kubeconfig", os.path.join(tmp, "kubeconfig")], stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            parts = urlsplit(proc.stdout.readline().strip())
            startup = time.perf_counter() - start
            conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
            server = psutil.Process(proc.pid)
            cpu = {"plains": 0.0, "ruleds": 0.0}
            for plural in cpu:
                _post(conn, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json.dumps(
                    _crd(plural, plural == "ruleds")).encode())
                for i in range(50):  # warm-up: models, compiled rules, caches
                    _post(conn, f"/apis/bench.example.com/v1/namespaces/default/{plural}", _app(
                        plural[:-1].capitalize(), f"warm-{i}"))
            rounds = 10
            for r in range(rounds):
                for plural in cpu:
                    kind = plural[:-1].capitalize()
                    before = sum(server.cpu_times()[:2])
                    for i in range(creates // rounds):
                        _post(conn, f"/apis/bench.example.com/v1/namespaces/default/{plural}", _app(kind, f"a-{r}-{i}"))
                    cpu[plural] += sum(server.cpu_times()[:2]) - before
            conn.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    done = creates // rounds * rounds
    plain, ruled = (cpu[p] / done * 1000 for p in ("plains", "ruleds"))
    print(f"{done} creates each: server CPU {plain:.3f} ms per create without rules, {ruled:.3f} ms with five "
          f"(start-up {startup:.2f} s)")
    return startup, plain, ruled


def _post(conn: http.client.HTTPConnection, path: str, body: bytes) -> None:
    conn.request("POST", path, body, {"Content-Type": "application/json", "Accept": "application/json"})
    resp = conn.getresponse()
    data = resp.read()
    if resp.status != 201:
        raise RuntimeError(f"POST {path}: {resp.status} {data[:300]!r}")


def _run(kubeconfig: str, url: str, pid: int, seconds: float, pods: int) -> tuple[int, float]:
    """Print the throughput figures; the pods held and the server's RSS (MiB) once filled."""
    # Any: the client's typed signatures want models, and plain dicts are what tests send too.
    api: Any = config.new_client_from_config(config_file=kubeconfig)
    v1: Any = client.CoreV1Api(api)
    leases: Any = client.CoordinationV1Api(api)

    _rate("pod create (official client)", seconds,
          lambda i: v1.create_namespaced_pod("default", _pod(f"create-{i}")))
    created = len(v1.list_namespaced_pod("default").items)

    leases.create_namespaced_lease("default", {"metadata": {"name": "bench"},
                                               "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}})

    def renew(i: int) -> None:
        lease = leases.read_namespaced_lease("bench", "default")
        lease.spec.holder_identity = f"holder-{i % 2}"
        leases.replace_namespaced_lease("bench", "default", lease)

    pairs = _rate("lease GET+PUT pair (official client)", seconds, renew)
    print(f"{'  = requests':<44} {2 * pairs:8.0f} /s")

    def bind(i: int) -> None:
        name = f"create-{i}"
        body = client.V1Binding(metadata=client.V1ObjectMeta(name=name),
                                target=client.V1ObjectReference(kind="Node", name="node-1"))
        resp = v1.create_namespaced_pod_binding(name, "default", body, _preload_content=False)
        resp.read()  # an unread raw response keeps its connection out of the pool
        if resp.status != 201:
            raise RuntimeError(f"binding {name}: {resp.status}")

    _rate("pod binding (_preload_content=False)", seconds, bind, limit=created)
    _rate("pod GET (official client)", seconds, lambda i: v1.read_namespaced_pod("create-0", "default"))
    api.close()
    return _memory(url, pid, pods, created)


def _memory(url: str, pid: int, pods: int, have: int) -> tuple[int, float]:
    """Fill the server up to ``pods`` pods over raw keep-alive HTTP (fast), then read its RSS."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    headers = {"Content-Type": "application/json"}
    start = time.perf_counter()
    for i in range(max(0, pods - have)):
        conn.request("POST", "/api/v1/namespaces/default/pods", json.dumps(_pod(f"mem-{i}")), headers)
        resp = conn.getresponse()
        resp.read()
        if resp.status != 201:
            raise RuntimeError(f"create mem-{i}: {resp.status}")
    fill = time.perf_counter() - start
    start = time.perf_counter()
    conn.request("GET", "/api/v1/namespaces/default/pods")
    resp = conn.getresponse()
    items = len(json.loads(resp.read())["items"])
    listed = time.perf_counter() - start
    conn.close()
    rss = psutil.Process(pid).memory_info().rss / 2**20
    print(f"filled to {items} pods in {fill:.2f} s (raw HTTP); full list {listed * 1000:.0f} ms")
    return items, rss


if __name__ == "__main__":
    sys.exit(main())
