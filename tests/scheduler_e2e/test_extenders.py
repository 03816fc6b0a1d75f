"""The config's HTTP extenders, with the scheduler against a loopback API server: what a user sees of them."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs
import pytest
from kubernetes import client

from componentbase.testing import eventually
from componentbase_examples.scheduler import config
from tests.scheduler.builders import node, pod

from .conftest import Cluster, Running

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif("extenders" not in attrs.fields_dict(config.KubeSchedulerConfiguration),
                       reason="the config has no extenders section"),
]


@pytest.fixture
def binder(kube_client: client.ApiClient) -> Iterator[str]:
    """An extender that filters to node "b" and binds through the official client; its URL prefix."""
    v1: Any = client.CoreV1Api(kube_client)

    def answer(path: str, args: dict[str, Any]) -> dict[str, Any]:
        if path.endswith("/filter"):
            return {"NodeNames": ["b"], "FailedNodes": {"a": "not b"}}
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": args["PodName"], "uid": args["PodUID"]},
                "target": {"apiVersion": "v1", "kind": "Node", "name": args["Node"]}}
        v1.create_namespaced_pod_binding(args["PodName"], args["PodNamespace"], body, _preload_content=False).read()
        return {"Error": ""}

    server, url = _serve(answer)
    yield url
    server.shutdown()
    server.server_close()


def test_an_extender_filters_and_binds(cluster: Cluster, start_scheduler: Callable[..., Running],
                                       binder: str) -> None:
    cluster.create(node("a", cpu="4", memory="8Gi"))
    cluster.create(node("b", cpu="4", memory="8Gi"))
    cluster.create(pod("web"))
    start_scheduler(f"""extenders:
- urlPrefix: {binder}
  filterVerb: filter
  bindVerb: bind
  nodeCacheCapable: true
""")
    eventually(lambda: cluster.node_of("web") == "b", what="web bound to b by the extender")
    [event] = cluster.wait_events("web", "Scheduled")
    assert event["message"] == "Successfully assigned default/web to b"


def test_a_non_ignorable_extender_down_fails_the_pod_with_kubes_message(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cluster.create(node("a", cpu="4", memory="8Gi"))
    cluster.create(pod("web"))
    start_scheduler(f"""extenders:
- urlPrefix: http://127.0.0.1:{port}/ext
  filterVerb: filter
- urlPrefix: http://127.0.0.1:{port}/other
  filterVerb: filter
  ignorable: true
""")
    message = f'Post "http://127.0.0.1:{port}/ext/filter": dial tcp 127.0.0.1:{port}: connect: connection refused'
    eventually(lambda: (cluster.condition("web") or {}).get("message") == message, what="the SchedulerError condition")
    condition = cluster.condition("web")
    assert condition is not None and (condition["status"], condition["reason"]) == ("False", "SchedulerError")
    assert cluster.wait_events("web", "FailedScheduling")[0]["message"] == message
    assert cluster.node_of("web") == ""


def _serve(answer: Callable[[str, dict[str, Any]], dict[str, Any]]) -> tuple[ThreadingHTTPServer, str]:
    """An extender answering ``answer(path, args)``; the server and its URL prefix."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            data = json.dumps(answer(self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                              ).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/ext"


def test_an_extender_with_a_preempt_verb_chooses_where_preemption_happens(
        cluster: Cluster, start_scheduler: Callable[..., Running]) -> None:
    from .test_preemption import _classes

    asked: list[dict[str, Any]] = []

    def answer(path: str, args: dict[str, Any]) -> dict[str, Any]:
        assert path == "/ext/preempt"
        asked.append(args)
        kept = {name: victims for name, victims in args["NodeNameToMetaVictims"].items() if name == "b"}
        return {"NodeNameToMetaVictims": kept}

    server, url = _serve(answer)
    try:
        _classes(cluster, low=10, high=1000)
        uids = {}
        for name in ("a", "b"):
            cluster.create(node(name, cpu="1", memory="2Gi"))
            p = pod(f"low-{name}", cpu="800m", priorityClassName="low")
            p["spec"]["nodeName"] = name
            uids[name] = cluster.create(p)["metadata"]["uid"]
        start_scheduler(f"""extenders:
- urlPrefix: {url}
  preemptVerb: preempt
  nodeCacheCapable: true
""")
        cluster.create(pod("urgent", cpu="800m", priorityClassName="high"))
        eventually(lambda: cluster.pods()["low-b"]["metadata"].get("deletionTimestamp"), what="low-b preempted")
        eventually(lambda: cluster.pods()["urgent"]["status"].get("nominatedNodeName") == "b", what="urgent nominated")
        assert "deletionTimestamp" not in cluster.pods()["low-a"]["metadata"]  # the candidate the extender dropped
        cluster.delete_pod("low-b")  # the kubelet's part: its containers stopped
        eventually(lambda: cluster.node_of("urgent") == "b", what="urgent bound where the extender kept a victim")
        (args, *_) = asked
        assert sorted(args["NodeNameToMetaVictims"]) == ["a", "b"] and args["Pod"]["metadata"]["name"] == "urgent"
        assert {n: [v["UID"] for v in m["Pods"]] for n, m in args["NodeNameToMetaVictims"].items()} == \
            {"a": [uids["a"]], "b": [uids["b"]]}
    finally:
        server.shutdown()
        server.server_close()
