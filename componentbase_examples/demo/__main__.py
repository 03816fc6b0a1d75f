"""``python -m componentbase_examples.demo``: the main job — a small cluster of example components runs a batch of pods.

It starts a loopback API server (or uses ``--kubeconfig``), ``--nodes`` virtual kubelets with the
``process`` provider and ``--schedulers`` scheduler replicas with leader election; creates ``--pods`` pods
in two waves, SIGKILLs the leading scheduler between them to show failover; shows every pod's progress;
fetches a few pods' logs from the kubelet API; prints a summary. Exit 0 when every pod succeeded.
With ``--keep`` everything stays up afterwards, for kubectl, until Ctrl-C.
"""

from __future__ import annotations

import contextlib
import random
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

import componentbase
from componentbase import field
from componentbase_examples.demo import cluster
from componentbase_examples.demo.progress import Progress
from componentbase_examples.demo.workload import LABEL, pod_manifest

NAMESPACE = "default"
TOKEN = "componentbase-demo-admin-token"
TICK = 0.2


@attrs.define(kw_only=True)
class DemoSettings:
    pods: int
    nodes: int
    schedulers: int
    kubeconfig: str
    timeout: componentbase.Duration
    keep: bool = False


@attrs.define
class DemoOptions(componentbase.Options):
    pods: int = componentbase.flag("pods", "How many pods to run.", default=30, section="Demo flags")
    nodes: int = componentbase.flag("nodes", "How many virtual kubelets to start.", default=3,
                                    section="Demo flags")
    schedulers: int = componentbase.flag("schedulers", "How many scheduler replicas to start.", default=2,
                                         section="Demo flags")
    kubeconfig: str = componentbase.flag(
        "kubeconfig", "Run against the cluster of this kubeconfig instead of an embedded loopback API server.",
        default="", section="Demo flags")
    timeout: componentbase.Duration = componentbase.flag(
        "timeout", "Give up after this long.", default=componentbase.Duration("3m"), section="Demo flags",
        type=componentbase.cli.DURATION)
    keep: bool = componentbase.flag(
        "keep", "After the scenario, leave the API server, virtual kubelets and schedulers running and print "
        "the KUBECONFIG line for kubectl; Ctrl-C stops everything.", default=False, section="Demo flags")
    logs: componentbase.LogsOptions = attrs.field(factory=componentbase.LogsOptions)

    def validate(self) -> list[Exception]:
        errs = super().validate()
        for name in ("pods", "nodes", "schedulers"):
            if getattr(self, name) < 1:
                errs.append(field.invalid(name, getattr(self, name), "must be at least 1"))
        if self.timeout <= 0:
            errs.append(field.invalid("timeout", self.timeout, "must be greater than zero"))
        if self.kubeconfig and not Path(self.kubeconfig).is_file():
            errs.append(field.invalid("kubeconfig", self.kubeconfig, "no such file"))
        return errs

    def apply_to(self, config: componentbase.Config) -> None:
        config.component_config = DemoSettings(pods=self.pods, nodes=self.nodes, schedulers=self.schedulers,
                                               kubeconfig=self.kubeconfig, timeout=self.timeout, keep=self.keep)


def wait_until(condition: Callable[[], bool], timeout: float, stop: threading.Event,
               tick: Callable[[], None] = lambda: None) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stop.is_set():
        tick()
        if condition():
            return True
        stop.wait(TICK)
    return False


@contextlib.contextmanager
def api_server(settings: DemoSettings) -> Iterator[tuple[str, str]]:
    """(kubeconfig path, bearer token for the kubelet API): the given cluster, or an embedded one, which
    serves HTTPS with its own CA (the kubeconfig carries it) because it authenticates tokens."""
    if settings.kubeconfig:
        yield settings.kubeconfig, ""  # the kubeconfig's own bearer token, if it has one
        return
    from componentbase.testing import (
        LoopbackAPIServer,
        User,
    )

    admin = User("demo-admin", "demo-admin", ("system:masters",))
    with LoopbackAPIServer(tokens={TOKEN: admin}) as server:
        print(f"loopback API server at {server.url}")
        yield server.kubeconfig_path, TOKEN


class Demo:
    def __init__(self, settings: DemoSettings, stop: threading.Event, kubeconfig: str, token: str,
                 workdir: Path) -> None:
        from kubernetes import client

        self.settings = settings
        self.stop = stop
        self.workdir = workdir
        self.kubeconfig = kubeconfig
        self.api = componentbase.new_api_client(componentbase.ClientConnectionConfiguration(kubeconfig=kubeconfig))
        if not token:  # the kubeconfig's own bearer token, as the official client loaded it
            keys = self.api.configuration.api_key or {}
            bearer = keys.get("BearerToken") or keys.get("authorization") or ""
            token = bearer.removeprefix("Bearer ")
        # Typed as Any: the calls pass plain dicts and read raw JSON (_preload_content=False).
        self.core: Any = client.CoreV1Api(self.api)
        self.coordination: Any = client.CoordinationV1Api(self.api)
        self.token = token
        self.progress = Progress(settings.pods)
        self.kubelets: list[tuple[cluster.Process, int]] = []
        self.replicas: list[cluster.Process] = []
        self.schedulers: dict[str, cluster.Process] = {}  # identity -> process, once each campaigns
        self.deadline = time.monotonic() + settings.timeout
        self.watching = threading.Event()  # set in close(): the informers stop before the API server does

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    # --- the cluster ------------------------------------------------------------------------------------

    def start(self) -> bool:
        """Every process at once (each spends its first second or two importing), then wait for them in turn."""
        from componentbase.serving import maybe_default_self_signed

        cert = maybe_default_self_signed(str(self.workdir), "kubelet")
        self.kubelet_ca = cert[0]
        for i in range(self.settings.nodes):
            self.kubelets.append(cluster.start_virtual_kubelet(i, self.kubeconfig, self.workdir, cert))
        config = cluster.scheduler_config(self.kubeconfig, self.workdir)
        self.replicas = [cluster.start_scheduler(i, config, self.workdir) for i in range(self.settings.schedulers)]
        return self.wait_for_nodes() and self.wait_for_schedulers()

    def wait_for_nodes(self) -> bool:
        names = {p.name for p, _ in self.kubelets}
        ok = wait_until(lambda: names <= self.ready_nodes(), min(60.0, self.left()), self.stop)
        self.progress.say(f"{len(names)} virtual kubelets Ready: {', '.join(sorted(names))}" if ok
                          else "virtual kubelets did not become Ready; see their logs in " + str(self.workdir))
        return ok

    # The demo's runtime (the client, informers, ssl, urllib) is imported where it runs, not by --help.

    def ready_nodes(self) -> set[str]:
        from componentbase.client import json_body

        raw = self.core.list_node(label_selector="type=virtual-kubelet", _preload_content=False)
        ready = set()
        for node in json_body(raw)["items"]:
            conditions = (node.get("status") or {}).get("conditions") or []
            if any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
                ready.add(node["metadata"]["name"])
        return ready

    def wait_for_schedulers(self) -> bool:
        for process in self.replicas:
            self.schedulers[cluster.identity_of(process)] = process
        ok = wait_until(lambda: bool(self.leader()), min(30.0, self.left()), self.stop)
        self.progress.say(f"{len(self.schedulers)} scheduler replicas; leader: {self.leader_name()}" if ok
                          else "no scheduler became leader")
        return ok

    def leader(self) -> str:
        from kubernetes.client.exceptions import ApiException

        from componentbase.client import json_body

        try:
            raw = self.coordination.read_namespaced_lease(cluster.LEASE_NAME, cluster.LEASE_NAMESPACE,
                                                          _preload_content=False)
        except ApiException:
            return ""
        return str((json_body(raw).get("spec") or {}).get("holderIdentity") or "")

    def leader_name(self) -> str:
        identity = self.leader()
        process = self.schedulers.get(identity)
        return f"{process.name} ({identity})" if process else identity

    # --- the work ---------------------------------------------------------------------------------------

    def create_pods(self, indexes: range, rng: random.Random) -> None:
        for i in indexes:
            self.core.create_namespaced_pod(NAMESPACE, pod_manifest(i, rng), _preload_content=False).read()

    def tick(self) -> None:
        self.progress.leader = self.leader_name()
        self.progress.render()

    def placed(self, count: int) -> bool:
        c = self.progress.counts()
        return c["Scheduled"] + c["Running"] + c["Succeeded"] + c["Failed"] >= count

    def run(self) -> int:
        from componentbase.informers import InformerFactory

        rng = random.Random(7)
        informers = InformerFactory(self.api)
        pods = informers.pods(NAMESPACE, label_selector=f"app={LABEL}")
        pods.add_event_handler(on_add=self.progress.observe, on_update=lambda old, new: self.progress.observe(new))
        informers.start(self.watching)
        informers.wait_for_cache_sync(30)
        half = max(1, self.settings.pods // 2)
        self.progress.say(f"creating {half} pods")
        self.create_pods(range(half), rng)
        wait_until(lambda: self.placed(half), self.left(), self.stop, self.tick)
        if self.settings.pods > half and len(self.schedulers) > 1:
            self.failover()
        if self.settings.pods > half:
            self.progress.say(f"creating {self.settings.pods - half} more pods")
            self.create_pods(range(half, self.settings.pods), rng)
        finished = wait_until(self.progress.done, self.left(), self.stop, self.tick)
        self.tick()
        if not finished:
            self.progress.say("timed out before every pod finished" if not self.stop.is_set() else "stopped")
        self.show_logs()
        print("\n" + self.progress.summary())
        counts = self.progress.counts()
        print(f"\nscheduler leader: {self.leader_name()}")
        print(f"{counts['Succeeded']}/{self.settings.pods} pods succeeded, {counts['Failed']} failed")
        return 0 if counts["Succeeded"] == self.settings.pods else 1

    def failover(self) -> None:
        old = self.leader()
        process = self.schedulers.get(old)
        if process is None:
            return
        process.kill()
        killed = time.monotonic()
        self.progress.say(f"SIGKILLed the leading scheduler {process.name}; waiting for its lease to expire")
        if wait_until(lambda: self.leader() not in ("", old), self.left(), self.stop, self.tick):
            self.progress.say(f"failover: {self.leader_name()} leads after {time.monotonic() - killed:.1f}s")

    def show_logs(self, count: int = 3) -> None:
        """A few pods' logs, from the kubelet API of the node each ran on (over TLS, with a bearer token)."""
        import ssl
        import urllib.request

        ports = {p.name: port for p, port in self.kubelets}
        context = ssl.create_default_context(cafile=self.kubelet_ca)
        shown = 0
        for name, (state, node) in sorted(self.progress.snapshot().items()):
            if shown >= count or state != "Succeeded" or node not in ports:
                continue
            url = f"https://127.0.0.1:{ports[node]}/containerLogs/{NAMESPACE}/{name}/work"
            request = urllib.request.Request(url, headers={"Authorization": f"Bearer {self.token}"})
            try:
                with urllib.request.urlopen(request, context=context, timeout=10) as answer:
                    text = answer.read().decode(errors="replace").strip()
            except OSError as err:
                text = f"(could not fetch: {err})"
            print(f"\n--- logs of {name} on {node} (kubelet API :{ports[node]}) ---\n{text}")
            shown += 1

    # --- cleanup ----------------------------------------------------------------------------------------

    def close(self) -> None:
        self.watching.set()
        for process in self.replicas:
            process.stop()
        if self.settings.kubeconfig:  # a real cluster: leave nothing behind
            with contextlib.suppress(Exception):
                self.core.delete_collection_namespaced_pod(NAMESPACE, label_selector=f"app={LABEL}",
                                                           grace_period_seconds=0)
        for process, _ in self.kubelets:
            process.stop()
        if self.settings.kubeconfig:
            for process, _ in self.kubelets:
                with contextlib.suppress(Exception):
                    self.core.delete_node(process.name)
        self.api.close()


def run(completed: componentbase.CompletedConfig[Any], stop: threading.Event) -> int:
    settings: DemoSettings = completed.config.component_config
    with api_server(settings) as (kubeconfig, token), tempfile.TemporaryDirectory(prefix="cb-demo-") as tmp:
        demo = Demo(settings, stop, kubeconfig, token, Path(tmp))
        try:
            if not demo.start():
                return 1
            code = demo.run()
            if settings.keep and not stop.is_set():
                keep_running(kubeconfig, stop)
            return code
        finally:
            demo.close()


def keep_running(kubeconfig: str, stop: threading.Event) -> None:
    """Serve kubectl until ``stop`` (Ctrl-C), on the kubeconfig the components use: the embedded server's
    (HTTPS, its CA and the admin's token in it) or the given cluster's."""
    print("\nEverything keeps running. In another terminal:\n"
          f"  export KUBECONFIG={kubeconfig}\n"
          "  kubectl get nodes,pods -o wide\n"
          "Ctrl-C stops it all.", flush=True)
    stop.wait()


def new_command() -> componentbase.Command:
    return componentbase.Command("demo", DemoOptions(), run,
                                 short="A loopback cluster of example components runs a batch of pods.")


if __name__ == "__main__":
    new_command().main()
