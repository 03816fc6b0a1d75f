"""Virtual kubelet throughput: pods/s from bound to Running with the mock provider; prints figures, ~10-20 s.

* baseline: the same client writes a Running status to each of N pods (merge patch of ``/status``) from
  as many threads as the node has workers: the raw rate the API server and client allow;
* virtual kubelet: N pods already bound to the node; from the moment its pod informer has them, until a
  watch of our own has seen every one Running (informer, work queues, provider, status write, events).

ratio = virtual kubelet rate / baseline rate (target >= 0.7). Both run against the same loopback API
server, one after the other, so the machine's speed cancels out. The server runs in its own process
(``--in-process`` to share this one), as a real API server would not share the virtual kubelet's GIL.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TARGET = 0.7


def create_pods(api: Any, node: str, n: int, workers: int) -> None:
    from kubernetes import client

    core = client.CoreV1Api(api)

    def create(i: int) -> None:
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{node}-{i}"},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]}}
        core.create_namespaced_pod("default", body, _preload_content=False).read()

    _fan_out(create, n, workers)


def _fan_out(fn: Any, n: int, workers: int) -> None:
    items = list(range(n))
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if not items:
                    return
                i = items.pop()
            fn(i)

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def baseline(api: Any, n: int, workers: int, node: str = "raw") -> float:
    """Raw status writes per second: what the mock's pods would be written, straight from the client."""
    from kubernetes import client

    core = client.CoreV1Api(api)
    # The same call the pod controller makes (componentbase.unvalidated), so the baseline is like-for-like.
    from componentbase import unvalidated

    patch_status = unvalidated(core.patch_namespaced_pod_status)
    create_pods(api, node, n, workers)
    stamp = "2024-01-01T00:00:00Z"

    def write(i: int) -> None:
        status = {"phase": "Running", "hostIP": "1.2.3.4", "podIP": "5.6.7.8", "startTime": stamp,
                  "conditions": [{"type": t, "status": "True", "lastTransitionTime": stamp}
                                 for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
                  "containerStatuses": [{"name": "c", "image": "nginx", "imageID": "", "ready": True,
                                         "started": True, "restartCount": 0,
                                         "state": {"running": {"startedAt": stamp}}}]}
        # Read the answer, as the pod controller does: an unread raw response keeps its connection.
        patch_status(f"{node}-{i}", "default", {"status": status},
                     _content_type="application/merge-patch+json", _preload_content=False).read()

    start = time.perf_counter()
    _fan_out(write, n, workers)
    return n / (time.perf_counter() - start)


def virtual_kubelet(api: Any, n: int, workers: int) -> tuple[float, float]:
    """(pods/s from bound to Running, seconds the whole run took)."""
    from componentbase import informers
    from examples.virtual_kubelet.node import Node
    from examples.virtual_kubelet.provider import Provider
    from examples.virtual_kubelet.provider_types import ProviderContext
    from examples.virtual_kubelet.providers.mock import MockProvider
    from examples.virtual_kubelet.resources import ResourceManager

    create_pods(api, "vk", n, workers)
    running: set[str] = set()
    all_running = threading.Event()

    def seen(pod: dict[str, Any]) -> None:
        if (pod.get("status") or {}).get("phase") == "Running":
            running.add(pod["metadata"]["name"])
            if len(running) >= n:
                all_running.set()

    stop = threading.Event()
    watch = informers.InformerFactory(api).pods(field_selector="spec.nodeName=vk")
    watch.add_event_handler(seen, lambda old, new: seen(new))
    watch.start(stop)
    watch.wait_for_sync(30)
    resources = ResourceManager()
    ctx = ProviderContext(node_name="vk", operating_system="Linux", internal_ip="", daemon_port=10250,
                          cluster_domain="cluster.local", config=None, resources=resources)
    node = Node(api, Provider("mock", MockProvider(ctx)), name="vk", workers=workers, resources=resources)
    began = time.perf_counter()
    thread = threading.Thread(target=node.run, args=(stop,), daemon=True)
    thread.start()
    while node.pod_informer is None or not node.pod_informer.has_synced():
        time.sleep(0.001)
    start = time.perf_counter()
    if not all_running.wait(120):
        raise SystemExit(f"only {len(running)} of {n} pods became Running within 120s")
    elapsed = time.perf_counter() - start
    stop.set()
    thread.join(30)
    return n / elapsed, time.perf_counter() - began


@contextlib.contextmanager
def api_server(in_process: bool) -> Iterator[str]:
    """A loopback API server; yields its kubeconfig path."""
    from componentbase.testing import LoopbackAPIServer

    if in_process:
        with LoopbackAPIServer() as server:
            yield server.kubeconfig_path
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kubeconfig")
        proc = subprocess.Popen([sys.executable, "-m", "componentbase.testing.apiserver", "--kubeconfig", path],
                                cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while not os.path.exists(path):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the loopback API server did not start")
                time.sleep(0.05)
            yield path
        finally:
            proc.terminate()
            proc.wait(10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=500)
    parser.add_argument("--workers", type=int, default=10, help="--pod-sync-workers (and baseline threads)")
    parser.add_argument("--in-process", action="store_true", help="run the API server in this process")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    with api_server(args.in_process) as kubeconfig:
        import componentbase

        # Built as the virtual kubelet's own connect() builds its client (the pool sized for its workers).
        cc = componentbase.ClientConnectionConfiguration(kubeconfig=kubeconfig)
        api = componentbase.new_api_client(cc, pool_maxsize=args.workers + 8)
        raw = baseline(api, args.pods, args.workers)
        sequential = baseline(api, args.pods, 1, "seq")
        vk, total = virtual_kubelet(api, args.pods, args.workers)
        api.close()
    ratio = vk / raw
    print(json.dumps({"pods": args.pods, "workers": args.workers, "baseline_status_writes_per_s": round(raw, 1),
                      "baseline_sequential_writes_per_s": round(sequential, 1),
                      "virtual_kubelet_pods_running_per_s": round(vk, 1), "ratio": round(ratio, 3),
                      "ratio_to_sequential": round(vk / sequential, 3), "target": TARGET,
                      "virtual_kubelet_run_s": round(total, 2)}))
    print(f"bound -> Running: {vk:.0f} pods/s vs raw status writes {raw:.0f}/s ({args.workers} threads): "
          f"ratio {ratio:.2f} (target >= {TARGET}); vs one thread {sequential:.0f}/s: {vk / sequential:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
