"""``python -m componentbase_examples.greeter.demo``: two replicas and a handover, on a loopback API server.

Nothing to set up: the API server is the embedded one from ``componentbase.testing``. Exits 0 when the
second replica took over after the first was stopped.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

from componentbase.testing import LoopbackAPIServer
from componentbase.util import wait_until

FAST = ["--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms"]


def start(name: str, config: Path, greeted: dict[str, float]) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "componentbase_examples.greeter", f"--config={config}",
                             f"--name={name}", "--leader-elect", *FAST], stderr=subprocess.PIPE, text=True)
    threading.Thread(target=relay, args=(name, proc.stderr, greeted), daemon=True).start()
    return proc


def relay(name: str, stream: IO[str] | None, greeted: dict[str, float]) -> None:
    """Show each replica's log lines under its name, noting when it first worked."""
    assert stream is not None
    for line in stream:
        if "Hello, " in line:
            greeted.setdefault(name, time.monotonic())
        print(f"{name:>9} | {line.rstrip()}", flush=True)


def main() -> int:
    greeted: dict[str, float] = {}
    with LoopbackAPIServer() as server, tempfile.TemporaryDirectory() as tmp:
        print(f"loopback API server at {server.url}")
        config = Path(tmp) / "hello.yaml"
        config.write_text("apiVersion: hello.example.com/v1alpha1\nkind: HelloConfiguration\ninterval: 1s\n"
                          f"clientConnection:\n  kubeconfig: {server.kubeconfig_path}\n")
        replicas = {name: start(name, config, greeted) for name in ("replica-a", "replica-b")}
        try:
            if not wait_until(lambda: bool(greeted), timeout=20):
                print("no replica became leader", file=sys.stderr)
                return 1
            time.sleep(2)
            leader = next(iter(greeted))
            other = next(n for n in replicas if n != leader)
            print(f"--- {leader} leads; {other} waits. Stopping {leader} with SIGTERM ---", flush=True)
            stopped_at = time.monotonic()
            replicas[leader].send_signal(signal.SIGTERM)
            code = replicas[leader].wait(15)
            if not wait_until(lambda: other in greeted, timeout=10):
                print(f"{other} did not take over", file=sys.stderr)
                return 1
            handover = greeted[other] - stopped_at
            time.sleep(2)
            replicas[other].send_signal(signal.SIGTERM)
            other_code = replicas[other].wait(15)
        finally:
            for proc in replicas.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    print(f"--- {leader} released the lease on SIGTERM (exit {code}); {other} took over in {handover:.2f}s "
          f"(exit {other_code}) ---")
    return 0 if code == 0 and other_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
