"""Starting and stopping the demo's processes: virtual kubelets and scheduler replicas."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from componentbase.testing import free_port
from componentbase.util import wait_until
from componentbase_examples.demo.workload import SCHEDULER_NAME

LEASE_NAME = "componentbase-demo-scheduler"
LEASE_NAMESPACE = "default"


class Process:
    """One child process, its log in a file, stopped for sure by ``stop``."""

    def __init__(self, name: str, argv: list[str], workdir: Path, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.log_path = workdir / f"{name}.log"
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT,
                                     env={**os.environ, **(env or {})}, start_new_session=True)

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL: a crash, as far as the rest of the cluster can tell."""
        if self.alive():
            self.proc.kill()
            self.proc.wait()

    def stop(self, timeout: float = 10.0) -> int:
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._log.close()
        return int(self.proc.returncode)


def start_virtual_kubelet(index: int, kubeconfig: str, workdir: Path, cert: tuple[str, str]) -> tuple[Process, int]:
    port = free_port()
    node = f"demo-node-{index}"
    provider_config = workdir / f"{node}-provider.yaml"
    # The demo cleans up after itself: its nodes stop their pods' processes when they stop.
    provider_config.write_text(f"root: {workdir / node}\ncpu: '4'\nmemory: 8Gi\npods: '20'\n"
                               "stopContainersOnShutdown: true\n")
    argv = [sys.executable, "-m", "componentbase_examples.virtual_kubelet", "--provider=process",
            f"--provider-config={provider_config}", f"--kubeconfig={kubeconfig}", f"--nodename={node}",
            f"--listen-port={port}", f"--metrics-addr=127.0.0.1:{free_port()}"]
    env = {"VKUBELET_POD_IP": "127.0.0.1", "APISERVER_CERT_LOCATION": cert[0], "APISERVER_KEY_LOCATION": cert[1]}
    return Process(node, argv, workdir, env), port


def scheduler_config(kubeconfig: str, workdir: Path) -> Path:
    path = workdir / "scheduler.yaml"
    path.write_text(f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: {kubeconfig}
leaderElection:
  leaderElect: true
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 500ms
  resourceName: {LEASE_NAME}
  resourceNamespace: {LEASE_NAMESPACE}
profiles:
- schedulerName: {SCHEDULER_NAME}
""")
    return path


def start_scheduler(index: int, config: Path, workdir: Path) -> Process:
    argv = [sys.executable, "-m", "componentbase_examples.scheduler", f"--config={config}", "--bind-address=127.0.0.1",
            f"--secure-port={free_port()}"]
    return Process(f"scheduler-{index}", argv, workdir)


def identity_of(process: Process, timeout: float = 20.0) -> str:
    """The leader-election identity a replica logged when it became a candidate."""
    marker = "leader election candidate "
    found: list[str] = []

    def logged() -> bool:
        found.extend(line.split(marker, 1)[1].split()[0] for line in process.log_text().splitlines() if marker in line)
        return bool(found) or not process.alive()

    if wait_until(logged, timeout=timeout, interval=0.1) and found:
        return found[0]
    raise RuntimeError(f"{process.name} did not start campaigning; see {process.log_path}")
