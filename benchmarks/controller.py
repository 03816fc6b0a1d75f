"""The controller runtime's cost: the hello controller on a Manager against the raw PATCH rate of the same client.

The loopback API server runs in a child process, so this process's CPU time is the controller's alone. Each
round gives every ConfigMap a new greeting:

- **raw**: one thread PATCHes every ConfigMap in turn through the official client (what the controller's
  single worker does, with nothing around it);
- **manager**: a Manager with the hello controller (one worker, the default) starts, lists every ConfigMap into
  its cache, reconciles each and sees its own write come back through the watch;
- **command**: ``python -m componentbase_examples.hello`` itself, ``controller_command`` with its defaults (no
  client-side limit, leader election, serving), started on as many stale ConfigMaps of its own: from its
  serving (start-up done) until all are greeted, as for the manager, with its CPU (the child's own), the
  writes the server saw and its RSS.

Printed per side: objects per second (wall), CPU milliseconds per object in this process, and for the
manager the writes it sent (one per object: a second, no-op write would show here) and the RSS its cache
added per object. Ratio = manager rate / raw rate. Targets (issue 16, ``TARGETS``): the ratio, and one write
per object. Rounds alternate; the best round of each side is reported with the median beside it, because this
machine is shared and noisy.
Run from the repository root: ``python benchmarks/controller.py [--objects N] [--rounds N]`` (10,000 and 3 by
default, as issue 16 asks; about two minutes).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil
from _verdict import Verdicts

from componentbase.client import ObjectClient, new_api_client
from componentbase.componentconfig import ClientConnectionConfiguration
from componentbase.controller import Manager, Request
from componentbase.informers import InformerFactory
from componentbase.testing import free_port

NAMESPACE = "default"
TARGETS = {"ratio": 0.8, "writes": 1.0}  # issue 16: at least 0.8 of the raw rate; one write per object at most
#: issue 27, the hello binary with its defaults: at least 0.8 of the raw rate, 0.6 ms of CPU and one write per object
COMMAND_TARGETS = {"ratio": 0.8, "cpu_ms": 0.6, "writes": 1.0}


def _cm(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"cm-{i:05d}", "namespace": NAMESPACE, "labels": {"bench": "true"}},
            "data": {"k": "v"}}


def _hello_cm(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"hello-{i:05d}", "namespace": NAMESPACE, "labels": {"hello": "true"}}}


def seed(api: Any, n: int, make: Any = _cm) -> None:
    objects = ObjectClient(api)

    def work(first: int) -> None:
        for i in range(first, n, 4):
            objects.create(make(i))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def raw_round(api: Any, n: int, greeting: str) -> tuple[float, float]:
    objects = ObjectClient(api)
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        objects.patch(_cm(i), {"data": {"greeting": greeting}})
    return time.perf_counter() - wall, time.process_time() - cpu


def manager_round(api: Any, n: int, greeting: str) -> tuple[float, float, int, float]:
    wall, cpu, rss = time.perf_counter(), time.process_time(), psutil.Process().memory_info().rss
    mgr = Manager(api)
    cms = mgr.informer("v1", "ConfigMap", NAMESPACE, label_selector="bench=true")
    writes = 0
    done = threading.Event()
    greeted: set[str] = set()
    lock = threading.Lock()

    def reconcile(req: Request) -> None:
        nonlocal writes
        cm = cms.get(req.key)
        if cm is not None and (cm.get("data") or {}).get("greeting") != greeting:
            mgr.objects.patch(cm, {"data": {"greeting": greeting}})
            writes += 1

    def seen(obj: dict[str, Any]) -> None:
        if (obj.get("data") or {}).get("greeting") == greeting:
            with lock:
                greeted.add(obj["metadata"]["name"])
                if len(greeted) == n:
                    done.set()

    cms.add_event_handler(on_add=seen, on_update=lambda old, new: seen(new))
    mgr.controller("hello", reconcile).watch(cms)
    stop = threading.Event()
    code: list[int] = []
    thread = threading.Thread(target=lambda: code.append(mgr.run(stop)))
    thread.start()
    if not done.wait(600):
        raise SystemExit(f"the manager greeted {len(greeted)} of {n} ConfigMaps in 600s")
    elapsed, spent = time.perf_counter() - wall, time.process_time() - cpu
    rss_per_object = (psutil.Process().memory_info().rss - rss) / n
    stop.set()
    thread.join(60)
    return elapsed, spent, writes, rss_per_object


class Greetings:
    """A cache here of the hello ConfigMaps, counting those greeted and the server's resourceVersions."""

    def __init__(self, api: Any, n: int) -> None:
        self.n = n
        self.greeted: set[str] = set()
        self.rv = 0  # the highest resourceVersion seen: the server's count of writes so far
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.factory = InformerFactory(api)
        cms = self.factory.for_kind("v1", "ConfigMap", NAMESPACE, label_selector="hello=true")
        cms.add_event_handler(on_add=self._seen, on_update=lambda old, new: self._seen(new))
        self.lease_rvs: list[int] = []  # the hello Lease's writes, taken out of the count
        leases = self.factory.for_kind("coordination.k8s.io/v1", "Lease", "kube-system")
        leases.add_event_handler(on_add=self._lease, on_update=lambda old, new: self._lease(new))
        self.stop = threading.Event()
        self.factory.start(self.stop)
        if not self.factory.wait_for_cache_sync(60):
            raise SystemExit("the benchmark's own cache of the hello ConfigMaps did not sync in 60s")

    def _seen(self, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        with self.lock:
            self.rv = max(self.rv, int(obj["metadata"]["resourceVersion"]))
            if (obj.get("data") or {}).get("greeting") == f"hello, {name}":
                self.greeted.add(name)
                if len(self.greeted) == self.n:
                    self.done.set()

    def _lease(self, obj: dict[str, Any]) -> None:
        if obj["metadata"]["name"] == "hello":
            with self.lock:
                self.lease_rvs.append(int(obj["metadata"]["resourceVersion"]))

    def writes_since(self, rv: int) -> int:
        """The ConfigMap writes the server made after ``rv`` up to the last one seen, less the Lease's."""
        with self.lock:
            return self.rv - rv - sum(1 for v in self.lease_rvs if rv < v <= self.rv)

    def close(self) -> None:
        self.stop.set()
        self.factory.join(5)


def command_round(kubeconfig: Path, api: Any, n: int, r: int, log: Path) -> tuple[float, float, int, float]:
    """The hello binary started on ``n`` stale ConfigMaps: (wall, CPU, writes, RSS) from its serving (its start-up
    done: interpreter, imports, certificate) until all are greeted, as the manager round counts from the Manager.

    Writes are the resourceVersions the server gave out meanwhile, less its Lease's: a second write per object
    that changed anything would show, a no-op one would not (the manager round counts calls).
    """
    objects = ObjectClient(api)
    for i in range(n):
        objects.patch(_hello_cm(i), {"data": {"greeting": f"stale {r}"}})
    greetings = Greetings(api, n)
    with log.open("w") as f:  # serving on a free port of this host: another run may hold the default one
        proc = subprocess.Popen([sys.executable, "-m", "componentbase_examples.hello", f"--kubeconfig={kubeconfig}",
                                 f"--secure-port={free_port()}", "--bind-address=127.0.0.1"], stderr=f)
    try:
        child = psutil.Process(proc.pid)
        deadline = time.monotonic() + 60
        while "Serving securely" not in log.read_text():
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"the hello binary did not start serving: {log.read_text()[-2000:]}")
            time.sleep(0.002)
        cpu, wall, rv = sum(child.cpu_times()[:2]), time.perf_counter(), greetings.rv
        if not greetings.done.wait(600):
            raise SystemExit(f"the hello binary greeted {len(greetings.greeted)} of {n} ConfigMaps in 600s")
        elapsed, spent = time.perf_counter() - wall, sum(child.cpu_times()[:2]) - cpu
        time.sleep(0.2)  # a second write per object would come right after the first
        return elapsed, spent, greetings.writes_since(rv), float(child.memory_info().rss)
    finally:
        proc.terminate()
        proc.wait(30)
        greetings.close()


def _median_ms(rounds: Sequence[tuple[float, ...]], field: int, n: int) -> float:
    """The median over ``rounds`` of one figure in seconds, as milliseconds per object."""
    return 1000 * statistics.median(r[field] for r in rounds) / n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    n = args.objects
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp, "kubeconfig")
        server = subprocess.Popen([sys.executable, "-m", "componentbase.testing.apiserver",
                                   f"--kubeconfig={kubeconfig}"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while not kubeconfig.exists():
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the loopback API server did not start")
                time.sleep(0.05)
            api = new_api_client(ClientConnectionConfiguration(kubeconfig=str(kubeconfig), qps=-1))
            seed(api, n)
            raws: list[tuple[float, float]] = []
            mgrs: list[tuple[float, float, int, float]] = []
            for r in range(args.rounds):
                raws.append(raw_round(api, n, f"raw {r}"))
                mgrs.append(manager_round(api, n, f"hello {r}"))
            seed(api, n, _hello_cm)
            cmds = [command_round(kubeconfig, api, n, r, Path(tmp, f"hello-{r}.log")) for r in range(args.rounds)]
        finally:
            server.terminate()
            server.wait(30)
    raw_best = min(w for w, _ in raws)
    mgr_best = min(m[0] for m in mgrs)
    print(f"objects: {n}, rounds: {args.rounds}")
    print(f"raw PATCH:  {n / raw_best:8.0f} objects/s (median {n / statistics.median(w for w, _ in raws):.0f}), "
          f"CPU {1000 * min(c for _, c in raws) / n:.3f} ms/object (median {_median_ms(raws, 1, n):.3f})")
    print(f"manager:    {n / mgr_best:8.0f} objects/s (median {n / statistics.median(m[0] for m in mgrs):.0f}), "
          f"CPU {1000 * min(m[1] for m in mgrs) / n:.3f} ms/object (median {_median_ms(mgrs, 1, n):.3f}), "
          f"writes/object {max(m[2] for m in mgrs) / n:.2f}, "
          f"RSS {statistics.median(m[3] for m in mgrs):.0f} B/cached object")
    ratio_of_medians = statistics.median(w for w, _ in raws) / statistics.median(m[0] for m in mgrs)
    print(f"ratio (manager / raw rate): {raw_best / mgr_best:.2f}; of the medians {ratio_of_medians:.2f}")
    cmd_best = min(c[0] for c in cmds)
    print(f"hello binary: {n / cmd_best:6.0f} objects/s (median {n / statistics.median(c[0] for c in cmds):.0f}), "
          f"CPU {1000 * min(c[1] for c in cmds) / n:.3f} ms/object (median {_median_ms(cmds, 1, n):.3f}), "
          f"writes/object {max(c[2] for c in cmds) / n:.2f}, RSS {max(c[3] for c in cmds) / 2**20:.0f} MiB")
    verdicts = Verdicts()
    verdicts.at_least("ratio (manager / raw rate), best rounds", raw_best / mgr_best, TARGETS["ratio"])
    verdicts.at_most("writes per object", max(m[2] for m in mgrs) / n, TARGETS["writes"])
    verdicts.at_least("ratio (hello binary / raw rate), best rounds", raw_best / cmd_best, COMMAND_TARGETS["ratio"])
    verdicts.at_most("hello binary CPU per object, best round", 1000 * min(c[1] for c in cmds) / n,
                     COMMAND_TARGETS["cpu_ms"], " ms", 3)
    verdicts.at_most("hello binary writes per object", max(c[2] for c in cmds) / n, COMMAND_TARGETS["writes"])
    return verdicts.exit_code


if __name__ == "__main__":
    sys.exit(main())
