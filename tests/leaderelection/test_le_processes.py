"""Candidates as separate processes: SIGKILLed leaders, and a seeded storm of faults and restarts."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from componentbase.testing import LoopbackAPIServer, eventually

from .conftest import max_overlap
from .procs import Proc, spawn
from .proxy import BlackholeProxy

pytestmark = [pytest.mark.process, pytest.mark.timeout(180)]

#: Wider slack than the thread tests: five interpreters share two busy cores here.
TIMINGS = {"lease_duration": 1.5, "renew_deadline": 0.9, "retry_period": 0.15}
LD, RD, RP = TIMINGS["lease_duration"], TIMINGS["renew_deadline"], TIMINGS["retry_period"]
#: Leading intervals are recorded by each process itself; allow this much clock-read skew.
EPSILON = 0.05


def _leaders(procs: list[Proc]) -> list[Proc]:
    return [p for p in procs if p.leading()]


def test_hard_kill_fails_over_within_lease_duration_plus_two_retry_periods(
        server: LoopbackAPIServer, tmp_path: Path) -> None:
    procs = [spawn(f"p{i}", server.url, tmp_path, TIMINGS) for i in range(5)]
    try:
        eventually(lambda: all(p.has("ready") for p in procs), 30, what="every candidate to start")
        eventually(lambda: len(_leaders(procs)) == 1, 10, what="one leader")
        time.sleep(0.5)
        assert len(_leaders(procs)) == 1
        victim = _leaders(procs)[0]
        killed_at = victim.kill()
        rest = [p for p in procs if p is not victim]
        eventually(lambda: _leaders(rest), LD + 2 * RP + 3.0, what="a new leader")
        new = _leaders(rest)[0]
        failover = new.intervals()[-1][0] - killed_at
        # A lease duration, then a poll (about 1.1 s; benchmarks/leader_failover.py holds that figure): under
        # two, so a second lease duration waited out would show, and a loaded machine has 0.8 s to spare.
        assert failover < 2 * LD, f"failover took {failover:.3f}s"
        assert max_overlap([iv for p in procs for iv in p.intervals()]) <= EPSILON
    finally:
        for p in procs:
            p.terminate()


def test_storm_of_faults_kills_and_partitions_never_yields_two_leaders(
        server: LoopbackAPIServer, tmp_path: Path) -> None:
    rng = random.Random(20260501)
    proxies = [BlackholeProxy("127.0.0.1", server.port) for _ in range(4)]
    generation = [0] * len(proxies)
    slots: list[Proc] = []
    every: list[Proc] = []

    def start(slot: int) -> Proc:
        generation[slot] += 1
        p = spawn(f"s{slot}g{generation[slot]}", proxies[slot].url, tmp_path, TIMINGS, release=rng.random() < 0.5)
        every.append(p)
        return p

    phases = [
        {},
        {"error_rate": 0.3, "error_code": 500},
        {"error_rate": 0.3, "error_code": 429},
        {"latency": 0.3},
        {"drop_rate": 0.2},
        {"stall": 1.5},
        {"latency": 0.1, "error_rate": 0.2, "drop_rate": 0.1},
    ]
    try:
        slots = [start(i) for i in range(len(proxies))]
        eventually(lambda: all(p.has("ready") for p in slots), 30, what="every candidate to start")
        eventually(lambda: _leaders(slots), 10, what="a leader")
        # Every fault, partitions, SIGKILLs and SIGTERMs, in a seeded order; bounded at 20 s.
        steps: list[tuple[str, dict[str, float]]] = [("fault", ph) for ph in phases]
        steps += [("partition", {})] * 3 + [("kill", {})] * 3 + [("term", {})] * 2
        rng.shuffle(steps)
        end = time.monotonic() + 20.0
        for action, rule in steps:
            if time.monotonic() > end:
                break
            if action == "fault":
                if rule:
                    server.faults.set(resources=["leases"], **rule)
                else:
                    server.faults.clear()
            elif action == "partition":
                leaders = _leaders(slots)
                slot = slots.index(leaders[0]) if leaders else rng.randrange(len(slots))
                proxies[slot].cut.set()
                time.sleep(rng.uniform(0.5, 2.0))
                proxies[slot].cut.clear()
            else:
                leaders = _leaders(slots)
                victim = leaders[0] if leaders and rng.random() < 0.7 else rng.choice(slots)
                slot = slots.index(victim)
                if action == "kill":
                    victim.kill()
                else:
                    victim.terminate()
                time.sleep(rng.uniform(0.1, 0.5))
                slots[slot] = start(slot)
            time.sleep(rng.uniform(0.3, 0.8))
        counts = dict(server.faults.counts)
        server.faults.clear()
        for px in proxies:
            px.cut.clear()
        # Once the storm is over, somebody leads again.
        leaders = eventually(lambda: _leaders(slots), LD + RD + 10.0, what="a leader after the storm")
        # The overlap check means something over several handovers. Under a CPU burner per core the storm can
        # end after 3 terms (restarted candidates take seconds to import the client), so SIGKILL the leader
        # until 4 terms have begun: each takeover is still judged against the lease it took over.
        while sum(len(p.intervals()) for p in every) < 4 and time.monotonic() < end + 60.0:
            slot = slots.index(leaders[0])
            slots[slot].kill()
            slots[slot] = start(slot)
            leaders = eventually(lambda: _leaders(slots), LD + RD + 10.0, what="a leader after a SIGKILL")
    finally:
        server.faults.clear()
        for p in every:
            p.terminate()
        for px in proxies:
            px.close()
    intervals = [iv for p in every for iv in p.intervals()]
    assert len(intervals) >= 4, f"too little leadership happened: {intervals}"
    assert all(counts.get(k) for k in ("error", "drop", "stall")), counts
    worst = max_overlap(intervals)
    assert worst <= EPSILON, f"two leaders at once for {worst:.3f}s"
