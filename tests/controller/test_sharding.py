"""Sharded controllers: 2-3 Managers in threads of one process against one loopback server, each its own shard.

Every reconcile is recorded with its shard, key, start and end: each object is reconciled by exactly the
shard its label names, and no object's reconciles by two shards ever overlap, through joins, leaves and
drains. Leases are short (2 s) so a departure is seen within seconds.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from componentbase.client import NotLeader, ObjectClient
from componentbase.componentconfig import LeaderElectionConfiguration
from componentbase.controller import Manager, Request, Result, ShardingConfig, set_controller_reference
from componentbase.controller._ring import HashRing
from componentbase.testing import LoopbackAPIServer, eventually
from componentbase.util import Duration

pytestmark = pytest.mark.integration

_rings = itertools.count()


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer() as s:
        yield s


class Ring:
    """Replicas of one sharded controller; ``log`` holds (shard, key, start, end) of every reconcile."""

    def __init__(self, server: LoopbackAPIServer, *, requeue: float = 0.0, owned: bool = False) -> None:
        self.server = server
        self.name = f"ring{next(_rings)}"
        self.namespace = "default"
        self.api = server.api_client()
        self.objects = ObjectClient(self.api)
        self.requeue = requeue
        self.owned = owned
        self.log: list[tuple[str, str, float, float]] = []
        self.replicas: dict[str, tuple[Manager, threading.Event, threading.Thread, list[int]]] = {}

    def start(self, shard: str, identity: str | None = None, key: str = "", metrics: Any = None) -> Manager:
        election = LeaderElectionConfiguration(
            leader_elect=True, resource_name=f"{self.name}-leader", resource_namespace=self.namespace,
            lease_duration=Duration("2s"), renew_deadline=Duration("1500ms"), retry_period=Duration("200ms"))
        config = ShardingConfig(ring=self.name, kinds=[("v1", "ConfigMap")], shard=shard, selector=f"ring={self.name}",
                                owned=[("v1", "Secret")] if self.owned else [])
        mgr = Manager(self.server.api_client(), leader_election=election, identity=identity or shard,
                      sharding=config, metrics=metrics)
        cms = mgr.informer("v1", "ConfigMap", label_selector=f"ring={self.name}")  # this test's only
        secrets = mgr.informer("v1", "Secret") if self.owned else None

        def reconcile(req: Request) -> Result | None:
            start = time.monotonic()
            cm = cms.get(req.key)
            if cm is not None and secrets is not None and secrets.get(req.key) is None:
                secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": req.name,
                                                                            "namespace": req.namespace}}
                set_controller_reference(cm, secret)
                try:
                    mgr.objects.create(secret)
                except Exception as err:  # created by an earlier try, not yet labelled and cached
                    if getattr(err, "status", None) != 409:
                        raise
            time.sleep(0.02)
            self.log.append((shard, req.key, start, time.monotonic()))
            return Result(requeue_after=self.requeue) if self.requeue else None

        mgr.controller("c", reconcile, max_concurrent_reconciles=2).watch(cms)
        stop, code = threading.Event(), []
        thread = threading.Thread(target=lambda: code.append(mgr.run(stop)), name=f"replica-{shard}")
        thread.start()
        self.replicas[key or shard] = (mgr, stop, thread, code)
        return mgr

    def stop(self, shard: str) -> int:
        _, stop, thread, code = self.replicas.pop(shard)
        stop.set()
        thread.join(15)
        assert not thread.is_alive()
        return code[0]

    def close(self) -> None:
        for shard in list(self.replicas):
            self.stop(shard)

    def create(self, count: int) -> list[str]:
        for i in range(count):
            self.objects.create({"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": f"{self.name}-{i}", "namespace": self.namespace,
                                              "labels": {"ring": self.name}}})
        return [f"{self.namespace}/{self.name}-{i}" for i in range(count)]

    def labels(self, kind: str = "ConfigMap") -> dict[str, dict[str, str]]:
        items = self.objects.list("v1", kind, self.namespace)
        return {f"{self.namespace}/{o['metadata']['name']}": o["metadata"].get("labels") or {}
                for o in items if o["metadata"]["name"].startswith(self.name)}

    def assigned(self, keys: list[str], shards: set[str]) -> dict[str, str]:
        """Each key's shard, once every key carries the shard a ring of ``shards`` gives it, and no drain."""
        labels = self.labels()
        found = {k: labels.get(k, {}).get(f"shard.sharding.componentbase.io/{self.name}", "") for k in keys}
        draining = any(f"drain.sharding.componentbase.io/{self.name}" in labels.get(k, {}) for k in keys)
        return found if not draining and found == HashRing(shards).assignment(keys) else {}

    def reconciled_by(self, since: float = 0.0) -> dict[str, set[str]]:
        by: dict[str, set[str]] = {}
        for shard, key, start, _ in list(self.log):
            if start >= since:
                by.setdefault(key, set()).add(shard)
        return by

    def assert_no_overlap(self) -> None:
        """No object's reconciles by two different shards overlap in time."""
        by_key: dict[str, list[tuple[float, float, str]]] = {}
        for shard, key, start, end in self.log:
            by_key.setdefault(key, []).append((start, end, shard))
        for key, runs in by_key.items():
            latest: dict[str, float] = {}  # shard -> the end of its latest reconcile of the key so far
            for start, end, shard in sorted(runs):
                for other, other_end in latest.items():
                    assert other == shard or other_end <= start, \
                        f"{key}: reconciled by {other} until {other_end:.3f} and by {shard} from {start:.3f}"
                latest[shard] = max(latest.get(shard, 0.0), end)


@pytest.fixture
def ring(server: LoopbackAPIServer) -> Iterator[Ring]:
    r = Ring(server)
    yield r
    r.close()


def test_each_object_is_reconciled_by_exactly_the_shard_labelled_on_it_and_each_caches_only_its_own(
        ring: Ring, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "componentbase.controller")
    managers = {s: ring.start(s) for s in ("a", "b", "c")}
    # Objects created while the sharder knew only a (b and c still starting, as under load) go to a and then
    # move, rightly; "exactly one shard" is a claim about a ring that stands, so it is waited for first.
    eventually(lambda: any("live shards ['a', 'b', 'c']" in r.getMessage() for r in caplog.records), timeout=15,
               what="the sharder's ring of a, b and c")
    keys = ring.create(30)
    shards = eventually(lambda: ring.assigned(keys, {"a", "b", "c"}), timeout=15, what="every object assigned")
    eventually(lambda: set(ring.reconciled_by()) >= set(keys), timeout=10, what="every object reconciled")
    assert all(by == {shards[k]} for k, by in ring.reconciled_by().items()), ring.reconciled_by()
    assert len(set(shards.values())) == 3  # 30 keys over 3 shards: each gets some
    for shard, mgr in managers.items():
        cached = {f"default/{o['metadata']['name']}" for o in mgr.informer(
            "v1", "ConfigMap", label_selector=f"ring={ring.name}").list()}
        assert cached == {k for k, s in shards.items() if s == shard}
    leases = ring.objects.list("coordination.k8s.io/v1", "Lease", "default",
                               label_selector=f"sharding.componentbase.io/ring={ring.name}")
    assert sorted(lease["spec"]["holderIdentity"] for lease in leases) == ["a", "b", "c"]
    # A write to an object of another shard is refused before it is sent.
    other = next(k for k, s in shards.items() if s != "a")
    with pytest.raises(NotLeader, match="not assigned to shard a"):
        managers["a"].objects.patch(ring.objects.get("v1", "ConfigMap", other.split("/")[1], "default"),
                                    {"data": {"x": "y"}})
    ring.assert_no_overlap()


def test_a_stopped_shards_objects_move_to_the_others_and_are_reconciled_there(ring: Ring) -> None:
    for s in ("a", "b", "c"):
        ring.start(s)
    keys = ring.create(30)
    before = eventually(lambda: ring.assigned(keys, {"a", "b", "c"}), timeout=15, what="every object assigned")
    assert ring.stop("b") == 0  # released: no one waits for it to expire
    stopped = time.monotonic()
    after = eventually(lambda: ring.assigned(keys, {"a", "c"}), timeout=10, what="b's objects moved")
    moved = [k for k in keys if before[k] == "b"]
    assert moved and all(after[k] == before[k] for k in keys if before[k] != "b")  # the others stayed
    eventually(lambda: all(after[k] in ring.reconciled_by(stopped).get(k, ()) for k in moved), timeout=10,
               what="moved objects reconciled by their new shard")
    ring.assert_no_overlap()


def test_a_drain_is_acknowledged_before_the_new_shard_reconciles(server: LoopbackAPIServer) -> None:
    ring = Ring(server, requeue=0.1)  # every object reconciled again and again: a handover without drain overlaps
    try:
        ring.start("a")
        ring.start("b")
        keys = ring.create(20)
        eventually(lambda: ring.assigned(keys, {"a", "b"}), timeout=15, what="every object assigned")
        joined = time.monotonic()
        ring.start("c")
        after = eventually(lambda: ring.assigned(keys, {"a", "b", "c"}), timeout=15, what="objects drained to c")
        eventually(lambda: all("c" in ring.reconciled_by(joined).get(k, ()) for k in keys if after[k] == "c"),
                   timeout=10, what="c reconciling its objects")
        moved = sum(1 for s in after.values() if s == "c")
        assert 0 < moved < len(keys)  # only c's share moved
        ring.assert_no_overlap()
    finally:
        ring.close()


def test_owned_objects_follow_their_owner(server: LoopbackAPIServer) -> None:
    ring = Ring(server, owned=True)
    try:
        ring.start("a")
        ring.start("b")
        keys = ring.create(10)
        owners = eventually(lambda: ring.assigned(keys, {"a", "b"}), timeout=15, what="every object assigned")
        label = f"shard.sharding.componentbase.io/{ring.name}"

        def secrets_follow(expected: dict[str, str]) -> bool:
            secrets = ring.labels("Secret")
            return all(secrets.get(k, {}).get(label) == expected[k] for k in keys)

        eventually(lambda: secrets_follow(owners), timeout=10, what="each Secret labelled as its ConfigMap")
        ring.stop("a")
        owners = eventually(lambda: ring.assigned(keys, {"b"}), timeout=10, what="a's objects moved to b")
        eventually(lambda: secrets_follow(owners), timeout=10, what="the Secrets moved with their owners")
    finally:
        ring.close()


def test_a_deleted_shard_lease_is_created_again_and_two_replicas_with_one_identity_are_refused(
        ring: Ring) -> None:
    ring.start("a")
    name = f"{ring.name}-a"
    eventually(lambda: ring.objects.list("coordination.k8s.io/v1", "Lease", "default",
                                         field_selector=f"metadata.name={name}"), what="a's lease")
    ring.objects.delete({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                         "metadata": {"name": name, "namespace": "default"}})
    lease: Any = eventually(lambda: ring.objects.list("coordination.k8s.io/v1", "Lease", "default",
                                                      field_selector=f"metadata.name={name}"),
                            what="a's lease created again")
    assert lease[0]["spec"]["holderIdentity"] == "a"
    ring.start("a", identity="twin", key="twin")  # another replica as shard "a"
    twin = ring.replicas["twin"][2]
    eventually(lambda: not twin.is_alive(), timeout=10, what="the second replica of shard a ending")
    assert ring.stop("twin") == 1
    assert ring.replicas["a"][2].is_alive()  # the first one runs on


def _lease(ring: Ring, shard: str, holder: str, duration: int) -> dict[str, Any]:
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": f"{ring.name}-{shard}", "namespace": "default",
                         "labels": {"sharding.componentbase.io/ring": ring.name,
                                    "sharding.componentbase.io/shard": shard}},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration, "acquireTime": now, "renewTime": now}}


def test_a_dead_shards_objects_move_without_an_acknowledgement(ring: Ring) -> None:
    """A shard that stops renewing (paused, partitioned) never acknowledges: its objects move once its Lease
    has not changed for its duration, as the sharder sees it."""
    ring.start("a")
    ring.start("b")
    eventually(lambda: ring.replicas["a"][0].is_leading() or ring.replicas["b"][0].is_leading(), timeout=10,
               what="a sharder")
    ring.objects.create(_lease(ring, "ghost", "ghost", 3))  # a shard that will never renew
    keys = ring.create(20)
    label = f"shard.sharding.componentbase.io/{ring.name}"
    eventually(lambda: any(v.get(label) == "ghost" for v in ring.labels().values()), timeout=3,
               what="objects assigned to the ghost while its Lease looked live")
    after = eventually(lambda: ring.assigned(keys, {"a", "b"}), timeout=15, what="the ghost's objects moved")
    eventually(lambda: all(after[k] in ring.reconciled_by().get(k, ()) for k in keys), timeout=10,
               what="every object reconciled by a live shard")
    ring.assert_no_overlap()


def test_a_label_edited_by_hand_is_put_back_and_the_object_reconciled_by_its_shard(ring: Ring) -> None:
    ring.start("a")
    ring.start("b")
    keys = ring.create(6)
    before = eventually(lambda: ring.assigned(keys, {"a", "b"}), timeout=15, what="every object assigned")
    key = keys[0]
    obj = ring.objects.get("v1", "ConfigMap", key.split("/")[1], "default")
    edited = time.monotonic()
    ring.objects.patch(obj, {"metadata": {"labels": {f"shard.sharding.componentbase.io/{ring.name}": "nobody"}}})
    eventually(lambda: ring.assigned(keys, {"a", "b"}) == before, timeout=10, what="the label put back")
    eventually(lambda: ring.reconciled_by(edited).get(key) == {before[key]}, timeout=10,
               what="the object reconciled by its shard")


def test_a_shard_whose_lease_is_taken_stops_with_1_and_its_writes_are_refused(ring: Ring) -> None:
    mgr = ring.start("a")
    ring.start("b")
    keys = ring.create(10)
    before = eventually(lambda: ring.assigned(keys, {"a", "b"}), timeout=15, what="every object assigned")
    mine = next(k for k in keys if before[k] == "a")
    lease = ring.objects.get("coordination.k8s.io/v1", "Lease", f"{ring.name}-a", "default")
    # As a partitioned shard finds its Lease on its return: not its own any more.
    ring.objects.patch(lease, {"spec": {"holderIdentity": "intruder", "leaseDurationSeconds": 3600}})
    _, _, thread, code = ring.replicas["a"]
    thread.join(10)
    assert code == [1]  # a lost shard Lease stops the manager, as a lost leadership does
    with pytest.raises(NotLeader, match="does not hold its lease"):
        mgr.objects.patch(ring.objects.get("v1", "ConfigMap", mine.split("/")[1], "default"), {"data": {"x": "y"}})
    eventually(lambda: ring.assigned(keys, {"b"}), timeout=10, what="a's objects moved to b")
    ring.replicas.pop("a")


def test_metrics_per_replica_count_assigned_objects_moves_and_drains(server: LoopbackAPIServer) -> None:
    from componentbase.metrics import Metrics

    ring = Ring(server)
    registries = {s: Metrics(process_metrics=False) for s in ("a", "b")}
    try:
        for s, metrics in registries.items():
            ring.start(s, metrics=metrics)
        keys = ring.create(20)
        shards = eventually(lambda: ring.assigned(keys, {"a", "b"}), timeout=15, what="every object assigned")

        def sample(replica: str, name: str, **labels: str) -> float:
            value = registries[replica].registry.get_sample_value(name, {"ring": ring.name, **labels})
            return value or 0.0

        for s in ("a", "b"):
            assert sample(s, "controller_sharding_shard_lease_held", shard=s) == 1
            count = sum(1 for v in shards.values() if v == s)
            gauge = functools.partial(sample, s, "controller_sharding_assigned_objects", shard=s, kind="ConfigMap")
            eventually(lambda: gauge() == count, timeout=5, what=f"{s}'s gauge")  # noqa: B023  # called at once
        def sharders(name: str, **labels: str) -> float:
            """The sharder's counter over the replicas: leadership may have moved (2 s leases under load)."""
            return sum(sample(s, name, **labels) for s in registries)

        leader = "a" if ring.replicas["a"][0].is_leading() else "b"
        assert sharders("controller_sharding_assignments_total", kind="ConfigMap") == len(keys)
        assert sample(leader, "controller_sharding_ring_shards") == 2
        ring.start("c")
        eventually(lambda: ring.assigned(keys, {"a", "b", "c"}), timeout=15, what="c's share drained to it")
        drains = sharders("controller_sharding_drains_total", kind="ConfigMap")
        assert drains >= 1 and sharders("controller_sharding_moves_total", kind="ConfigMap") == drains
        assert sharders("controller_sharding_drain_duration_seconds_count") == drains
        acks = sum(sample(s, "controller_sharding_drains_acknowledged_total", shard=s) for s in ("a", "b"))
        assert acks == drains
    finally:
        ring.close()


def test_the_api_server_restarting_mid_handover_leaves_no_object_unassigned(server: LoopbackAPIServer) -> None:
    """A restart from empty storage (a restored etcd) while a third shard's share is being drained: a replica
    whose Lease could not be renewed meanwhile stops (1) and is started again, as its Deployment would; the Leases
    are created again, the caches relist, and objects created afterwards are all assigned and reconciled."""
    ring = Ring(server)
    try:
        ring.start("a")
        ring.start("b")
        keys = ring.create(20)
        eventually(lambda: ring.assigned(keys, {"a", "b"}), timeout=15, what="every object assigned")
        ring.start("c")
        eventually(lambda: ring.objects.list("coordination.k8s.io/v1", "Lease", "default",
                                             field_selector=f"metadata.name={ring.name}-c"), what="c's lease")
        server.restart()  # c's share is being drained to it (or about to be)
        ring.objects = ObjectClient(server.api_client())
        time.sleep(2.5)  # past the renew deadline (1.5 s): a replica that could not renew has stopped
        for shard in [s for s, (_, _, thread, _) in ring.replicas.items() if not thread.is_alive()]:
            assert ring.stop(shard) == 1
            ring.start(shard)  # the Deployment's restart
        eventually(lambda: len(ring.objects.list("coordination.k8s.io/v1", "Lease", "default", label_selector=(
            f"sharding.componentbase.io/ring={ring.name}"))) == 3, timeout=15, what="the shard leases created again")
        created = time.monotonic()
        keys = ring.create(20)
        after = eventually(lambda: ring.assigned(keys, {"a", "b", "c"}), timeout=15, what="new objects assigned")
        took = time.monotonic() - created
        assert took < 2.0 + 2.0 + 3.0, f"assigned {took:.1f}s after their creation"  # leaseDuration + 2 s + margin
        eventually(lambda: all(after[k] in ring.reconciled_by(created).get(k, ()) for k in keys), timeout=10,
                   what="every new object reconciled by its shard")
        ring.assert_no_overlap()
    finally:
        ring.close()
