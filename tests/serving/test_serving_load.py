"""Load: 8 concurrent keep-alive clients for ~4 s on /healthz and an authorized /metrics, no request failing."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from componentbase.serving import start_serving
from componentbase.testing import LoopbackAPIServer

from .conftest import ALICE, Background, Client, tls_context
from .test_serving_health import serving_config

pytestmark = pytest.mark.integration

CLIENTS = 8
DURATION = 4.0


def test_eight_clients_for_four_seconds_without_a_failed_request(apiserver: LoopbackAPIServer) -> None:
    srv = start_serving(serving_config(apiserver.kubeconfig_path), threading.Event())
    deadline = time.monotonic() + DURATION

    def hammer(n: int) -> Counter[str]:
        seen: Counter[str] = Counter()
        client = Client(srv.port, tls_context(None))
        try:
            while time.monotonic() < deadline:
                path, token = ("/healthz", None) if seen.total() % 2 == n % 2 else ("/metrics", ALICE)
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
            totals.update(w.join(DURATION + 20))
    finally:
        srv.stop()
    failed = {k: v for k, v in totals.items() if not k.endswith(" ok")}
    assert not failed, failed
    assert totals["/healthz ok"] > CLIENTS and totals["/metrics ok"] > CLIENTS, totals
