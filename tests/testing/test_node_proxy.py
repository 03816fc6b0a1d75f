"""The node proxy's refusals, without a kubelet: authorization, unreachable kubelets, nodes without addresses."""

from __future__ import annotations

import json
import socket
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from componentbase.testing import LoopbackAPIServer, User

pytestmark = pytest.mark.integration


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LoopbackAPIServer]:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps([{"user": "reader", "verbs": ["get"], "resources": ["pods/exec", "pods/log"]}]))
    tokens = {"admin": User("admin", "1", ("system:masters",)), "reader": User("reader", "2")}
    with LoopbackAPIServer(tokens=tokens, authorization_policy_file=policy, enforce_authorization=True) as s:
        yield s


def call(server: LoopbackAPIServer, path: str, token: str = "admin") -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(server.url + path, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=10, context=server.ssl_context()) as resp:
            return resp.status, {"body": resp.read().decode()}
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def put(server: LoopbackAPIServer, path: str, obj: dict[str, Any]) -> None:
    req = urllib.request.Request(server.url + path, data=json.dumps(obj).encode(), method="POST",
                                 headers={"Authorization": "Bearer admin", "Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10, context=server.ssl_context()).close()


def node(name: str, addresses: list[dict[str, str]], port: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"addresses": addresses, "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}}


def pod(name: str, node_name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "x"}]}}


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


def test_exec_needs_create_on_pods_exec_even_as_a_get(server: LoopbackAPIServer) -> None:
    code, status = call(server, "/api/v1/namespaces/default/pods/p/exec?command=ls&stdout=1", token="reader")
    assert code == 403 and status["reason"] == "Forbidden"
    assert status["message"] == 'pods "p" is forbidden: User "reader" cannot create resource "pods/exec" in API ' \
                                'group "" in the namespace "default"'
    code, status = call(server, "/api/v1/namespaces/default/pods/p/log", token="reader")
    assert (code, status["message"]) == (404, 'pods "p" not found')  # get on pods/log is granted


def test_an_unreachable_kubelet_is_a_500_naming_the_dial(server: LoopbackAPIServer) -> None:
    port = closed_port()
    put(server, "/api/v1/nodes", node("n1", [{"type": "Hostname", "address": "n1"},
                                             {"type": "InternalIP", "address": "127.0.0.1"}], port))
    put(server, "/api/v1/namespaces/default/pods", pod("p", "n1"))
    code, status = call(server, "/api/v1/namespaces/default/pods/p/log?follow=true&tailLines=5")
    assert code == 500 and "reason" not in status
    assert status["message"] == (f'Get "https://127.0.0.1:{port}/containerLogs/default/p/c?follow=true&'
                                 f'tailLines=5": dial tcp 127.0.0.1:{port}: connect: connection refused')
    put(server, "/api/v1/nodes", node("bare", [], port))
    put(server, "/api/v1/namespaces/default/pods", pod("q", "bare"))
    code, status = call(server, "/api/v1/namespaces/default/pods/q/log")
    assert (code, status["message"]) == (500, "no preferred addresses found; known addresses: []")


class FakeKubelet:
    """A TLS server that records the client certificate it was shown and answers every request with 404."""

    def __init__(self, tmp_path: Path) -> None:
        from componentbase.serving import generate_self_signed

        cert, key = generate_self_signed("localhost", ["127.0.0.1"])
        (tmp_path / "k.pem").write_bytes(key + cert)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(tmp_path / "k.pem")
        self.context.verify_mode = ssl.CERT_OPTIONAL
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.peers: list[Any] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def trust(self, ca: str) -> None:
        self.context.load_verify_locations(cadata=ca)
        self.thread.start()

    def _serve(self) -> None:
        raw, _ = self.listener.accept()
        with self.context.wrap_socket(raw, server_side=True) as conn:
            self.peers.append(conn.getpeercert())
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 28\r\nConnection: close\r\n\r\n"
                         b"pod default/p is not known\r\n")


def test_the_proxy_shows_its_client_certificate_and_reports_the_kubelets_refusal(
        server: LoopbackAPIServer, tmp_path: Path) -> None:
    kubelet = FakeKubelet(tmp_path)
    kubelet.trust(server.kubelet_client_ca)
    put(server, "/api/v1/nodes", node("n1", [{"type": "InternalIP", "address": "127.0.0.1"}], kubelet.port))
    put(server, "/api/v1/namespaces/default/pods", pod("p", "n1"))
    code, status = call(server, "/api/v1/namespaces/default/pods/p/log")
    kubelet.thread.join(10)
    assert (code, status["reason"]) == (404, "NotFound")
    assert status["message"] == "the server could not find the requested resource ( pods/log p)"
    subject = dict(item for rdn in kubelet.peers[0]["subject"] for item in rdn)
    assert subject == {"commonName": "kube-apiserver-kubelet-client", "organizationName": "system:masters"}
    kubelet.listener.close()
