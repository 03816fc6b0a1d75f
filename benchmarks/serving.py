"""Serving throughput: authorized ``/configz`` (warm caches) as a ratio to unauthenticated ``/healthz``.

Target (issue 5): a ratio of at least ``TARGET``, i.e. delegated authentication and authorization cost
little once their answers are cached. The server runs in this process against a loopback API server; clients run in a
child process (this script with ``--client``), each thread on one keep-alive TLS connection, so the two
sides do not share a GIL. The two paths are measured in alternating rounds so machine noise hits both.
``/configz`` serves kube-scheduler's default config; the caller is not a master, so each request takes
the token cache and the SubjectAccessReview cache.

Run from the repository root: ``python benchmarks/serving.py [--rounds N] [--seconds S] [--threads T]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _verdict import Verdicts

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TARGET = 0.8
TOKEN = "bench-reader-token"
ADMIN = "bench-admin-token"


def client_main(port: int, path: str, token: str, seconds: float, threads: int) -> None:
    """Child process: hammer ``path`` from ``threads`` keep-alive connections; print requests/s."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    counts = [0] * threads
    errors = [0] * threads
    start = threading.Barrier(threads + 1)
    stop_at = [0.0]

    def worker(i: int) -> None:
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
        conn.request("GET", path, headers=headers)
        conn.getresponse().read()  # connect and handshake before the clock starts
        start.wait()
        while time.monotonic() < stop_at[0]:
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            resp.read()
            if resp.status == 200:
                counts[i] += 1
            else:
                errors[i] += 1

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    stop_at[0] = time.monotonic() + seconds
    began = time.monotonic()
    start.wait()
    for t in pool:
        t.join()
    elapsed = time.monotonic() - began
    print(json.dumps({"rps": sum(counts) / elapsed, "errors": sum(errors)}))


def measure(port: int, path: str, token: str, seconds: float, threads: int) -> float:
    out = subprocess.run([sys.executable, __file__, "--client", str(port), path, token, str(seconds), str(threads)],
                         capture_output=True, text=True, check=True, timeout=seconds + 60)
    result = json.loads(out.stdout)
    if result["errors"]:
        raise SystemExit(f"{path}: {result['errors']} requests failed")
    return float(result["rps"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--client", nargs=5, metavar=("PORT", "PATH", "TOKEN", "SECONDS", "THREADS"))
    args = parser.parse_args()
    if args.client:
        port, path, token, seconds, threads = args.client
        client_main(int(port), path, token, float(seconds), int(threads))
        return 0

    import attrs

    import componentbase
    from componentbase.serving import start_serving
    from componentbase.testing import LoopbackAPIServer
    from componentbase_examples.scheduler.options import SchedulerOptions

    folder = tempfile.mkdtemp(prefix="bench-serving-")
    tokens = os.path.join(folder, "tokens.csv")
    policy = os.path.join(folder, "policy.json")
    Path(tokens).write_text(f'{ADMIN},admin,1,"system:masters"\n{TOKEN},reader,2\n')
    Path(policy).write_text(json.dumps([{"user": "reader", "verbs": ["get"], "paths": ["/configz"]}]))
    with LoopbackAPIServer(token_auth_file=tokens, authorization_policy_file=policy) as api:
        opts = componentbase.ServingOptions.for_component(10259, "bench")
        opts.secure_serving.bind_address = "127.0.0.1"
        opts.authentication.kubeconfig = opts.authorization.kubeconfig = api.kubeconfig_path
        opts.authentication.cache_ttl = opts.authorization.allowed_ttl = componentbase.Duration("1h")
        registry = componentbase.serving.configz.Registry()
        registry.new("componentconfig").set(SchedulerOptions.default_component_config())
        config = componentbase.Config(configz_registry=registry)
        opts.apply_to(config)
        assert config.secure_serving is not None
        config.secure_serving = attrs.evolve(config.secure_serving, port=0)
        server = start_serving(config, threading.Event())
        try:
            measure(server.port, "/configz", TOKEN, 0.2, 1)  # warm the token and access-review caches
            health, configz = [], []
            for _ in range(args.rounds):
                health.append(measure(server.port, "/healthz", "", args.seconds, args.threads))
                configz.append(measure(server.port, "/configz", TOKEN, args.seconds, args.threads))
        finally:
            server.stop()
    h, c = statistics.median(health), statistics.median(configz)
    ratio = c / h
    print(f"/healthz (no token):                  {h:8.0f} req/s (median of {args.rounds}, {args.threads} conns)")
    print(f"/configz (token, SAR, warm caches):   {c:8.0f} req/s (median of {args.rounds}, {args.threads} conns)")
    verdicts = Verdicts()
    verdicts.at_least("ratio /configz / /healthz", ratio, TARGET)
    return verdicts.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
