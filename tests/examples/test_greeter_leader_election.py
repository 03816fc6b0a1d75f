"""A component's work runs only while it leads: two hello replicas against the loopback API server."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer, eventually

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
TIMING = ["--leader-elect-lease-duration=2s", "--leader-elect-renew-deadline=1500ms",
          "--leader-elect-retry-period=200ms"]


class Replica:
    """One ``python -m componentbase_examples.greeter`` process, its stderr collected line by line."""

    def __init__(self, config: Path, name: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "componentbase_examples.greeter", f"--config={config}", f"--name={name}",
             "--leader-elect", *TIMING], cwd=ROOT, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, args=(self.proc.stderr,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str] | None) -> None:
        assert stream is not None
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def greeted(self) -> bool:
        return any("Hello, " in line for line in self.lines)

    def wait_for(self, text: str, timeout: float) -> None:
        """Until a line of stderr contains ``text``."""
        try:
            eventually(lambda: any(text in line for line in self.lines), timeout, what=f"{text!r} on stderr")
        except AssertionError as err:
            raise AssertionError(f"{err}; stderr was: {self.lines}") from None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


def lease_holder(server: LoopbackAPIServer) -> str:
    with server.api_client() as api:
        return str(client.CoordinationV1Api(api).read_namespaced_lease("hello", "default").spec.holder_identity or "")


@pytest.fixture
def server() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer() as s:
        yield s


@pytest.fixture
def config(tmp_path: Path, server: LoopbackAPIServer) -> Path:
    path = tmp_path / "hello.yaml"
    path.write_text(f"""apiVersion: hello.example.com/v1alpha1
kind: HelloConfiguration
interval: 100ms
clientConnection:
  kubeconfig: {server.kubeconfig_path}
""")
    return path


def test_only_the_leader_works_and_sigterm_hands_over(config: Path, server: LoopbackAPIServer) -> None:
    a = Replica(config, "a")
    try:
        a.wait_for("Hello, a!", 15)
        b = Replica(config, "b")
        try:
            b.wait_for("attempting to acquire leader lease", 15)
            time.sleep(1.0)
            assert not b.greeted(), "a second replica worked while the first one led"
            a.proc.send_signal(signal.SIGTERM)
            assert a.proc.wait(10) == 0
            assert any("Requested to terminate, exiting" in line for line in a.lines), a.lines
            # Released on cancel: a no longer holds the lease once it has exited, so b need not wait out the
            # 2 s lease (an unreleased lease would name a until b took it over, at least 1.6 s after SIGTERM).
            # The lease may already name b, which polls every 0.2 s.
            a_identity = next(line.split("leader election candidate ")[1].split()[0] for line in a.lines
                              if "leader election candidate " in line)
            assert lease_holder(server) != a_identity
            b.wait_for("Hello, b!", 5)
        finally:
            b.stop()
    finally:
        a.stop()


def test_losing_the_lease_stops_the_work_and_exits_non_zero(config: Path, server: LoopbackAPIServer) -> None:
    a = Replica(config, "a")
    try:
        a.wait_for("Hello, a!", 15)
        server.faults.set(stall=30.0, resources=("leases",))
        code = a.proc.wait(10)
        assert code == 1
        assert any("leaderelection lost" in line for line in a.lines), a.lines
    finally:
        server.faults.clear()
        a.stop()

