"""Candidates as real processes (tests/leaderelection/candidate.py), and what they recorded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import attrs

CANDIDATE = Path(__file__).with_name("candidate.py")
REPO = Path(__file__).resolve().parents[2]


@attrs.define
class Proc:
    identity: str
    out: Path
    popen: subprocess.Popen[bytes]
    died_at: float | None = None  # when we saw it dead after SIGKILL: its open interval ends here

    def events(self) -> list[tuple[str, float]]:
        if not self.out.exists():
            return []
        rows = []
        for line in self.out.read_text().splitlines():
            kind, _, t = line.partition(" ")
            rows.append((kind, float(t)))
        return rows

    def has(self, kind: str) -> bool:
        return any(k == kind for k, _ in self.events())

    def leading(self) -> bool:
        opened = 0
        for k, _ in self.events():
            opened += {"start": 1, "end": -1}.get(k, 0)
        return opened > 0 and self.alive()

    def alive(self) -> bool:
        return self.popen.poll() is None

    def intervals(self) -> list[tuple[float, float | None]]:
        out: list[tuple[float, float | None]] = []
        start: float | None = None
        for k, t in self.events():
            if k == "start":
                start = t
            elif k == "end" and start is not None:
                out.append((start, t))
                start = None
        if start is not None:
            out.append((start, self.died_at))
        return out

    def kill(self) -> float:
        """SIGKILL; returns the time just before the signal (failover is measured from here)."""
        t = time.monotonic()
        self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(10)
        self.died_at = time.monotonic()
        return t

    def terminate(self, timeout: float = 10.0) -> None:
        if self.alive():
            self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()


def spawn(identity: str, url: str, workdir: Path, timings: dict[str, float], release: bool = False) -> Proc:
    out = workdir / f"{identity}.events"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    args = [sys.executable, str(CANDIDATE), "--url", url, "--identity", identity, "--out", str(out),
            "--lease-duration", str(timings["lease_duration"]), "--renew-deadline", str(timings["renew_deadline"]),
            "--retry-period", str(timings["retry_period"])]
    if release:
        args.append("--release")
    log = open(workdir / f"{identity}.log", "wb")
    popen = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=REPO, env=env)
    log.close()
    return Proc(identity, out, popen)

