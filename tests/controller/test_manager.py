"""The Manager: caches synced before anything runs, leader-only work gated and fenced, clean stops."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from componentbase.app import Config
from componentbase.client import NotLeader, ObjectClient
from componentbase.componentconfig import LeaderElectionConfiguration
from componentbase.controller import Manager, Request, Result
from componentbase.leaderelection import HealthzAdaptor, LeaderElectionHealthError
from componentbase.testing import LoopbackAPIServer, eventually
from componentbase.util import Duration
from componentbase.workqueue import ItemExponentialFailureRateLimiter
from tests.controller.helpers import configmap

pytestmark = pytest.mark.integration


def _election(**kw: Any) -> LeaderElectionConfiguration:
    """Short enough for a test, long enough that a loaded 2-core machine does not lose a lease by itself."""
    return LeaderElectionConfiguration(leader_elect=True, resource_name="mgr-test", resource_namespace="default",
                                       lease_duration=Duration("2s"), renew_deadline=Duration("1500ms"),
                                       retry_period=Duration("200ms"), **kw)


def _start(mgr: Manager) -> tuple[threading.Event, threading.Thread, list[int]]:
    stop = threading.Event()
    code: list[int] = []
    thread = threading.Thread(target=lambda: code.append(mgr.run(stop)))
    thread.start()
    return stop, thread, code


def test_without_election_controllers_run_after_the_sync_and_stop_returns_0(kube_apiserver: LoopbackAPIServer) -> None:
    api = kube_apiserver.api_client()
    ObjectClient(api).create(configmap("c1", hello="true"))
    mgr = Manager(api)
    cms = mgr.informer("v1", "ConfigMap", label_selector="hello=true")
    synced_first: list[bool] = []

    def reconcile(req: Request) -> None:
        synced_first.append(cms.has_synced())
        cm = cms.get(req.key)
        if cm is not None and "greeting" not in (cm.get("data") or {}):
            mgr.objects.patch(cm, {"data": {"greeting": f"hello, {req.name}"}})

    mgr.controller("hello", reconcile).watch(cms)
    stop, thread, code = _start(mgr)
    eventually(lambda: ObjectClient(api).get("v1", "ConfigMap", "c1", "default")["data"].get("greeting"),
             what="the greeting")
    assert mgr.is_leading() and mgr.client is api  # no election: not fenced, always leading
    stop.set()
    thread.join(10)
    assert code == [0] and synced_first and all(synced_first)


def test_a_runnable_that_raises_stops_the_manager_with_1(kube_apiserver: LoopbackAPIServer) -> None:
    mgr = Manager(kube_apiserver.api_client())
    others_stopped = threading.Event()

    def broken(stop: threading.Event) -> None:
        raise RuntimeError("boom")

    def patient(stop: threading.Event) -> None:
        stop.wait()
        others_stopped.set()

    mgr.add(broken)
    mgr.add(patient, needs_leader=False)
    _, thread, code = _start(mgr)
    thread.join(10)
    assert code == [1] and others_stopped.is_set()


def test_a_fenced_client_refuses_writes_before_sending_them_and_still_reads(
        kube_apiserver: LoopbackAPIServer) -> None:
    mgr = Manager(kube_apiserver.api_client(), leader_election=_election())
    mgr.fence.close_after(lambda: float("-inf"))  # not leading
    core = client.CoreV1Api(mgr.client)
    with pytest.raises(NotLeader, match=r"refused POST .*/configmaps: this replica is not the leader"):
        core.create_namespaced_config_map("default", configmap("fenced"))
    assert core.list_namespaced_config_map("default").items == []
    assert ("POST", "configmaps") not in {(v, r) for v, r in kube_apiserver.request_counts()}


def test_a_deposed_leader_still_working_sends_no_write_after_its_successor_took_over(
        kube_apiserver: LoopbackAPIServer) -> None:
    api = kube_apiserver.api_client()
    ObjectClient(api).create(configmap("counter"))
    accepted: dict[str, list[int]] = {"a": [], "b": []}
    refused: list[str] = []

    def writer(name: str, mgr: Manager, busy: Callable[[], bool]) -> Any:
        """Writes every 20 ms; while ``busy()``, work in hand that does not look at ``stop``."""
        def run(stop: threading.Event) -> None:
            objects = ObjectClient(mgr.client, mgr.cache.mapper)
            while busy() or not stop.is_set():
                time.sleep(0.02)  # not stop.wait: once stopped it would return at once and the loop spin
                try:
                    done = objects.patch(configmap("counter"), {"data": {"writer": name}})
                except NotLeader:
                    refused.append(name)
                    continue
                accepted[name].append(int(done["metadata"]["resourceVersion"]))
        return run

    a = Manager(api, leader_election=_election(), identity="a")
    a.add(writer("a", a, busy=lambda: len(accepted["b"]) < 5))  # still at work while its successor writes
    stop_a, thread_a, code_a = _start(a)
    eventually(lambda: accepted["a"], what="the first leader's writes")
    b = Manager(api, leader_election=_election(), identity="b")
    b.add(writer("b", b, busy=lambda: False))
    stop_b, thread_b, code_b = _start(b)
    time.sleep(0.3)  # b is a standby with a synced cache
    kube_apiserver.faults.set(verbs=("update",), resources=("leases",), error_rate=1.0)  # no renewal gets through
    eventually(lambda: "a" in refused, what="the first leader's writes to be refused at its renew deadline")
    kube_apiserver.faults.clear()  # b may take the lease once it expires; a is still busy writing
    try:
        eventually(lambda: len(accepted["b"]) >= 5, what="the successor's writes")
        thread_a.join(10)
    finally:
        stop_a.set()
        stop_b.set()
        thread_a.join(10)
        thread_b.join(10)
    assert code_a == [1], "a leader that lost its lease exits non-zero"
    assert code_b == [0]
    assert max(accepted["a"]) < min(accepted["b"]), "no write of the deposed leader after its successor's first"


@pytest.mark.parametrize("read_your_writes", [True, False])
def test_a_reconcile_right_after_its_own_write_sees_that_write_when_asked_to(
        kube_apiserver: LoopbackAPIServer, read_your_writes: bool) -> None:
    api = kube_apiserver.api_client()
    ObjectClient(api).create(configmap("counter"))
    mgr = Manager(api)
    cms = mgr.informer("v1", "ConfigMap")
    go = threading.Event()
    seen: list[int] = []

    def reconcile(req: Request) -> Result | None:
        cm = cms.get(req.key)
        if cm is None or not go.is_set():
            return Result(requeue_after=0.01)
        n = int((cm.get("data") or {}).get("n", "0"))
        seen.append(n)
        if n >= 5:
            return None
        mgr.objects.patch(cm, {"data": {"n": str(n + 1)}})
        return Result(requeue=True)  # at once, while the watch is held back

    mgr.controller("count", reconcile, read_your_writes=read_your_writes,
                   rate_limiter=ItemExponentialFailureRateLimiter(0.001, 0.001)).watch(cms)
    stop, thread, _ = _start(mgr)
    try:
        eventually(cms.has_synced, what="the cache")
        # The cache stops hearing of changes: watches stall, and so do the lists a reflector makes after its
        # watch was closed (on a loaded machine those relists kept the cache fresh and the premise failed).
        kube_apiserver.faults.set(verbs=("watch", "list"), stall=30.0)
        kube_apiserver.faults.close_watches()
        go.set()
        # Without read-your-writes the stale window starts at the first reconcile, not at go: under a CPU burner
        # per core the reconciler once first ran after the faults had cleared, and read a fresh cache each time
        # (seen [0, 1, 2, 3, 4, 5]). With it, a reconcile may wait for the relist the stall holds back.
        if not read_your_writes:
            eventually(lambda: seen, what="a reconcile while the cache is held back")
        time.sleep(0.5)
        kube_apiserver.faults.clear()
        eventually(lambda: 5 in seen, what="the count to reach 5")
    finally:
        stop.set()
        thread.join(10)
    if read_your_writes:
        assert seen[:6] == [0, 1, 2, 3, 4, 5], "each reconcile waited for the previous one's write"
    else:
        assert seen.count(0) > 1, f"without it the stale cache is read again (this test's premise): {seen}"


def test_the_leader_election_health_check_watches_the_managers_elector(kube_apiserver: LoopbackAPIServer) -> None:
    """``run_component`` puts the /healthz watchdog in the config; a Manager made from it attaches its elector:
    a replica that stopped renewing but still believes it leads fails the check once its lease has expired."""
    watchdog = HealthzAdaptor(0.0)
    config = Config(client=kube_apiserver.api_client(), leader_election=_election(), healthz_checks=[watchdog])
    mgr = Manager.from_config(config.complete())
    assert mgr.watchdog is watchdog
    stop, thread, code = _start(mgr)
    eventually(mgr.is_leading, what="leading")
    watchdog.check()  # leading and renewing: healthy
    kube_apiserver.faults.set(stall=5, path="/apis/coordination.k8s.io")  # renewals hang: leadership is lost
    try:
        thread.join(10)
        assert code == [1]

        def unhealthy() -> bool:
            try:
                watchdog.check()
            except LeaderElectionHealthError:
                return True
            return False

        eventually(unhealthy, 5, what="the check to fail once the lease it last held has expired")
    finally:
        kube_apiserver.faults.clear()
        stop.set()
        thread.join(10)


def test_a_stop_while_a_list_call_is_stalled_returns_without_waiting_for_it(
        kube_apiserver: LoopbackAPIServer) -> None:
    """SIGTERM during start-up, the API server not answering the first list: ``run`` returns at once, 0."""
    kube_apiserver.faults.set(verbs=("list",), resources=("configmaps",), stall=30.0)
    try:
        mgr = Manager(kube_apiserver.api_client())
        mgr.controller("never", lambda req: None).watch(mgr.informer("v1", "ConfigMap"))
        stop, thread, code = _start(mgr)
        time.sleep(0.5)  # the list is in flight, held by the server
        stopped = time.monotonic()
        stop.set()
        thread.join(10)
        assert code == [0] and time.monotonic() - stopped < 3
    finally:
        kube_apiserver.faults.clear()
