"""What ``controller_command`` hands a controller: Events from the Manager, a cache scoped to namespaces, one
election whatever the run function says, a client without a client-side limit, pflag's unknown-flag error."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

import componentbase
from componentbase.app import ControllerOptions
from componentbase.client import ObjectClient
from componentbase.componentconfig import LeaderElectionConfiguration, LeaderElectionOptions
from componentbase.controller import Manager, Request
from componentbase.informers import NAMESPACE_INDEX, meta_namespace_index
from componentbase.leaderelection import (
    DuplicateElectorError,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
    LeaseLock,
)
from componentbase.serving import configz
from componentbase.testing import LoopbackAPIServer, eventually
from tests.controller.helpers import configmap

pytestmark = pytest.mark.integration

TIMING = ["--leader-elect-lease-duration=2s", "--leader-elect-renew-deadline=1500ms",
          "--leader-elect-retry-period=200ms", "--leader-elect-resource-namespace=default", "--secure-port=0"]


def _greeting(objects: ObjectClient, name: str, namespace: str = "default") -> str:
    return str((objects.get("v1", "ConfigMap", name, namespace).get("data") or {}).get("greeting", ""))


def _greeter(mgr: Manager, recorder: Any = None) -> None:
    cms = mgr.informer("v1", "ConfigMap", label_selector="hello=true")

    def reconcile(req: Request) -> None:
        cm = cms.get(req.key)
        if cm is not None and "greeting" not in (cm.get("data") or {}):
            if recorder is not None:
                recorder.event(cm, "Normal", "Greeted", f"said hello to {req.name}")
            mgr.objects.patch(cm, {"data": {"greeting": f"hello, {req.name}"}})

    mgr.controller("hello", reconcile).watch(cms)


def _run(mgr: Manager) -> tuple[threading.Event, threading.Thread, list[int]]:
    stop = threading.Event()
    code: list[int] = []
    thread = threading.Thread(target=lambda: code.append(mgr.run(stop)))
    thread.start()
    return stop, thread, code


def test_events_recorded_through_the_manager_are_written_and_flushed_when_it_stops(
        kube_apiserver: LoopbackAPIServer) -> None:
    api = kube_apiserver.api_client()
    objects = ObjectClient(api)
    objects.create(configmap("c1", hello="true"))
    mgr = Manager(api)
    assert mgr.event_recorder("hello").broadcaster is mgr.event_broadcaster  # one broadcaster, made on first use
    _greeter(mgr, mgr.event_recorder("hello"))
    stop, thread, code = _run(mgr)
    eventually(lambda: _greeting(objects, "c1"), what="the greeting")
    stop.set()  # at once: the Event queued with the patch is written before run returns
    thread.join(10)
    assert code == [0]
    events = client.CoreV1Api(api).list_namespaced_event("default").items
    greeted = [e for e in events if e.reason == "Greeted"]
    assert [(e.involved_object.kind, e.involved_object.name, e.source and e.source.component, e.message, e.type)
            for e in greeted] == [("ConfigMap", "c1", "hello", "said hello to c1", "Normal")]


def test_a_cache_of_several_namespaces_holds_only_those_and_cluster_scoped_kinds_whole(
        kube_apiserver: LoopbackAPIServer) -> None:
    api = kube_apiserver.api_client()
    objects = ObjectClient(api)
    for ns in ("a", "b", "c"):
        objects.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        objects.create(configmap("before", ns, hello="true"))
    mgr = Manager(api, namespace=["a", "b"])
    cms = mgr.informer("v1", "ConfigMap", label_selector="hello=true")
    cms.add_indexers({NAMESPACE_INDEX: meta_namespace_index})
    namespaces = mgr.informer("v1", "Namespace")
    _greeter(mgr)
    stop, thread, code = _run(mgr)
    try:
        eventually(lambda: _greeting(objects, "before", "a") and _greeting(objects, "before", "b"),
                   what="both namespaces' greetings")
        objects.create(configmap("after", "b", hello="true"))
        objects.create(configmap("after", "c", hello="true"))
        eventually(lambda: _greeting(objects, "after", "b"), what="the watch of namespace b")
        assert sorted(o["metadata"]["namespace"] for o in cms.list()) == ["a", "b", "b"]
        assert cms.get("a/before") is not None and cms.get("c/before") is None
        assert sorted(o["metadata"]["name"] for o in cms.by_index(NAMESPACE_INDEX, "b")) == ["after", "before"]
        assert cms.by_index(NAMESPACE_INDEX, "c") == []
        assert {"a", "b", "c", "default"} <= {o["metadata"]["name"] for o in namespaces.list()}
    finally:
        stop.set()
        thread.join(10)
    assert code == [0]
    assert _greeting(objects, "before", "c") == "" and _greeting(objects, "after", "c") == ""


def _command(name: str, run: Callable[[componentbase.CompletedConfig[Any], threading.Event], int]) -> Any:
    le = LeaderElectionConfiguration(resource_name=name, resource_namespace="default")
    cmd = componentbase.Command(name, ControllerOptions(leader_election=LeaderElectionOptions(le)), run,
                                configz_registry=configz.Registry())
    return cmd


def _execute(cmd: Any, args: list[str], stop: threading.Event) -> tuple[threading.Thread, list[int], io.StringIO]:
    err = io.StringIO()
    code: list[int] = []
    thread = threading.Thread(target=lambda: code.append(cmd.execute(args, stdout=io.StringIO(), stderr=err,
                                                                      stop=stop)))
    thread.start()
    return thread, code, err


def test_a_run_function_not_marked_elects_leader_whose_manager_is_from_config_leads_once_and_reconciles(
        kube_apiserver: LoopbackAPIServer) -> None:
    api = kube_apiserver.api_client()
    objects = ObjectClient(api)
    objects.create(configmap("c1", hello="true"))
    made: list[Manager] = []

    def run(completed: componentbase.CompletedConfig[Any], stop: threading.Event) -> int:
        mgr = Manager.from_config(completed)  # under run_component's election: no second elector
        made.append(mgr)
        _greeter(mgr)
        return mgr.run(stop)

    stop = threading.Event()
    thread, code, err = _execute(_command("once", run), [f"--kubeconfig={kube_apiserver.kubeconfig_path}", *TIMING],
                                 stop)
    try:
        assert eventually(lambda: _greeting(objects, "c1"), 20, what="the greeting") == "hello, c1"
        lease = objects.get("coordination.k8s.io/v1", "Lease", "once", "default")
        assert made[0].elector is not None and lease["spec"]["holderIdentity"] == made[0].elector.identity
        assert made[0].client is not api and made[0].fence.allows()  # fenced by the outer elector's deadline
    finally:
        stop.set()
        thread.join(20)
    assert code == [0], err.getvalue()
    assert not made[0].fence.allows()  # the outer election ended: its writes are refused


def test_a_second_elector_on_the_lease_from_its_own_leaders_work_is_one_clear_error_not_a_hang(
        kube_apiserver: LoopbackAPIServer) -> None:
    def run(completed: componentbase.CompletedConfig[Any], stop: threading.Event) -> int:
        config = completed.config  # a Manager electing by itself, under run_component's election
        mgr = Manager(config.client, leader_election=config.leader_election, lease_client=config.client)
        _greeter(mgr)
        return mgr.run(stop)

    stop = threading.Event()
    started = time.monotonic()
    thread, code, err = _execute(_command("twice", run), [f"--kubeconfig={kube_apiserver.kubeconfig_path}",
                                                          *TIMING], stop)
    thread.join(20)
    stop.set()
    assert code == [1]
    assert time.monotonic() - started < 15
    lines = [line for line in err.getvalue().splitlines() if "DuplicateElector" in line or "wait forever" in line]
    assert len(lines) == 1 and "leader election for lease default/twice started by the work of this process's " \
        "leader of that lease: it would wait forever" in lines[0]
    assert "Traceback" not in err.getvalue()


def test_two_electors_of_one_identity_on_one_lease_are_refused_at_start(kube_apiserver: LoopbackAPIServer) -> None:
    api = kube_apiserver.api_client()

    def elector() -> LeaderElector:
        callbacks = LeaderCallbacks(on_started_leading=lambda stop: None, on_stopped_leading=lambda: None)
        return LeaderElector(LeaderElectionConfig(lock=LeaseLock("default", "same", api), identity="me",
                                                  callbacks=callbacks, lease_duration=2.0, renew_deadline=1.5,
                                                  retry_period=0.2))

    first = elector().run_in_thread()
    try:
        with pytest.raises(DuplicateElectorError, match="already running in this process as me"):
            elector().run_in_thread()
    finally:
        first.stop(10)
    second = elector().run_in_thread()  # the first has stopped: its claim is gone
    second.stop(10)


def test_the_default_client_has_no_client_side_limit_and_a_flag_sets_one(kube_apiserver: LoopbackAPIServer) -> None:
    from componentbase.client._throttled import ThrottledApiClient

    def config(*args: str) -> componentbase.Config:
        options = componentbase.controller_command("limits", lambda mgr: None).options
        cmd = componentbase.Command("limits", options, lambda c, s: 0)
        assert cmd.flags.parse([f"--kubeconfig={kube_apiserver.kubeconfig_path}", "--secure-port=0", *args]) == []
        return options.config()

    default = config()
    assert (default.client_connection.qps, type(default.client).__name__) == (-1.0, "ApiClient")
    limited = config("--kube-api-qps=20", "--kube-api-burst=30")
    assert isinstance(limited.client, ThrottledApiClient) and limited.client.limiter is not None
    assert (limited.client.limiter.qps, limited.client.limiter.burst) == (20.0, 30)
    namespaces = config("--namespace=a,b", "--namespace", "c", "--namespace=a")
    assert namespaces.namespaces == ["a", "b", "c"]
    for built in (default, limited, namespaces):
        for api in (built.client, built.leader_election_client):
            if api is not None:
                api.close()


@pytest.mark.parametrize(("args", "line"), [
    (["--foo"], "Error: unknown flag: --foo"),
    (["--namespace=Not_A_Name", "--secure-port=0"], 'Error: --namespace "Not_A_Name": a lowercase RFC 1123 label'),
    (["--kube-api-burst=-1", "--secure-port=0"], "Error: --kube-api-burst -1 must not be negative"),
])
def test_bad_flags_are_one_line_and_exit_1(args: list[str], line: str) -> None:
    err = io.StringIO()
    cmd = componentbase.controller_command("hello", lambda mgr: None)
    assert cmd.execute(args, stdout=io.StringIO(), stderr=err) == 1
    assert err.getvalue().splitlines()[0].startswith(line)
    assert "Traceback" not in err.getvalue()
