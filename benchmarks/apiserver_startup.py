"""Start-up time of the loopback API server with every built-in group registered (target: ``TARGET`` s).

Measures, as medians: ``LoopbackAPIServer().start()`` in process (the pytest fixture's cost); the same
with CRDs loaded from a folder (``crd_dirs``); the first aggregated discovery answer, which builds the
document for all groups; and ``python -m componentbase.testing.apiserver`` until it prints its URL
(interpreter and imports included). Run: ``python benchmarks/apiserver_startup.py [--runs 21] [--crds 20]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from _verdict import Verdicts

from componentbase.testing import LoopbackAPIServer

TARGET = 0.5  # seconds
ACCEPT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"


def _crd(i: int) -> dict[str, object]:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "default": 1}, "size": {"type": "string", "enum": ["s", "l"]}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"things{i}.bench.example.com"},
            "spec": {"group": "bench.example.com", "scope": "Namespaced",
                     "names": {"plural": f"things{i}", "kind": f"Thing{i}"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema},
                                   "subresources": {"status": {}}}]}}


def _median(runs: int, once: Callable[[], float]) -> float:
    return statistics.median(once() for _ in range(runs))


def _in_process(crd_dirs: list[str]) -> float:
    start = time.perf_counter()
    server = LoopbackAPIServer(crd_dirs=crd_dirs).start()
    took = time.perf_counter() - start
    server.stop()
    return took


def _first_discovery() -> float:
    with LoopbackAPIServer() as server:
        start = time.perf_counter()
        req = urllib.request.Request(server.url + "/apis", headers={"Accept": ACCEPT})
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()
        return time.perf_counter() - start


def _cli() -> float:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "componentbase.testing.apiserver"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    proc.stdout.readline()
    took = time.perf_counter() - start
    proc.terminate()
    proc.wait(10)
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--crds", type=int, default=20, help="CRDs in the folder for the crd_dirs figure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.crds):
            Path(tmp, f"thing{i}.yaml").write_text(json.dumps(_crd(i)))
        _in_process([tmp])  # warm the YAML import once, as a test session would
        bare = _median(args.runs, lambda: _in_process([]))
        with_crds = _median(args.runs, lambda: _in_process([tmp]))
    discovery = _median(args.runs, _first_discovery)
    cli = _median(max(3, args.runs // 3), _cli)
    worst = max(bare, with_crds)
    print(f"LoopbackAPIServer().start(), all built-in groups:   {bare * 1000:7.1f} ms")
    print(f"  ... with {args.crds} CRDs from crd_dirs:                {with_crds * 1000:7.1f} ms")
    print(f"first aggregated discovery GET /apis:               {discovery * 1000:7.1f} ms")
    print(f"python -m componentbase.testing.apiserver to URL:   {cli * 1000:7.1f} ms (pid start and imports)")
    verdicts = Verdicts()
    verdicts.at_most("start-up, the slower of the two in process", worst * 1000, TARGET * 1000, unit=" ms", digits=1)
    return verdicts.exit_code


if __name__ == "__main__":
    sys.exit(main())
