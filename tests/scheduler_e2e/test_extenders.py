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

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            args = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path.endswith("/filter"):
                answer: dict[str, Any] = {"NodeNames": ["b"], "FailedNodes": {"a": "not b"}}
            else:
                body = {"apiVersion": "v1", "kind": "Binding",
                        "metadata": {"name": args["PodName"], "uid": args["PodUID"]},
                        "target": {"apiVersion": "v1", "kind": "Node", "name": args["Node"]}}
                v1.create_namespaced_pod_binding(args["PodName"], args["PodNamespace"], body,
                                                 _preload_content=False).read()
                answer = {"Error": ""}
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/ext"
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
