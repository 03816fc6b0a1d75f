"""``componentbase-hello --sharded``: three replicas share the ConfigMaps; a SIGKILLed one's are taken over.

One server and three processes for the module. The sharder labels each ``hello=true`` ConfigMap with one of
the three shards; each replica greets only its own. After a SIGKILL the dead shard's Lease expires (2 s), its
ConfigMaps move to the survivors and, their greetings removed, are greeted again.
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
from componentbase.controller._ring import HashRing
from componentbase.testing import LoopbackAPIServer, eventually
from tests.controller.helpers import configmap

pytestmark = [pytest.mark.process, pytest.mark.xdist_group("hello-sharded")]

ROOT = Path(__file__).resolve().parents[2]
LEASE = 2.0
FLAGS = ["--sharded", "--leader-elect-lease-duration=2s", "--leader-elect-renew-deadline=1500ms",
         "--leader-elect-retry-period=200ms", "--leader-elect-resource-namespace=default", "--secure-port=0"]
SHARD = "shard.sharding.componentbase.io/hello"
RUN = "from componentbase_examples.console import hello; hello()"  # the componentbase-hello console script


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer() as s:
        yield s


def _start(server: LoopbackAPIServer, log: Path) -> subprocess.Popen[bytes]:
    with log.open("w") as f:
        return subprocess.Popen([sys.executable, "-c", RUN,
                                 f"--kubeconfig={server.kubeconfig_path}", *FLAGS], cwd=ROOT, stderr=f)


def _state(objects: ObjectClient, names: list[str]) -> dict[str, tuple[str, str]]:
    """name -> (shard label, greeting)."""
    found = {o["metadata"]["name"]: ((o["metadata"].get("labels") or {}).get(SHARD, ""),
                                     (o.get("data") or {}).get("greeting", ""))
             for o in objects.list("v1", "ConfigMap", "default", label_selector="hello=true")}
    return {n: found.get(n, ("", "")) for n in names}


def _greeted(objects: ObjectClient, names: list[str], ring: HashRing) -> dict[str, tuple[str, str]]:
    """The state once every ConfigMap is labelled with its shard on ``ring`` and greeted; else empty. (The ring is
    built once per wait, not per look: 1000 virtual nodes a shard take a few ms to hash.)"""
    state = _state(objects, names)
    done = all(shard == ring.shard_for(f"default/{n}") and greeting == f"hello, {n}"
               for n, (shard, greeting) in state.items())
    return state if done else {}


def _shards(objects: ObjectClient) -> set[str]:
    leases = objects.list("coordination.k8s.io/v1", "Lease", "default",
                          label_selector="sharding.componentbase.io/ring=hello")
    return {str(lease["spec"].get("holderIdentity") or "") for lease in leases} - {""}


def test_three_replicas_share_the_objects_and_survivors_take_over_a_sigkilled_ones(
        server: LoopbackAPIServer, tmp_path: Path) -> None:
    objects = ObjectClient(server.api_client())
    procs = [_start(server, tmp_path / f"hello-{i}.log") for i in range(3)]
    try:
        shards = eventually(lambda: s if len(s := _shards(objects)) == 3 else set(), 30,
                            what="three shard leases")
        names = [f"sharded-{i}" for i in range(30)]
        for name in names:
            objects.create(configmap(name, hello="true"))
        objects.create(configmap("not-sharded"))
        ring = HashRing(shards)
        state = eventually(lambda: _greeted(objects, names, ring), 30, what="every ConfigMap assigned and greeted")
        assert {shard for shard, _ in state.values()} == shards  # each replica has a share
        assert SHARD not in (objects.get("v1", "ConfigMap", "not-sharded", "default")["metadata"].get("labels") or {})

        # Which process is which shard: its log names the lease it holds.
        victim_index = next(i for i in range(3) if "holding lease" in (tmp_path / f"hello-{i}.log").read_text())
        log = (tmp_path / f"hello-{victim_index}.log").read_text()
        victim = next(s for s in shards if f"hello-{s}" in log)
        procs[victim_index].send_signal(signal.SIGKILL)
        procs[victim_index].wait(10)
        killed = time.monotonic()
        for name in names:  # the greetings go: only a live shard greets again
            objects.patch(objects.get("v1", "ConfigMap", name, "default"), {"data": {"greeting": None}})
        survivors = HashRing(shards - {victim})
        after = eventually(lambda: _greeted(objects, names, survivors), 20,
                           what="the survivors greeting every ConfigMap")
        taken_over = time.monotonic() - killed
        moved = [n for n in names if state[n][0] != after[n][0]]
        assert all(state[n][0] == victim for n in moved)  # only the dead shard's objects moved
        assert taken_over < LEASE + 2.0 + 3.0, f"taken over {taken_over:.1f}s after SIGKILL"  # margin: 2 cores
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
    for i, p in enumerate(procs):
        if i != victim_index:
            assert p.returncode == 0
            assert "Traceback" not in (tmp_path / f"hello-{i}.log").read_text()
