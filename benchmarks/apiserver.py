"""Throughput and memory of the loopback API server: the ceiling later benchmarks measure against.

Runs the server as a subprocess through its CLI (so client and server do not share a GIL, as with
a real kube-apiserver), drives it with one official ``kubernetes`` client, and prints its figures; the
server's RSS holding ``--pods`` pods is judged against ``TARGET`` (issue 3).
Run: ``python benchmarks/apiserver.py [--seconds 3] [--pods 10000]``.
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

TARGET = 300  # MiB of server RSS with 10,000 pods


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
    verdicts = Verdicts()
    verdicts.at_most(f"server RSS with {items} pods", rss, TARGET, unit=" MiB", digits=1)
    return verdicts.exit_code


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
