"""How fast a shared informer ingests objects, as a ratio to the raw list/watch rate measured in the same run.

Two workloads on one loopback API server (in this process, so both sides share its cost):

- **list**: an informer syncing 10,000 pods (pages of 500) from ``start`` to ``has_synced``, and until a
  handler has been handed every add, against the same paged list requests read and parsed with no cache;
- **watch burst**: 2,000 pod updates made while the informer's watch is held back (a stalled watch
  request), then released: time until the cache holds the last update and the handler saw all 2,000,
  against a bare watch from the same resourceVersion whose 2,000 lines are read and parsed (one ``json.loads``
  per chunk, as the informer does) with no cache.

Rounds alternate raw and informer; figures are the best round of each (the least disturbed by other
work on the machine), with the median beside them. Objects alive before the measurements (the
server's store, the synced cache) are frozen out of the garbage collector, which otherwise adds full
collections of 100+ ms to random rounds of either side. Ratio = informer rate / raw rate (1.0: the cache
and handlers cost nothing; the informer cannot beat the same requests read raw).
Run from the repository root: ``python benchmarks/informer.py [--pods N] [--updates N] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import threading
import time
from typing import Any

from componentbase.informers import InformerFactory
from componentbase.testing import LoopbackAPIServer

NAMESPACE = "bench"
PAGE = 500


def _pod(i: int) -> dict[str, Any]:
    return {"metadata": {"name": f"pod-{i:05d}", "labels": {"app": "bench", "shard": str(i % 16)}},
            "spec": {"schedulerName": "default-scheduler",
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                     "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}


def _call(api: Any, method: str, path: str, body: Any, content_type: str = "application/json") -> bytes:
    """A request through the official client's ApiClient, skipping model validation (seeding only)."""
    resp = api.call_api(*api.param_serialize(method, path, body=body, header_params={"Content-Type": content_type}))
    resp.read()
    if resp.status >= 300:
        raise RuntimeError(f"{method} {path}: {resp.status} {resp.data[:200]!r}")
    return bytes(resp.data)


def seed(api: Any, pods: int) -> None:
    _call(api, "POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})

    def work(first: int) -> None:
        for i in range(first, pods, 4):
            _call(api, "POST", f"/api/v1/namespaces/{NAMESPACE}/pods", _pod(i))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def update_burst(api: Any, updates: int, pods: int, round_: int) -> str:
    """Patch ``updates`` pods; returns the resourceVersion of the last patch."""
    last = ""
    for i in range(updates):
        name = f"pod-{(i * 7) % pods:05d}"
        body = {"metadata": {"annotations": {"bench/round": str(round_), "bench/i": str(i)}}}
        raw = _call(api, "PATCH", f"/api/v1/namespaces/{NAMESPACE}/pods/{name}", body,
                    "application/merge-patch+json")
        last = json.loads(raw)["metadata"]["resourceVersion"]
    return last


# --- raw: the same requests, no cache --------------------------------------------------------------

def raw_list(v1: Any) -> tuple[float, int, str]:
    start = time.perf_counter()
    token, count, rv = "", 0, ""
    while True:
        kw = {"_continue": token} if token else {}
        doc = json.loads(v1.list_namespaced_pod(NAMESPACE, limit=PAGE, _preload_content=False, **kw).data)
        count += len(doc["items"])
        rv = doc["metadata"]["resourceVersion"]
        token = doc["metadata"].get("continue") or ""
        if not token:
            return time.perf_counter() - start, count, rv


def raw_watch(v1: Any, since: str, events: int) -> float:
    start = time.perf_counter()
    resp = v1.list_namespaced_pod(NAMESPACE, watch=True, resource_version=since, allow_watch_bookmarks=True,
                                  timeout_seconds=60, _preload_content=False)
    seen, buffer = 0, b""
    for chunk in resp.stream(amt=None, decode_content=False):
        lines = (buffer + chunk).split(b"\n")
        buffer = lines.pop()
        # One loads per chunk, as the informer parses: the baseline is the fastest plain reading we know.
        batch = json.loads(b"[" + b",".join(line for line in lines if line) + b"]")
        seen += sum(1 for ev in batch if ev["type"] != "BOOKMARK")
        if seen >= events:
            break
    elapsed = time.perf_counter() - start
    resp.close()
    return elapsed


# --- the informer ----------------------------------------------------------------------------------

class Counter:
    def __init__(self) -> None:
        self.adds = 0
        self.updates = 0
        self.done = threading.Event()
        self.want_adds = 0
        self.want_updates = 0

    def on_add(self, obj: dict[str, Any]) -> None:
        self.adds += 1
        if self.adds == self.want_adds:
            self.done.set()

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self.updates += 1
        if self.updates == self.want_updates:
            self.done.set()


def informer_list(api: Any, pods: int) -> tuple[float, float]:
    """Seconds to has_synced, and until the handler has been given every add."""
    stop = threading.Event()
    counter = Counter()
    counter.want_adds = pods
    informer = InformerFactory(api, page_size=PAGE).pods(NAMESPACE)
    informer.add_event_handler(on_add=counter.on_add)
    start = time.perf_counter()
    informer.start(stop)
    informer.wait_for_sync(120)
    synced = time.perf_counter() - start
    counter.done.wait(120)
    handled = time.perf_counter() - start
    assert len(informer.indexer) == pods
    stop.set()
    informer.join(5)
    return synced, handled


def informer_burst(server: LoopbackAPIServer, api: Any, informer: Any, counter: Counter, updates: int,
                   pods: int, round_: int) -> tuple[float, float, str]:
    """Hold the informer's watch back, make the burst, release it: seconds to cache and to handlers."""
    since = informer.last_sync_resource_version
    stalled = server.faults.counts.get("stall", 0)
    server.faults.set(stall=120, verbs=["watch"], resources=["pods"])
    server.faults.close_watches()
    deadline = time.monotonic() + 30
    while server.faults.counts.get("stall", 0) <= stalled and time.monotonic() < deadline:
        time.sleep(0.005)
    last_rv = update_burst(api, updates, pods, round_)
    counter.updates, counter.want_updates = 0, updates
    counter.done.clear()
    last_key = f"{NAMESPACE}/pod-{((updates - 1) * 7) % pods:05d}"
    start = time.perf_counter()
    server.faults.clear()
    while (informer.get(last_key) or {}).get("metadata", {}).get("resourceVersion") != last_rv:
        time.sleep(0.0005)
    cached = time.perf_counter() - start
    counter.done.wait(120)
    handled = time.perf_counter() - start
    return cached, handled, since


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--updates", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    from kubernetes import client

    with LoopbackAPIServer(watch_history=args.pods + args.updates * (args.rounds + 1) + 10) as server:
        api = server.api_client()
        v1 = client.CoreV1Api(api)
        print(f"seeding {args.pods} pods ...", file=sys.stderr)
        seed(api, args.pods)
        # The server's store and history hold ~10^6 objects; freezing them keeps the collector's full passes
        # (100+ ms each, hitting raw and informer rounds at random) out of the figures.
        gc.collect()
        gc.freeze()
        raw_l, inf_sync, inf_handled = [], [], []
        for _ in range(args.rounds):
            elapsed, count, _ = raw_list(v1)
            assert count == args.pods
            raw_l.append(elapsed)
            synced, handled = informer_list(api, args.pods)
            inf_sync.append(synced)
            inf_handled.append(handled)

        stop = threading.Event()
        counter = Counter()
        informer = InformerFactory(api, page_size=PAGE).pods(NAMESPACE)
        informer.add_event_handler(on_update=counter.on_update)
        informer.start(stop)
        informer.wait_for_sync(120)
        gc.collect()
        gc.freeze()
        time.sleep(1.1)  # let the first watch live past the "very short watch" guard
        raw_w, inf_cached, inf_w_handled = [], [], []
        for round_ in range(args.rounds):
            cached, handled, since = informer_burst(server, api, informer, counter, args.updates, args.pods,
                                                    round_)
            inf_cached.append(cached)
            inf_w_handled.append(handled)
            raw_w.append(raw_watch(v1, since, args.updates))
            print(f"  round {round_}: raw {raw_w[-1] * 1000:.1f} ms, informer {cached * 1000:.1f} ms", file=sys.stderr)
            time.sleep(1.1)
        stop.set()
        informer.join(5)
        api.close()

    def rate(n: int, seconds: list[float]) -> float:
        return n / min(seconds)

    def median_rate(n: int, seconds: list[float]) -> float:
        return n / statistics.median(seconds)

    r_list, m_list = rate(args.pods, raw_l), median_rate(args.pods, raw_l)
    print(f"list  {args.pods} pods (pages of {PAGE}), best of {args.rounds} (median):")
    print(f"  raw list+parse           {r_list:8.0f} objects/s ({m_list:.0f})")
    for label, times in (("informer to has_synced", inf_sync), ("informer to handlers", inf_handled)):
        r, m = rate(args.pods, times), median_rate(args.pods, times)
        print(f"  {label:24} {r:8.0f} objects/s ({m:.0f})   ratio {r / r_list:.2f} ({m / m_list:.2f})")
    r_watch, m_watch = rate(args.updates, raw_w), median_rate(args.updates, raw_w)
    print(f"watch burst of {args.updates} updates, best of {args.rounds} (median):")
    print(f"  raw watch+parse          {r_watch:8.0f} events/s ({m_watch:.0f})")
    for label, times in (("informer to cache", inf_cached), ("informer to handlers", inf_w_handled)):
        r, m = rate(args.updates, times), median_rate(args.updates, times)
        print(f"  {label:24} {r:8.0f} events/s ({m:.0f})    ratio {r / r_watch:.2f} ({m / m_watch:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
