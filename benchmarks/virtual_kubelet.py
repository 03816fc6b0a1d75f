"""Virtual kubelet throughput: pods/s from bound to Running with the mock provider; prints figures, ~30 s.

* baseline: the same client writes a Running status to each of N pods (merge patch of ``/status``) from
  as many threads as the node has workers: the raw rate the API server and client allow;
* virtual kubelet: N pods already bound to the node; from the moment its pod informer has them, until
  that informer has seen every one Running (informer, work queues, provider, status write, events),
  the node built as the app builds it (Events from a child process, started before the window; its CPU
  counts as the VK's, and so would that of any event sender started in the window).
  The VK's own informer is the observer: a second watch of our own would charge the VK with CPU (its
  decoding here, its fan-out in the server) that the baseline does not pay.

ratio = virtual kubelet rate / baseline rate (target: at least ``TARGET``). Both run against the same loopback
API server, alternating for ``--rounds`` rounds on fresh pods, so the machine's speed cancels out; the
median ratio is the figure. The server runs in its own process (``--in-process`` to share this one),
as a real API server would not share the virtual kubelet's GIL. Beside the rates, each side's CPU per
pod in this process and in the server's (read from /proc, Linux): a noisy machine moves the rates,
much less the CPU each pod costs, which says where the time goes.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _verdict import Verdicts

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TARGET = 0.8  # issue 16: the existing ratios must improve on the new runtime (issue 7's was 0.7)


class CPUMeter:
    """CPU seconds used so far by this process (and ``others`` of its helpers, like the VK's event sender)
    and by the API server's process (0 when it is this one)."""

    def __init__(self, server_pid: int | None) -> None:
        self.server_pid = server_pid
        self.tick = os.sysconf("SC_CLK_TCK")

    def __call__(self, *others: int | None) -> tuple[float, float]:
        times = os.times()
        return times.user + times.system + sum(self._of(pid) for pid in others), self._of(self.server_pid)

    def _of(self, pid: int | None) -> float:
        if pid is None:
            return 0.0
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / self.tick


@dataclasses.dataclass
class Run:
    """One measured side of a round: its rate and CPU milliseconds per pod in each process."""

    rate: float
    client_ms: float
    server_ms: float
    events: int = 0  # Events the server had from the VK when its last pod was Running
    moved: bool = False  # its event sender moved to a child process during the window

    @classmethod
    def of(cls, n: int, seconds: float, before: tuple[float, float], after: tuple[float, float],
           events: int = 0) -> Run:
        return cls(n / seconds, 1000 * (after[0] - before[0]) / n, 1000 * (after[1] - before[1]) / n, events)


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


def baseline(api: Any, n: int, workers: int, node: str, cpu: CPUMeter) -> Run:
    """Raw status writes: what the mock's pods would be written, straight from the client."""
    # The same call the pod controller makes (componentbase.client.request), so the baseline is like-for-like.
    from componentbase.client import request

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
        request(api, "PATCH", "/api/v1/namespaces/{namespace}/pods/{name}/status",
                path_params={"namespace": "default", "name": f"{node}-{i}"}, body={"status": status},
                content_type="application/merge-patch+json").read()

    before, start = cpu(), time.perf_counter()
    _fan_out(write, n, workers)
    return Run.of(n, time.perf_counter() - start, before, cpu())


def virtual_kubelet(api: Any, n: int, workers: int, node_name: str, cpu: CPUMeter) -> Run:
    """Pods/s from bound to Running, as the VK's own pod informer sees them."""
    from componentbase_examples.virtual_kubelet.node import Node
    from componentbase_examples.virtual_kubelet.provider import Provider
    from componentbase_examples.virtual_kubelet.provider_types import ProviderContext
    from componentbase_examples.virtual_kubelet.providers.mock import MockProvider
    from componentbase_examples.virtual_kubelet.resources import ResourceManager

    create_pods(api, node_name, n, workers)
    running: set[str] = set()
    lock = threading.Lock()
    all_running = threading.Event()

    def seen(pod: dict[str, Any]) -> None:
        if (pod.get("status") or {}).get("phase") == "Running":
            with lock:
                running.add(pod["metadata"]["name"])
                if len(running) >= n:
                    all_running.set()

    stop = threading.Event()
    resources = ResourceManager()
    ctx = ProviderContext(node_name=node_name, operating_system="Linux", internal_ip="", daemon_port=10250,
                          cluster_domain="cluster.local", config=None, resources=resources)
    # As componentbase_examples/virtual_kubelet/app.py builds it (Events from a child process) and as Command runs it
    # (what start-up built frozen out of the collector's full passes).
    node = Node(api, Provider("mock", MockProvider(ctx)), name=node_name, workers=workers, resources=resources,
                event_sink="process")
    gc.freeze()
    thread = threading.Thread(target=node.run, args=(stop,), daemon=True)
    thread.start()
    while node.pod_informer is None or not node.pod_informer.has_synced():
        time.sleep(0.001)
    sender, helpers = node.events.sender_pid, _children()
    before, start = cpu(sender), time.perf_counter()
    node.pod_informer.add_event_handler(seen, lambda old, new: seen(new))
    if not all_running.wait(120):
        raise SystemExit(f"only {len(running)} of {n} pods became Running within 120s")
    started = [pid for pid in _children() if pid not in helpers and pid != cpu.server_pid]
    after = cpu(sender, *started)  # an event sender started during the window: all its CPU is the VK's too
    run = Run.of(n, time.perf_counter() - start, before, after, _events_on_server(api, node_name))
    run.moved = bool(started)
    node.events.flush(60)  # the rest of its events: not into the next round's figures
    stop.set()
    thread.join(30)
    return run


def _children() -> list[int]:
    """This process's children (Linux /proc): the API server, and an event sender once one starts."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                if entry.isdigit() and int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


def _events_on_server(api: Any, node_name: str) -> int:
    """The node's Events the server has now (the sender's own count lags by a batch)."""
    from kubernetes import client

    raw = client.CoreV1Api(api).list_namespaced_event("default", _preload_content=False)
    items = json.loads(raw.read())["items"]
    return sum(1 for e in items if e.get("source", {}).get("component") == f"{node_name}/pod-controller")


@contextlib.contextmanager
def api_server(in_process: bool) -> Iterator[tuple[str, int | None]]:
    """A loopback API server; yields its kubeconfig path and its pid (None when in this process)."""
    from componentbase.testing import LoopbackAPIServer

    if in_process:
        with LoopbackAPIServer() as server:
            yield server.kubeconfig_path, None
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
            yield path, proc.pid
        finally:
            proc.terminate()
            proc.wait(10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=500)
    parser.add_argument("--workers", type=int, default=10, help="--pod-sync-workers (and baseline threads)")
    parser.add_argument("--rounds", type=int, default=3, help="baseline and virtual kubelet, alternating")
    parser.add_argument("--in-process", action="store_true", help="run the API server in this process")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    rounds: list[tuple[Run, Run]] = []
    with api_server(args.in_process) as (kubeconfig, server_pid):
        import componentbase

        # Built as the virtual kubelet's own connect() builds its client (the pool sized for its workers).
        cc = componentbase.ClientConnectionConfiguration(kubeconfig=kubeconfig, qps=-1)
        api = componentbase.new_api_client(cc, pool_maxsize=args.workers + 8)
        cpu = CPUMeter(server_pid)
        create_pods(api, "warm-up", 100, args.workers)  # first connections and imports, outside both sides
        for r in range(args.rounds):
            raw = baseline(api, args.pods, args.workers, f"raw{r}", cpu)
            vk = virtual_kubelet(api, args.pods, args.workers, f"vk{r}", cpu)
            rounds.append((raw, vk))
            print(f"round {r + 1}: bound -> Running {vk.rate:.0f} pods/s vs raw status writes {raw.rate:.0f}/s: "
                  f"ratio {vk.rate / raw.rate:.2f}; CPU per pod (ms) VK {vk.client_ms:.2f} + server "
                  f"{vk.server_ms:.2f}, baseline {raw.client_ms:.2f} + server {raw.server_ms:.2f}; "
                  f"{vk.events} of {args.pods} ProviderCreateSuccess events written by then; event sender moved "
                  f"to a child process (started in the window): {'yes' if vk.moved else 'no'}")
        api.close()
    ratio = statistics.median(vk.rate / raw.rate for raw, vk in rounds)

    def median(pick: Any) -> float:
        return round(statistics.median(pick(raw, vk) for raw, vk in rounds), 3)

    figures = {"pods": args.pods, "workers": args.workers, "rounds": args.rounds,
               "baseline_status_writes_per_s": median(lambda raw, vk: raw.rate),
               "virtual_kubelet_pods_running_per_s": median(lambda raw, vk: vk.rate),
               "ratio": round(ratio, 3), "target": TARGET,
               "events_written_by_last_running": median(lambda raw, vk: vk.events),
               "cpu_ms_per_pod": {"virtual_kubelet": median(lambda raw, vk: vk.client_ms),
                                  "virtual_kubelet_server": median(lambda raw, vk: vk.server_ms),
                                  "baseline_client": median(lambda raw, vk: raw.client_ms),
                                  "baseline_server": median(lambda raw, vk: raw.server_ms)}}
    print(json.dumps(figures))
    cost = figures["cpu_ms_per_pod"]
    print(f"a pod costs the VK and the server {cost['virtual_kubelet'] + cost['virtual_kubelet_server']:.2f} ms "
          f"of CPU, a raw status write {cost['baseline_client'] + cost['baseline_server']:.2f} ms")
    verdicts = Verdicts()
    verdicts.at_least("median ratio, bound -> Running / raw status writes", ratio, TARGET)
    return verdicts.exit_code


if __name__ == "__main__":
    sys.exit(main())
