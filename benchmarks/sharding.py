"""Sharded controllers at scale on the loopback API server: throughput, memory, rebalance (issue 31); a few minutes.

* throughput: 1, 2 and 3 sharded replicas (processes), each client limited to 50 requests/s as API Priority and
  Fairness would hold one client; every reconcile writes once. Aggregate reconciles/s over a window once every
  shard holds its Lease, / one replica's. Before each run this script labels the objects as the ring of that
  many shards assigns them (the sharder then finds nothing to do), so the figure is the controllers': moving
  objects between live shards goes at the old shards' write rate (each acknowledges a drain with a write).
* memory: each of 3 shards' cached objects and RSS above its empty baseline, / one unsharded replica's (all
  objects). The leader's RSS includes the sharder's metadata-only cache of every object.
* rebalance: SIGKILL one of 3 replicas (not the leader); seconds until a survivor reconciled every one of its
  objects, / (leaseDuration + 2 s); objects that changed shard, / (total / N).

Replicas are this script with ``--replica``; they record each reconcile's start (CLOCK_MONOTONIC, shared by
the host's processes) and their cache size and RSS in a file.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _verdict import Verdicts

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

LD, RD, RP = 8.0, 6.0, 1.0  # generous: 8 engineers' tests share these 2 cores
QPS = 50.0
WINDOW = 8.0
RING, SHARD = "bench", "shard.sharding.componentbase.io/bench"
TARGETS = {"scale2": 1.8, "scale3": 2.6, "memory": 0.4, "rebalance": 1.0, "moved": 1.25}


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _cpu(pid: int) -> float:
    """A process's user + system CPU seconds, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def replica(url: str, name: str, out: str, mode: str) -> int:
    """One replica: ``sharded``, ``unsharded`` or ``record`` (sharded, reconciles write nothing)."""
    import kubernetes.client as kc

    from componentbase.client import new_api_client
    from componentbase.componentconfig import ClientConnectionConfiguration, LeaderElectionConfiguration
    from componentbase.controller import Manager, Request, ShardingConfig
    from componentbase.informers import strip_managed_fields
    from componentbase.util import Duration

    cfg = kc.Configuration()
    cfg.host = url
    client = new_api_client(ClientConnectionConfiguration(qps=QPS, burst=10), url)
    lease_client = kc.ApiClient(cfg)
    election = LeaderElectionConfiguration(leader_elect=True, resource_name=f"{RING}-leader",
                                           resource_namespace="default", lease_duration=Duration(f"{LD}s"),
                                           renew_deadline=Duration(f"{RD}s"), retry_period=Duration(f"{RP}s"))
    sharding = None if mode == "unsharded" else ShardingConfig(ring=RING, kinds=[("v1", "ConfigMap")], shard=name,
                                                              selector="bench=true")
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    rss0 = _rss()
    mgr = Manager(client, leader_election=election, lease_client=lease_client, identity=name, sharding=sharding,
                  transform=strip_managed_fields)
    cms = mgr.informer("v1", "ConfigMap", label_selector="bench=true")
    tag = f"{name}-{os.getpid()}"
    lines: list[str] = []
    lock = threading.Lock()

    def reconcile(req: Request) -> None:
        with lock:
            lines.append(f"r {time.monotonic():.4f} {req.key}\n")
        cm = cms.get(req.key)
        if mode != "record" and cm is not None and (cm.get("data") or {}).get("by") != tag:
            mgr.objects.patch(cm, {"data": {"by": tag}})

    mgr.controller("bench", reconcile).watch(cms)

    class RingChanges(logging.Handler):  # when the sharder saw the ring change, on the clock reconciles use
        def emit(self, record: logging.LogRecord) -> None:
            if "live shards" in record.getMessage() and isinstance(record.args, tuple):
                live = record.args[1] if isinstance(record.args[1], list) else []  # the sharder's sorted shards
                with lock:
                    lines.append(f"ring {time.monotonic():.4f} {len(live)}\n")

    sharding_log = logging.getLogger("componentbase.controller.sharding")
    sharding_log.addHandler(RingChanges())
    sharding_log.setLevel(logging.INFO)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def report() -> None:
        while not stop.wait(0.5):
            with lock:
                batch, lines[:] = "".join(lines), []
            os.write(fd, (batch + f"mem {len(cms.list())} {_rss() - rss0} {int(mgr.is_leading())}\n").encode())

    threading.Thread(target=report, daemon=True).start()
    return mgr.run(stop)


class Replica:
    def __init__(self, url: str, workdir: Path, name: str, mode: str) -> None:
        self.name = name
        self.out = workdir / f"{name}-{mode}-{time.monotonic_ns()}.log"
        self._read = 0
        self._lines: list[list[str]] = []
        self._reconciles: list[tuple[float, str]] = []
        self.popen = subprocess.Popen([sys.executable, __file__, "--replica", url, name, str(self.out), mode],
                                      stdout=subprocess.DEVNULL, stderr=self.out.with_suffix(".err").open("wb"))

    def lines(self) -> list[list[str]]:
        """The file's complete lines, split; read on from where the last call stopped (this process serves the
        API too: re-reading every line twice a second took its time from the server)."""
        if self.out.exists():
            with self.out.open("rb") as f:
                f.seek(self._read)
                data = f.read()
            whole = data[:data.rfind(b"\n") + 1]
            self._read += len(whole)
            new = [ln.split() for ln in whole.decode().splitlines()]
            self._lines.extend(p for p in new if p and p[0] != "r")
            self._reconciles.extend((float(p[1]), p[2]) for p in new if p and p[0] == "r")
        return self._lines

    def reconciles(self, since: int = 0) -> list[tuple[float, str]]:
        """The reconciles recorded (from the ``since``-th on): kept apart from the other lines, which the
        other readers go through whole, as the rebalance's wait reads only the new ones (this process is the
        API server too: every pass over every reconcile took its time from the server being measured)."""
        self.lines()
        return self._reconciles[since:]

    def ring_size(self) -> int:
        """How many live shards this replica's sharder last saw (0 if it runs none)."""
        rings = [p for p in self.lines() if p and p[0] == "ring"]
        return int(rings[-1][2]) if rings else 0

    def memory(self) -> tuple[int, int, bool]:
        last = [p for p in self.lines() if p and p[0] == "mem"][-1]
        return int(last[1]), int(last[2]), last[3] == "1"

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(15)
        except subprocess.TimeoutExpired:
            self.popen.kill()


def wait_for(pred: Callable[[], object], timeout: float, what: str, replicas: Sequence[Replica] = (),
             every: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        dead = [r for r in replicas if r.popen.poll() is not None]
        if dead:
            said = (dead[0].out.with_suffix(".err").read_text(errors="replace").strip().splitlines() or [""])[-1]
            raise SystemExit(f"replica {', '.join(r.name for r in dead)} exited while waiting for {what}: {said}")
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(every)


def labels(objects: Any) -> dict[str, str]:
    return {f"default/{o['metadata']['name']}": (o["metadata"].get("labels") or {}).get(SHARD, "")
            for o in objects.list("v1", "ConfigMap", "default", label_selector="bench=true")}


def settled(objects: Any, shards: list[str]) -> bool:
    from componentbase.controller import HashRing

    ring = HashRing(shards)
    return all(shard == ring.shard_for(key) for key, shard in labels(objects).items())


def assign(objects: Any, shards: list[str]) -> None:
    """Label every object as the ring of ``shards`` assigns it (what the sharder would write)."""
    from componentbase.controller import HashRing

    ring = HashRing(shards)
    wrong = [k for k, shard in labels(objects).items() if shard != ring.shard_for(k)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda k: objects.patch({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": k.split("/")[1], "namespace": "default"}}, {"metadata": {"labels": {SHARD: ring.shard_for(k)}}}),
            wrong))


def held(objects: Any, shards: list[str]) -> bool:
    leases = objects.list("coordination.k8s.io/v1", "Lease", "default",
                          label_selector=f"sharding.componentbase.io/ring={RING}")
    return {str(lease["spec"].get("holderIdentity") or "") for lease in leases} >= set(shards)


def throughput(url: str, workdir: Path, objects: Any, n: int) -> tuple[float, list[Replica]]:
    """Aggregate reconciles/s of ``n`` sharded replicas over WINDOW seconds once each holds its Lease."""
    names = [f"s{i}" for i in range(n)]
    assign(objects, names)
    replicas = [Replica(url, workdir, name, "sharded") for name in names]
    wait_for(lambda: held(objects, names), 120, f"{n} shard leases", replicas)
    time.sleep(1.0)  # the caches' lists
    start = time.monotonic()
    wait_for(lambda: time.monotonic() > start + WINDOW, WINDOW + 5, "the window", replicas)
    count = sum(1 for r in replicas for t, _ in r.reconciles() if start <= t < start + WINDOW)
    if not settled(objects, names):
        print(f"note: the ring of {n} moved objects during the window", flush=True)
    return count / WINDOW, replicas


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--replica", nargs=4, metavar=("URL", "NAME", "OUT", "MODE"), help=argparse.SUPPRESS)
    p.add_argument("--objects", type=int, default=10_000)
    p.add_argument("--part", choices=("all", "memory", "rebalance"), default="all",
                   help="memory: only the 3-replica run and the unsharded one; rebalance: only the SIGKILL")
    args = p.parse_args()
    if args.replica:
        code = replica(*args.replica)
        os._exit(code)
    from componentbase.client import ObjectClient
    from componentbase.testing import LoopbackAPIServer

    print(f"{args.objects} ConfigMaps; leaseDuration={LD}s renewDeadline={RD}s retryPeriod={RP}s; "
          f"{QPS:g} requests/s per replica", flush=True)
    verdicts = Verdicts()
    with LoopbackAPIServer() as server, tempfile.TemporaryDirectory() as tmp:
        workdir, objects = Path(tmp), ObjectClient(server.api_client())
        payload = "x" * 1024
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda i: objects.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                "name": f"bench-{i}", "namespace": "default", "labels": {"bench": "true"}},
                "data": {"payload": payload}}), range(args.objects)))
        rates: dict[int, float] = {}
        memory: list[tuple[int, int, bool]] = []
        for n in {"all": (1, 2, 3), "memory": (3,), "rebalance": ()}[args.part]:
            rates[n], replicas = throughput(server.url, workdir, objects, n)
            if n == 3:
                memory = [r.memory() for r in replicas]
            for r in replicas:
                r.stop()
        if memory:
            solo = Replica(server.url, workdir, "solo", "unsharded")
            wait_for(lambda: solo.lines() and solo.memory()[0] == args.objects, 120,
                     "the unsharded replica's cache", [solo])
            time.sleep(1.0)
            unsharded = solo.memory()
            solo.stop()
        if args.part != "memory":
            took, noticed, moved = rebalance(server.url, workdir, objects)
    if 1 in rates:
        report_throughput(rates, verdicts)
    if memory:
        report_memory(memory, unsharded, args.objects, verdicts)
    if args.part != "memory":
        print(f"rebalance: {took:.2f}s after SIGKILL (the sharder saw the Lease expire after {noticed:.2f}s, the "
              f"last object reconciled {took - noticed:.2f}s later); {moved} of {args.objects} objects changed shard")
        verdicts.at_most("rebalance after SIGKILL / (leaseDuration + 2 s)", took / (LD + 2.0), TARGETS["rebalance"])
        verdicts.at_most("objects changed shard / (objects / 3)", moved / (args.objects / 3), TARGETS["moved"])
    return verdicts.exit_code


def report_throughput(rates: dict[int, float], verdicts: Verdicts) -> None:
    print(f"{'replicas':<10}{'reconciles/s':>14}{'x one':>8}")
    for n, rate in rates.items():
        print(f"{n:<10}{rate:>14.1f}{rate / rates[1]:>8.2f}")
    verdicts.at_least("throughput, 2 replicas / 1", rates[2] / rates[1], TARGETS["scale2"])
    verdicts.at_least("throughput, 3 replicas / 1", rates[3] / rates[1], TARGETS["scale3"])


def report_memory(memory: list[tuple[int, int, bool]], unsharded: tuple[int, int, bool], objects: int,
                  verdicts: Verdicts) -> None:
    print(f"{'memory':<10}{'cached':>8}{'RSS MB':>8}{'x unsharded':>13}")
    print(f"{'unsharded':<10}{unsharded[0]:>8}{unsharded[1] / 2**20:>8.1f}")
    for i, (cached, rss, leader) in enumerate(memory):
        print(f"{f's{i}' + (' (leader)' if leader else ''):<14}{cached:>4}{rss / 2**20:>8.1f}"
              f"{rss / max(unsharded[1], 1):>13.2f}")
    verdicts.at_most("cached objects per shard / unsharded, max", max(c for c, _, _ in memory) / objects,
                     TARGETS["memory"])
    verdicts.at_most("RSS above baseline per shard / unsharded, max", max(r for _, r, _ in memory) /
                     max(unsharded[1], 1), TARGETS["memory"])


def rebalance(url: str, workdir: Path, objects: Any) -> tuple[float, float, int]:
    """Three record-only replicas; one that does not lead SIGKILLed: (seconds until survivors reconciled all its
    objects, seconds until the sharder saw its Lease expire, objects that changed shard)."""
    replicas = [Replica(url, workdir, f"s{i}", "record") for i in range(3)]
    try:
        wait_for(lambda: held(objects, ["s0", "s1", "s2"]), 120, "3 shard leases", replicas)
        wait_for(lambda: all(r.lines() and any(p[0] == "mem" for p in r.lines()) for r in replicas), 60, "reports",
                 replicas)
        wait_for(lambda: any(r.memory()[2] for r in replicas), 60, "a leader", replicas)
        wait_for(lambda: settled(objects, ["s0", "s1", "s2"]), 120, "the ring of 3 to settle", replicas, every=2.0)
        # The labels may be the ring of 3's already (the memory run's): the sharder must also have seen all three.
        wait_for(lambda: any(r.ring_size() == 3 for r in replicas), 60, "the sharder's ring of 3", replicas)
        time.sleep(2.0)
        before = labels(objects)
        victim = next(r for r in replicas if not r.memory()[2])
        survivors = sorted((r for r in replicas if r is not victim), key=lambda r: not r.memory()[2])
        theirs = {k for k, s in before.items() if s == victim.name}
        samples: list[tuple[float, list[float]]] = []  # (when, CPU seconds of the API server and each survivor)
        sampling = threading.Event()

        def sample() -> None:
            while not sampling.wait(0.05):
                samples.append((time.monotonic(), [time.process_time(), *(_cpu(r.popen.pid) for r in survivors)]))

        threading.Thread(target=sample, daemon=True).start()
        killed = time.monotonic()
        victim.popen.send_signal(signal.SIGKILL)

        seen: dict[str, float] = {}
        read = [len(r.reconciles()) for r in survivors]

        def done() -> float | None:
            for i, r in enumerate(survivors):
                new = r.reconciles(read[i])
                read[i] += len(new)
                seen.update((k, t) for t, k in new if t > killed and k in theirs and k not in seen)
            return max(seen.values()) if len(seen) == len(theirs) else None

        wait_for(done, 180, "the survivors to reconcile the victim's objects", survivors, every=0.5)
        last = done()
        assert last is not None
        after = labels(objects)
        rings = [float(p[1]) for r in survivors for p in r.lines() if p and p[0] == "ring"]
        noticed = min((t for t in rings if t > killed), default=float("nan"))
        sampling.set()
        window = [cpu for t, cpu in samples if noticed <= t <= last + 0.05]
        if len(window) > 1:
            used = [b - a for a, b in zip(window[0], window[-1], strict=True)]
            print(f"CPU seconds from the expiry to the last reconcile: API server {used[0]:.2f}, surviving replicas "
                  f"(the leader first) {', '.join(f'{u:.2f}' for u in used[1:])}", flush=True)
        return last - killed, noticed - killed, sum(1 for k in before if before[k] != after.get(k))
    finally:
        for r in replicas:
            r.stop()


if __name__ == "__main__":
    sys.exit(main())
