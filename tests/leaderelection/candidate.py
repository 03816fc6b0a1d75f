"""One election candidate in its own process, for tests that SIGKILL leaders.

It appends ``<event> <CLOCK_MONOTONIC seconds>`` lines to ``--out`` with unbuffered writes, so a
SIGKILL loses nothing already recorded. ``start`` is written when ``on_started_leading`` runs and
``end`` when its stop event fires, i.e. the leading interval as the work itself saw it. SIGTERM is
a clean stop (the lease is released with ``--release``).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--identity", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--lease", default="kube-system/candidates")
    p.add_argument("--lease-duration", type=float, required=True)
    p.add_argument("--renew-deadline", type=float, required=True)
    p.add_argument("--retry-period", type=float, required=True)
    p.add_argument("--release", action="store_true")
    args = p.parse_args()

    fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def record(event: str) -> None:
        os.write(fd, f"{event} {time.monotonic():.6f}\n".encode())

    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format=f"%(asctime)s {args.identity} %(name)s %(message)s")
    import kubernetes.client as kc

    from componentbase.leaderelection import (
        LeaderCallbacks,
        LeaderElectionConfig,
        LeaderElector,
        LeaseLock,
    )

    cfg = kc.Configuration()
    cfg.host = args.url
    api = kc.ApiClient(cfg)
    namespace, name = args.lease.split("/")

    def lead(stop: threading.Event) -> None:
        record("start")
        stop.wait()
        record("end")

    config = LeaderElectionConfig(
        lock=LeaseLock(namespace, name, api),
        identity=args.identity,
        callbacks=LeaderCallbacks(on_started_leading=lead, on_stopped_leading=lambda: record("stopped")),
        lease_duration=args.lease_duration,
        renew_deadline=args.renew_deadline,
        retry_period=args.retry_period,
        release_on_cancel=args.release,
    )
    elector = LeaderElector(config)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    record("ready")
    # Campaign again after losing the lease, as a restarted replica would, until told to stop.
    while not stop.is_set():
        elector.run(stop)
    record("exit")
    return 0


if __name__ == "__main__":
    code = main()
    # A call abandoned at its deadline may still be blocked in the client; end like a Go program.
    logging.shutdown()
    os._exit(code)
