"""Process pods' status as a kubelet reports it: container states, conditions and their reasons, IPs, init
containers and probes, read through the official client from the loopback API server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from componentbase.testing import eventually
from tests.virtual_kubelet.conftest import Kube, free_ports
from tests.virtual_kubelet.test_process import (  # noqa: F401 - the fixtures apiserver, node and vk, used by name
    apiserver,
    container,
    node,
    py,
    vk,
)

#: A process-provider node for every test: one per module (``node``), on the worker that started it.
pytestmark = [pytest.mark.process, pytest.mark.usefixtures("vk"), pytest.mark.xdist_group("vk-podstatus")]

#: Waits for the file named by its first argument, then exits with the code in its second.
WAIT_FOR = "import os,sys,time\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.05)\nsys.exit(int(sys.argv[2]))"


def _status(kube: Kube, name: str) -> dict[str, Any]:
    return (kube.pod(name) or {}).get("status") or {}


def _conditions(kube: Kube, name: str) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in _status(kube, name).get("conditions") or ()}


def _state(kube: Kube, name: str, init: bool = False) -> dict[str, Any]:
    statuses = _status(kube, name).get("initContainerStatuses" if init else "containerStatuses") or [{}]
    return {s.get("name", ""): s for s in statuses}


def test_container_states_conditions_and_ips_through_a_pods_life(kube: Kube, tmp_path: Path) -> None:
    done = tmp_path / "done"
    kube.create_pod("job", container(py(WAIT_FOR), args=[str(done), "0"]), restartPolicy="Never")
    eventually(lambda: _status(kube, "job").get("phase") == "Running", what="the pod to run")
    status = _status(kube, "job")
    assert (status["hostIP"], status["hostIPs"], status["podIP"], status["podIPs"]) == (
        "127.0.0.1", [{"ip": "127.0.0.1"}], "127.0.0.1", [{"ip": "127.0.0.1"}])
    (cs,) = status["containerStatuses"]
    assert cs["ready"] is True and cs["started"] is True and cs["restartCount"] == 0
    assert set(cs["state"]) == {"running"} and cs["state"]["running"]["startedAt"].endswith("Z")
    conditions = _conditions(kube, "job")
    assert sorted(conditions) == ["ContainersReady", "Initialized", "PodReadyToStartContainers", "PodScheduled",
                                  "Ready"]
    assert all(c["status"] == "True" and "reason" not in c for c in conditions.values())

    done.touch()
    eventually(lambda: _status(kube, "job").get("phase") == "Succeeded", what="the pod to succeed")
    terminated = _state(kube, "job")["c"]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    assert terminated["startedAt"] <= terminated["finishedAt"]
    conditions = _conditions(kube, "job")
    assert (conditions["Ready"]["status"], conditions["Ready"]["reason"]) == ("False", "PodCompleted")
    assert (conditions["Initialized"]["status"], conditions["Initialized"]["reason"]) == ("True", "PodCompleted")
    assert conditions["PodReadyToStartContainers"]["status"] == "False"

    kube.create_pod("crashy", container(py("raise SystemExit(2)")), restartPolicy="Always")
    cs = eventually(lambda: (s := _state(kube, "crashy").get("c", {})).get("restartCount", 0) >= 1
                    and "waiting" in s.get("state", {}) and s, what="a crash loop")
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff" and cs["ready"] is False
    assert (cs["lastState"]["terminated"]["exitCode"], cs["lastState"]["terminated"]["reason"]) == (2, "Error")
    ready = _conditions(kube, "crashy")["Ready"]
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False", "ContainersNotReady", "containers with unready status: [c]")


def test_init_containers_run_in_order_before_the_app_containers(kube: Kube, tmp_path: Path) -> None:
    trace, go = tmp_path / "trace", tmp_path / "go"
    first = py(f"open({str(trace)!r}, 'a').write('first\\n')")
    second = py(f"import os,time\nopen({str(trace)!r}, 'a').write('second\\n')\n"
                f"while not os.path.exists({str(go)!r}): time.sleep(0.05)")
    app = py(f"open({str(trace)!r}, 'a').write('app\\n'); import time; time.sleep(30)")
    kube.create_pod("ordered", [{"name": "app", "image": "-", "command": app}],
                    initContainers=[{"name": "first", "image": "-", "command": first},
                                    {"name": "second", "image": "-", "command": second}])
    eventually(lambda: _state(kube, "ordered", init=True).get("second", {}).get("state", {}).get("running"),
               what="the second init container to run")
    status = _status(kube, "ordered")
    assert status["phase"] == "Pending"
    init = _state(kube, "ordered", init=True)
    assert init["first"]["state"]["terminated"]["reason"] == "Completed" and init["first"]["ready"] is True
    assert _state(kube, "ordered")["app"]["state"] == {"waiting": {"reason": "PodInitializing"}}
    initialized = _conditions(kube, "ordered")["Initialized"]
    assert (initialized["status"], initialized["reason"], initialized["message"]) == (
        "False", "ContainersNotInitialized", "containers with incomplete status: [second]")

    go.touch()
    eventually(lambda: _status(kube, "ordered").get("phase") == "Running"
               and _state(kube, "ordered")["app"].get("ready"), what="the app container to run")
    assert _conditions(kube, "ordered")["Initialized"]["status"] == "True"
    eventually(lambda: trace.read_text() == "first\nsecond\napp\n", what="the app container's start")


def test_a_failing_init_container_fails_a_never_pod_and_is_retried_under_always(kube: Kube, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    kube.create_pod("never", [{"name": "app", "image": "-", "command": py(f"open({str(ran)!r}, 'w')")}],
                    initContainers=[{"name": "init", "image": "-", "command": py("raise SystemExit(4)")}],
                    restartPolicy="Never")
    eventually(lambda: _status(kube, "never").get("phase") == "Failed", what="the Never pod to fail")
    terminated = _state(kube, "never", init=True)["init"]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (4, "Error")
    assert _state(kube, "never")["app"]["state"] == {"waiting": {"reason": "PodInitializing"}}
    assert not ran.exists()

    counter = tmp_path / "count"
    flaky = py(f"import os\np={str(counter)!r}\nn=len(open(p).read()) if os.path.exists(p) else 0\n"
               "open(p,'a').write('x')\nraise SystemExit(0 if n >= 1 else 1)")
    kube.create_pod("retried", [{"name": "app", "image": "-", "command": ["sleep", "30"]}],
                    initContainers=[{"name": "init", "image": "-", "command": flaky}], restartPolicy="Always")
    eventually(lambda: _status(kube, "retried").get("phase") == "Running", what="the app to run after a retry")
    init = _state(kube, "retried", init=True)["init"]
    assert init["restartCount"] == 1 and init["lastState"]["terminated"]["exitCode"] == 1
    assert init["state"]["terminated"]["exitCode"] == 0


def test_readiness_and_liveness_probes(kube: Kube, tmp_path: Path) -> None:
    ready_file, alive_file = tmp_path / "ready", tmp_path / "alive"
    alive_file.touch()
    port, = free_ports(1)
    server = py(f"import http.server\nhttp.server.HTTPServer(('127.0.0.1', {port}), "
                "http.server.SimpleHTTPRequestHandler).serve_forever()")
    fast = {"periodSeconds": 1, "failureThreshold": 1}
    kube.create_pod("probed", [
        {"name": "exec", "image": "-", "command": ["sleep", "60"],
         "readinessProbe": {"exec": {"command": ["test", "-f", str(ready_file)]}, **fast},
         "livenessProbe": {"exec": {"command": ["test", "-f", str(alive_file)]}, **fast,
                           "terminationGracePeriodSeconds": 1}},
        {"name": "http", "image": "-", "command": server, "workingDir": str(tmp_path),
         "ports": [{"name": "web", "containerPort": port}],
         "readinessProbe": {"httpGet": {"port": "web", "path": "/"}, **fast},
         "livenessProbe": {"tcpSocket": {"port": port}, **fast, "initialDelaySeconds": 1}}])
    eventually(lambda: _state(kube, "probed").get("http", {}).get("ready"), 30, what="the HTTP probe to pass")
    exec_status = _state(kube, "probed")["exec"]
    assert exec_status["state"].get("running") and exec_status["ready"] is False  # running, not ready
    # The HTTP probe (1 s period, one failure turns it unready) can miss a beat on a loaded machine: the
    # condition is asserted once it names the exec container alone, as it must while HTTP is ready.
    ready = eventually(lambda: (c := _conditions(kube, "probed")["Ready"])["message"].endswith("[exec]") and c, 30,
                       what="the Ready condition naming the exec container alone")
    assert (ready["status"], ready["message"]) == ("False", "containers with unready status: [exec]")
    unhealthy = eventually(lambda: [e for e in kube.events() if e["involvedObject"]["name"] == "probed"
                                    and e["message"].startswith("Readiness probe failed: command ['test', '-f', ")],
                           30, what="the exec readiness probe's Unhealthy event")
    assert (unhealthy[0]["type"], unhealthy[0]["reason"], unhealthy[0]["source"]["component"]) == (
        "Warning", "Unhealthy", "kubelet")

    ready_file.touch()
    eventually(lambda: _conditions(kube, "probed").get("Ready", {}).get("status") == "True", 30,
               what="the pod to be Ready")
    alive_file.unlink()  # liveness fails: the container is killed and started again (restartPolicy Always)
    restarted = eventually(lambda: (s := _state(kube, "probed")["exec"]).get("restartCount", 0) >= 1 and s, 30,
                           what="the liveness restart")
    assert restarted["lastState"]["terminated"]["exitCode"] in (137, 143)
    assert _state(kube, "probed")["http"]["restartCount"] == 0  # its tcpSocket liveness probe passes
    killing = eventually(lambda: [e for e in kube.events() if e["involvedObject"]["name"] == "probed"
                                  and e["reason"] == "Killing"], 30, what="the Killing event")
    assert killing[0]["message"] == "Container exec failed liveness probe, will be restarted"


def test_a_startup_probe_holds_readiness_back_and_kills_a_container_that_never_starts(
        kube: Kube, tmp_path: Path) -> None:
    up = tmp_path / "up"
    fast = {"periodSeconds": 1, "failureThreshold": 2}
    kube.create_pod("slow", [
        {"name": "app", "image": "-", "command": ["sleep", "60"],
         "startupProbe": {"exec": {"command": ["test", "-f", str(up)]}, "periodSeconds": 1, "failureThreshold": 60},
         "readinessProbe": {"exec": {"command": ["true"]}, **fast}},
        {"name": "never", "image": "-", "command": ["sleep", "60"],
         "startupProbe": {"exec": {"command": ["false"]}, **fast, "terminationGracePeriodSeconds": 1}}])
    eventually(lambda: _state(kube, "slow").get("app", {}).get("state", {}).get("running"), 30, what="app running")
    app = _state(kube, "slow")["app"]
    assert (app["started"], app["ready"]) == (False, False)  # its readiness probe passes, but it has not started
    up.touch()
    eventually(lambda: (_state(kube, "slow")["app"].get("started"), _state(kube, "slow")["app"].get("ready"))
               == (True, True), 30, what="app started, then ready")
    never = eventually(lambda: (s := _state(kube, "slow")["never"]).get("restartCount", 0) >= 1 and s, 30,
                       what="the container failing its startup probe restarted")
    assert never["lastState"]["terminated"]["exitCode"] in (137, 143) and never["started"] is False
