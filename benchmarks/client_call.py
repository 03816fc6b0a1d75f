"""What pydantic's argument validation costs a call with a dict body, and what ``componentbase.client.request`` saves.

Creates Events on a loopback API server in this process, in alternating rounds: through the generated
``CoreV1Api.create_namespaced_event`` (which validates the dict into a ``CoreV1Event`` model and dumps it
back) and through ``componentbase.client.request`` (the same public ``param_serialize`` + ``call_api`` path,
without the model). Reported: CPU per call of the calling thread only (``time.thread_time``), so the server's
threads do not count; best round and median. Run from the repository root:
``python benchmarks/client_call.py [--calls N] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client

from componentbase.client import request
from componentbase.testing import LoopbackAPIServer


def _event(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "type": "Normal", "reason": "Scheduled",
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p", "uid": "u", "apiVersion": "v1"},
            "message": "Successfully assigned default/p to n1", "source": {"component": "bench", "host": "h"},
            "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:00Z", "count": 1,
            "reportingComponent": "bench"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with LoopbackAPIServer() as server:
        api = server.api_client()
        core = client.CoreV1Api(api)

        def generated(name: str) -> None:
            core.create_namespaced_event("default", _event(name), _preload_content=False, _request_timeout=10).read()

        def direct(name: str) -> None:
            request(api, "POST", "/api/v1/namespaces/{namespace}/events", path_params={"namespace": "default"},
                    body=_event(name), timeout=10).read()

        ways: dict[str, Callable[[str], None]] = {"generated method": generated, "client.request": direct}
        for label, way in ways.items():  # warm up: imports, connections, pydantic's deferred build
            for i in range(50):
                way(f"warm-{label[0]}-{i}")
        gc.freeze()
        cpu: dict[str, list[float]] = {label: [] for label in ways}
        for r in range(args.rounds):
            for label, way in ways.items():
                start = time.thread_time()
                for i in range(args.calls):
                    way(f"{label[0]}-{r}-{i}")
                cpu[label].append((time.thread_time() - start) / args.calls * 1e6)
        api.close()
    for label, values in cpu.items():
        best, median = min(values), statistics.median(values)
        print(f"{label:18s} client CPU per call: best {best:4.0f} us, median {median:4.0f} us")
    saved = statistics.median(cpu["generated method"]) - statistics.median(cpu["client.request"])
    print(f"validation costs {saved:.0f} us per call (median)")


if __name__ == "__main__":
    main()
