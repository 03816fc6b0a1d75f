"""Load: 8 concurrent keep-alive clients, 100 requests each on /healthz and an authorized /metrics, none failing."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from componentbase.serving import start_serving
from componentbase.testing import LoopbackAPIServer

from .conftest import ALICE, Background, Client, tls_context
from .test_serving_health import serving_config

pytestmark = pytest.mark.integration

CLIENTS = 8
#: Requests per client, half to each path: 800 in all, all 8 connections busy at once from the first request on.
REQUESTS = 100


def test_eight_concurrent_keep_alive_clients_without_a_failed_request(apiserver: LoopbackAPIServer) -> None:
    srv = start_serving(serving_config(apiserver.kubeconfig_path), threading.Event())
    start = threading.Barrier(CLIENTS)

    def hammer(n: int) -> Counter[str]:
        seen: Counter[str] = Counter()
        client = Client(srv.port, tls_context(None))
        start.wait(30)
        try:
            for i in range(REQUESTS):
                path, token = ("/healthz", None) if i % 2 == n % 2 else ("/metrics", ALICE)
                try:
                    status, body, _ = client.get(path, token)
                    ok = status == 200 and (body == "ok" if path == "/healthz" else "process_cpu" in body)
                    seen[f"{path} {'ok' if ok else status}"] += 1
                except OSError as err:
                    seen[f"{path} {type(err).__name__}"] += 1
                    client.close()
                    client = Client(srv.port, tls_context(None))
        finally:
            client.close()
        return seen

    try:
        workers = [Background(lambda n=n: hammer(n)) for n in range(CLIENTS)]
        totals: Counter[str] = Counter()
        for w in workers:
            totals.update(w.join(30))
    finally:
        srv.stop()
    failed = {k: v for k, v in totals.items() if not k.endswith(" ok")}
    assert not failed, failed
    assert totals == {"/healthz ok": CLIENTS * REQUESTS // 2, "/metrics ok": CLIENTS * REQUESTS // 2}, totals
