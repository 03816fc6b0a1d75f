"""A shard SIGSTOPped while objects are assigned to it, continued after its Lease expired: it writes nothing.

Three replica processes (a small sharded controller that writes ``data.by=<its shard>``), one server. While one
is stopped, new ConfigMaps are assigned to it (its Lease still looks live for 4 s), then moved to the others
when it expires, with no acknowledgement, and written by them. Continued, the stopped one finds its renew
deadline long past: its fence refuses any write before it is sent, and it stops with 1. No object's
resourceVersion moves after that: it wrote nothing.

Leases are 4 s with a 3 s renew deadline: with 2 s and 1.5 s, under a CPU burner per core and the rest of the
suite, the leading replica once missed its renew deadline ("get: no time left") and stopped before any stop.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from componentbase.client import ObjectClient
from componentbase.testing import LoopbackAPIServer, eventually

pytestmark = [pytest.mark.process, pytest.mark.xdist_group("sharding-sigstop")]

ROOT = Path(__file__).resolve().parents[2]
LABEL = "shard.sharding.componentbase.io/stop"
REPLICA = """
import sys, threading, kubernetes.client as kc
from componentbase.componentconfig import LeaderElectionConfiguration
from componentbase.controller import Manager, ShardingConfig
from componentbase.util import Duration
cfg = kc.Configuration(); cfg.host = sys.argv[1]; shard = sys.argv[2]
election = LeaderElectionConfiguration(leader_elect=True, resource_name="stop-leader", resource_namespace="default",
    lease_duration=Duration("4s"), renew_deadline=Duration("3s"), retry_period=Duration("200ms"))
mgr = Manager(kc.ApiClient(cfg), leader_election=election, identity=shard,
              sharding=ShardingConfig(ring="stop", kinds=[("v1", "ConfigMap")], shard=shard, selector="stop=true"))
cms = mgr.informer("v1", "ConfigMap", label_selector="stop=true")
def reconcile(req):
    cm = cms.get(req.key)
    if cm is not None and (cm.get("data") or {}).get("by") != shard:
        mgr.objects.patch(cm, {"data": {"by": shard}})
mgr.controller("stop", reconcile).watch(cms)
sys.exit(mgr.run(threading.Event()))
"""


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer() as s:
        yield s


def _state(objects: ObjectClient) -> dict[str, tuple[str, str, str]]:
    """name -> (shard label, data.by, resourceVersion)."""
    return {o["metadata"]["name"]: ((o["metadata"].get("labels") or {}).get(LABEL, ""),
                                    (o.get("data") or {}).get("by", ""), o["metadata"]["resourceVersion"])
            for o in objects.list("v1", "ConfigMap", "default", label_selector="stop=true")}


def _written_by_their_shard(objects: ObjectClient, names: list[str], shards: set[str]) -> dict[str, tuple[str, ...]]:
    state = _state(objects)
    done = all(n in state and state[n][0] in shards and state[n][1] == state[n][0] for n in names)
    return state if done else {}


def test_a_stopped_shard_continued_after_its_lease_expired_writes_nothing(server: LoopbackAPIServer,
                                                                         tmp_path: Path) -> None:
    objects = ObjectClient(server.api_client())
    logs = {s: tmp_path / f"{s}.log" for s in ("a", "b", "c")}
    procs = {}
    for shard, log in logs.items():
        with log.open("w") as f:
            procs[shard] = subprocess.Popen([sys.executable, "-c", REPLICA, server.url, shard], cwd=ROOT, stderr=f)
    try:
        first = [f"early-{i}" for i in range(18)]
        for name in first:
            objects.create({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": name, "namespace": "default", "labels": {"stop": "true"}}})
        eventually(lambda: len({s for s, _, _ in _written_by_their_shard(objects, first, {"a", "b", "c"}).values()})
                   == 3, 30, what="three shards writing their objects")
        leader = objects.get("coordination.k8s.io/v1", "Lease", "stop-leader", "default")["spec"]["holderIdentity"]
        victim = next(s for s in ("a", "b", "c") if s != leader)
        procs[victim].send_signal(signal.SIGSTOP)
        late = [f"late-{i}" for i in range(30)]
        for name in late:  # the victim's Lease still looks live: some of these are assigned to it
            objects.create({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": name, "namespace": "default", "labels": {"stop": "true"}}})
        eventually(lambda: any(n.startswith("late-") and s == victim for n, (s, _, _) in _state(objects).items()),
                   5, what="new objects assigned to the stopped shard")
        survivors = {"a", "b", "c"} - {victim}
        before = eventually(lambda: _written_by_their_shard(objects, first + late, survivors), 30,
                            what="every object moved to and written by a survivor")
        procs[victim].send_signal(signal.SIGCONT)
        assert procs[victim].wait(20) == 1  # its shard Lease is lost: it stops, as a deposed leader does
        time.sleep(1.0)  # anything it could still send would have arrived
        after = _state(objects)
        assert {n: after[n] for n in before} == before  # not one write since: every resourceVersion the same
        log = logs[victim].read_text()
        assert f"shard lease default/stop-{victim} lost" in log
        assert "Traceback" not in log
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.terminate()
        for p in procs.values():
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
