"""HTTP extenders as kube-scheduler calls them, against small extenders served by http.server on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from componentbase_examples.scheduler.algorithm import FitError
from componentbase_examples.scheduler.extender import (
    EXTENDER_NAME,
    ExtenderError,
    HTTPExtender,
    bind_with_extenders,
    extenders_from_config,
    ignore_extender_resources,
)
from componentbase_examples.scheduler.extenderpreemption import preempt_with_extenders
from componentbase_examples.scheduler.podinfo import PodInfo

from .builders import Cluster, node, pod

pytestmark = pytest.mark.integration

Answer = Callable[[dict[str, Any]], tuple[int, Any]]


@dataclasses.dataclass
class Spec:
    """One ``extenders`` entry, with the config's defaults."""

    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 1
    enable_https: bool = False
    tls_config: Any = None
    http_timeout: float = 0.0
    node_cache_capable: bool = False
    managed_resources: list[Any] = dataclasses.field(default_factory=list)
    ignorable: bool = False


@dataclasses.dataclass
class Managed:
    name: str
    ignored_by_scheduler: bool = False


class Extender:
    """An extender on 127.0.0.1 under ``/ext``: ``answers[verb](body)`` gives (code, JSON); requests recorded."""

    def __init__(self, answers: dict[str, Answer]) -> None:
        self.answers = answers
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.release = threading.Event()  # a handler that hangs waits on it
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                verb = self.path.removeprefix("/ext/")
                outer.requests.append((verb, body))
                code, answer = outer.answers[verb](body)
                data = json.dumps(answer).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the scheduler gave up waiting (the timeout test)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ext"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def verbs(self) -> list[str]:
        return [verb for verb, _ in self.requests]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[..., Extender]]:
    started: list[Extender] = []

    def start(**answers: Answer) -> Extender:
        started.append(Extender(answers))
        return started[-1]

    yield start
    for e in started:
        e.close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def three_nodes(*specs: Spec) -> Cluster:
    cluster = Cluster([node(n, cpu="4", memory="8Gi") for n in ("a", "b", "c")])
    cluster.algorithm.extenders = [HTTPExtender(s) for s in specs]
    return cluster


def names(body: dict[str, Any]) -> list[str]:
    return [n["metadata"]["name"] for n in body["Nodes"]["items"]]


def test_filter_then_prioritize_choose_the_node(serve: Callable[..., Extender]) -> None:
    def keep_b_c(body: dict[str, Any]) -> tuple[int, Any]:
        kept = [n for n in body["Nodes"]["items"] if n["metadata"]["name"] != "a"]
        return 200, {"Nodes": {"items": kept}, "FailedNodes": {"a": "a is full"}, "Error": ""}

    def prefer_c(body: dict[str, Any]) -> tuple[int, Any]:
        return 200, [{"Host": n, "Score": 10 if n == "c" else 0} for n in names(body)]

    ext = serve(filter=keep_b_c, prioritize=prefer_c)
    cluster = three_nodes(Spec(ext.url, filter_verb="filter", prioritize_verb="prioritize", weight=2))
    assert cluster.schedule(pod("web")) == "c"
    assert ext.verbs() == ["filter", "prioritize"]
    (_, filtered), (_, prioritized) = ext.requests
    assert sorted(names(filtered)) == ["a", "b", "c"] and filtered["NodeNames"] is None
    assert filtered["Pod"]["metadata"]["name"] == "web"
    assert sorted(names(prioritized)) == ["b", "c"]  # only the nodes that passed the extender's filter


def test_node_cache_capable_gets_names_and_may_answer_in_any_case(serve: Callable[..., Extender]) -> None:
    ext = serve(filter=lambda body: (200, {"nodenames": ["b"], "failednodes": {"a": "no", "c": "no"}}))
    cluster = three_nodes(Spec(ext.url, filter_verb="filter", node_cache_capable=True))
    assert cluster.schedule(pod("web")) == "b"
    [(_, body)] = ext.requests
    assert sorted(body["NodeNames"]) == ["a", "b", "c"] and body["Nodes"] is None


def test_rejections_join_the_fit_error(serve: Callable[..., Extender]) -> None:
    ext = serve(filter=lambda body: (200, {"NodeNames": [], "FailedNodes": {"a": "no gpu", "b": "no gpu", "c": "x"},
                                           "FailedAndUnresolvableNodes": {"c": "broken"}}))
    cluster = three_nodes(Spec(ext.url, filter_verb="filter", node_cache_capable=True))
    with pytest.raises(FitError) as e:
        cluster.schedule(pod("web"))
    # c is unresolvable only: its FailedNodes entry is dropped, as kube-scheduler drops it
    assert str(e.value).split(" preemption: ", 1)[0] == "0/3 nodes are available: 1 broken, 2 no gpu."
    assert EXTENDER_NAME in e.value.diagnosis.unschedulable_plugins


def test_a_node_the_extender_was_not_given_is_an_error(serve: Callable[..., Extender]) -> None:
    ext = serve(filter=lambda body: (200, {"NodeNames": ["b", "z"]}))
    cluster = three_nodes(Spec(ext.url, filter_verb="filter", node_cache_capable=True))
    with pytest.raises(ExtenderError) as e:
        cluster.schedule(pod("web"))
    assert str(e.value) == f'extender "{ext.url}" claims a filtered node "z" which is not found in the input node list'


def test_an_extender_that_is_down_fails_scheduling_unless_ignorable() -> None:
    port = closed_port()
    url = f"http://127.0.0.1:{port}/ext"
    cluster = three_nodes(Spec(url, filter_verb="filter"))
    with pytest.raises(ExtenderError) as e:
        cluster.schedule(pod("web"))
    assert str(e.value) == f'Post "{url}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused'
    cluster = three_nodes(Spec(url, filter_verb="filter", prioritize_verb="prioritize", ignorable=True))
    assert cluster.schedule(pod("web")) in {"a", "b", "c"}


def test_an_error_code_or_an_error_answer_fails_the_filter(serve: Callable[..., Extender]) -> None:
    ext = serve(filter=lambda body: (500, {}), check=lambda body: (200, {"Error": "quota service unavailable"}))
    with pytest.raises(ExtenderError) as e:
        three_nodes(Spec(ext.url, filter_verb="filter")).schedule(pod("web"))
    assert str(e.value) == f"failed filter with extender at URL {ext.url}/filter, code 500"
    with pytest.raises(ExtenderError) as e:
        three_nodes(Spec(ext.url, filter_verb="check")).schedule(pod("web"))
    assert str(e.value) == "quota service unavailable"


def test_a_slow_extender_times_out(serve: Callable[..., Extender]) -> None:
    def hang(body: dict[str, Any]) -> tuple[int, Any]:
        ext.release.wait(30)
        return 200, {}

    ext = serve(filter=hang)
    with pytest.raises(ExtenderError) as e:
        three_nodes(Spec(ext.url, filter_verb="filter", http_timeout=0.3)).schedule(pod("web"))
    assert str(e.value) == (f'Post "{ext.url}/filter": context deadline exceeded '
                            "(Client.Timeout exceeded while awaiting headers)")


def test_a_failing_prioritize_only_loses_its_scores(serve: Callable[..., Extender]) -> None:
    ext = serve(prioritize=lambda body: (503, {}))
    cluster = three_nodes(Spec(ext.url, prioritize_verb="prioritize"))
    assert cluster.schedule(pod("web")) in {"a", "b", "c"}
    assert ext.verbs() == ["prioritize"]


def test_managed_resources_make_the_extender_interested_only_in_pods_using_them(
        serve: Callable[..., Extender]) -> None:
    ext = serve(filter=lambda body: (200, {"NodeNames": ["a"]}))
    spec = Spec(ext.url, filter_verb="filter", node_cache_capable=True, managed_resources=[Managed("example.com/gpu")])
    cluster = three_nodes(spec)
    cluster.schedule(pod("plain"))
    assert ext.requests == []
    gpu = pod("gpu")
    gpu["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "1"}
    assert cluster.schedule(gpu) == "a"
    assert ext.verbs() == ["filter"]


def test_a_binder_extender_binds_in_place_of_the_bind_plugins(serve: Callable[..., Extender]) -> None:
    ext = serve(bind=lambda body: (200, {"Error": ""}), refuse=lambda body: (200, {"Error": "node gone"}))
    cluster = three_nodes()
    p = pod("web", namespace="shop")
    p["metadata"]["uid"] = "uid-1"
    info = PodInfo(p)
    binder = [HTTPExtender(Spec(ext.url, bind_verb="bind"))]
    status = cluster.framework.run_bind({}, info, "b", lambda q, n: bind_with_extenders(binder, q, n))
    assert status is None  # bound: DefaultBinder (with no API here) was not called
    assert ext.requests == [("bind", {"PodName": "web", "PodNamespace": "shop", "PodUID": "uid-1", "Node": "b"})]
    refusing = [HTTPExtender(Spec(ext.url, bind_verb="refuse"))]
    status = cluster.framework.run_bind({}, info, "b", lambda q, n: bind_with_extenders(refusing, q, n))
    assert status is not None and status.message() == "node gone"


def test_an_ignorable_binder_that_fails_hands_the_pod_to_the_next() -> None:
    down = HTTPExtender(Spec(f"http://127.0.0.1:{closed_port()}", bind_verb="bind", ignorable=True))
    assert bind_with_extenders([down], PodInfo(pod("web")), "a") is None  # the bind plugins bind it


def victims_cluster() -> tuple[Cluster, dict[str, PodInfo]]:
    """Nodes a and b, each running two low pods with UIDs."""
    cluster = three_nodes()
    pods = {}
    for name, host in (("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")):
        p = pod(name)
        p["metadata"]["uid"] = f"uid-{name}"
        p["spec"]["nodeName"] = host
        pods[name] = PodInfo(p)
        cluster.snapshot.add_pod(pods[name])
    return cluster, pods


def test_a_preempting_extender_narrows_the_candidates(serve: Callable[..., Extender]) -> None:
    cluster, pods = victims_cluster()
    ext = serve(preempt=lambda body: (200, {"NodeNameToMetaVictims": {
        "b": {"Pods": [{"UID": "uid-b2"}], "NumPDBViolations": 1}}}))
    spec = Spec(ext.url, preempt_verb="preempt", node_cache_capable=True)
    candidates = {"a": ([pods["a1"], pods["a2"]], 0), "b": ([pods["b1"], pods["b2"]], 0)}
    kept = preempt_with_extenders([HTTPExtender(spec)], PodInfo(pod("high")), candidates, cluster.snapshot)
    assert kept == {"b": ([pods["b2"]], 1)}
    [(_, body)] = ext.requests
    assert body["NodeNameToMetaVictims"]["a"] == {"Pods": [{"UID": "uid-a1"}, {"UID": "uid-a2"}],
                                                  "NumPDBViolations": 0}
    assert "NodeNameToVictims" not in body


def test_a_preempting_extender_gets_whole_pods_unless_node_cache_capable(serve: Callable[..., Extender]) -> None:
    cluster, pods = victims_cluster()
    ext = serve(preempt=lambda body: (200, {"NodeNameToMetaVictims": {"a": {"Pods": [{"UID": "uid-x"}]}}}))
    candidates = {"a": ([pods["a1"]], 0)}
    with pytest.raises(ExtenderError) as e:
        preempt_with_extenders([HTTPExtender(Spec(ext.url, preempt_verb="preempt"))], PodInfo(pod("high")),
                               candidates, cluster.snapshot)
    assert str(e.value) == (f"extender: {ext.url} claims to preempt pod (UID: &{{uid-x}}) on node: a, "
                            "but the pod is not found on that node")
    [(_, body)] = ext.requests
    assert body["NodeNameToVictims"]["a"]["Pods"][0]["metadata"]["name"] == "a1"


def test_a_node_left_without_victims_fails_unless_the_extender_is_ignorable(
        serve: Callable[..., Extender]) -> None:
    cluster, pods = victims_cluster()
    ext = serve(preempt=lambda body: (200, {"NodeNameToMetaVictims": {"a": {"Pods": []},
                                                                      "b": {"Pods": [{"UID": "uid-b1"}]}}}))
    candidates = {"a": ([pods["a1"]], 0), "b": ([pods["b1"]], 0)}
    high = PodInfo(pod("high"))
    with pytest.raises(ExtenderError, match='expected at least one victim pod on node "a"'):
        preempt_with_extenders([HTTPExtender(Spec(ext.url, preempt_verb="preempt"))], high, candidates,
                               cluster.snapshot)
    ignorable = HTTPExtender(Spec(ext.url, preempt_verb="preempt", ignorable=True))
    assert preempt_with_extenders([ignorable], high, candidates, cluster.snapshot) == {"b": ([pods["b1"]], 0)}
    down = HTTPExtender(Spec(f"http://127.0.0.1:{closed_port()}", preempt_verb="preempt", ignorable=True))
    assert preempt_with_extenders([down], high, candidates, cluster.snapshot) == candidates


@dataclasses.dataclass
class WithExtenders:
    extenders: list[Spec]


def test_ignorable_extenders_are_called_last() -> None:
    specs = [Spec("http://first", ignorable=True), Spec("http://second"), Spec("http://third", ignorable=True),
             Spec("http://fourth")]
    order = [e.name for e in extenders_from_config(WithExtenders(specs))]
    assert order == ["http://second", "http://fourth", "http://first", "http://third"]
    assert extenders_from_config(object()) == []


def test_resources_ignored_by_the_scheduler_are_left_to_the_extender() -> None:
    cluster = three_nodes()
    foo = pod("foo")
    foo["spec"]["containers"][0]["resources"]["requests"]["example.com/foo"] = "2"
    assert cluster.fit_message(foo) == "0/3 nodes are available: 3 Insufficient example.com/foo."
    managed = [Managed("example.com/foo", ignored_by_scheduler=True), Managed("example.com/bar")]
    ignore_extender_resources(WithExtenders([Spec("http://x", managed_resources=managed)]), cluster.frameworks)
    assert cluster.schedule(foo) in {"a", "b", "c"}
