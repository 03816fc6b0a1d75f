"""The scheduler's standby takeover: from SIGKILL of the leading replica to the new leader's first binding.

Two ``python -m componentbase_examples.scheduler`` replicas with leader election (leaseDuration 2 s,
renewDeadline 1.5 s, retryPeriod 0.2 s) against the loopback API server in this process.
Each round waits until a standby has synced its caches and campaigns, SIGKILLs the leader,
creates one pod at once and times until the pod is
bound; then a fresh standby is started for the next round. Target (issue 16, ``TARGET``): median at most
leaseDuration + retryPeriod + 0.3 s. A cold standby (informers started only once leading) took
2.75 to 2.93 s.

Run from the repository root: ``python benchmarks/scheduler_failover.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import functools
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from _verdict import Verdicts

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

LD, RD, RP = 2.0, 1.5, 0.2
TARGET = LD + RP + 0.3  # seconds, issue 16
CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: {kubeconfig}
leaderElection:
  leaderElect: true
  leaseDuration: {ld}s
  renewDeadline: {rd}s
  retryPeriod: {rp}s
"""


class Replica:
    def __init__(self, config: Path) -> None:
        self.log: IO[str] = tempfile.TemporaryFile("w+")
        self.p = subprocess.Popen([sys.executable, "-m", "componentbase_examples.scheduler", "--secure-port=0",
                                   f"--config={config}"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=self.log,
                                  text=True)

    def says(self, text: str) -> bool:
        self.log.seek(0)
        return text in self.log.read()


def _until(pred: Any, timeout: float, what: str, poll: float = 0.002) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout}s waiting for {what}")
        time.sleep(poll)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from kubernetes import client

    from componentbase.testing import LoopbackAPIServer

    server = LoopbackAPIServer()
    server.start()
    core: Any = client.CoreV1Api(server.api_client())
    core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"},
                      "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "1000"}}})
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.yaml"
        config.write_text(CONFIG.format(kubeconfig=server.kubeconfig_path, ld=LD, rd=RD, rp=RP))
        replicas = [Replica(config)]
        _until(lambda: replicas[0].says("successfully acquired lease"), 60, "a leader", 0.05)
        times: list[float] = []
        try:
            for i in range(args.rounds):
                standby = Replica(config)
                replicas.append(standby)
                campaigning = functools.partial(standby.says, "attempting to acquire leader lease")
                _until(campaigning, 60, "a campaigning standby", 0.05)
                time.sleep(RP * 3)  # let the standby see the current record, as a long-running one would have
                leader = next(r for r in replicas if r.p.poll() is None and r.says("successfully acquired lease"))
                killed = time.monotonic()
                leader.p.send_signal(signal.SIGKILL)
                name = f"p{i}"
                core.create_namespaced_pod("default", {
                    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                    "spec": {"containers": [{"name": "c", "image": "c"}]}})

                def bound(name: str = name) -> bool:
                    pod = json.loads(core.read_namespaced_pod(name, "default", _preload_content=False).read())
                    return bool(pod["spec"].get("nodeName"))

                _until(bound, 30, f"{name} bound by the new leader")
                times.append(time.monotonic() - killed)
                leader.p.wait()
                print(f"round {i + 1}: first binding {times[-1]:.3f}s after SIGKILL of the leader", flush=True)
        finally:
            for r in replicas:
                if r.p.poll() is None:
                    r.p.send_signal(signal.SIGTERM)
                    r.p.wait(30)
            server.stop()
    median = statistics.median(times)
    print(f"median {median:.3f}s (min {min(times):.3f}, max {max(times):.3f}) over {len(times)} rounds; "
          f"the target is leaseDuration + retryPeriod + 0.3 s")
    verdicts = Verdicts()
    verdicts.at_most("median SIGKILL -> the new leader's first binding", median, TARGET, unit=" s", digits=3)
    return verdicts.exit_code


if __name__ == "__main__":
    sys.exit(main())
