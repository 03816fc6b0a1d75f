"""The loopback server keeps its webhook connections alive, as kube-apiserver's webhook client does: calls
reuse a connection, one the webhook closed is not used again, a request the webhook hung up on unanswered is
sent once more on a new connection, and stopping the server closes them.

The webhook here is the standard library's HTTPS server, counting the connections it accepts and the ones
still open, and hanging up unanswered on a connection's second request when told to (a webhook that closed
an idle connection just as the request was sent).
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer, eventually
from componentbase.util import CertificateAuthority
from tests.testing.webhook_support import server_context

pytestmark = pytest.mark.integration


class Webhook:
    """An allowing validating webhook on 127.0.0.1 over HTTPS/1.1, keeping connections alive."""

    def __init__(self) -> None:
        self.ca = CertificateAuthority.generate("webhook-ca")
        self.accepted = 0
        self.open = 0
        self.reviews = 0
        self.hang_up_on_second = False  # hang up, unanswered, on each connection's second request
        self.close_after_answer = False  # close each connection after answering (without saying so)
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                self.served = 0
                with owner._lock:
                    owner.accepted += 1
                    owner.open += 1

            def finish(self) -> None:
                with owner._lock:
                    owner.open -= 1
                super().finish()

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                self.served += 1
                with owner._lock:
                    owner.reviews += 1
                if owner.hang_up_on_second and self.served == 2:
                    self.close_connection = True
                    return
                body = json.dumps({"apiVersion": review["apiVersion"], "kind": review["kind"], "response": {
                    "uid": review["request"]["uid"], "allowed": True}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = owner.close_after_answer

        context = server_context(self.ca, ["127.0.0.1"])
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)


@pytest.fixture
def webhook() -> Iterator[Webhook]:
    hook = Webhook()
    hook.thread.start()
    yield hook
    hook.httpd.shutdown()
    hook.httpd.server_close()


@pytest.fixture
def server(webhook: Webhook) -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer() as api_server:
        with api_server.api_client() as api:
            url = f"https://127.0.0.1:{webhook.httpd.server_address[1]}/check"
            config = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                      "metadata": {"name": "checks"}, "webhooks": [{
                          "name": "check.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                          "clientConfig": {"url": url, "caBundle": _b64(webhook.ca.cert_pem)},
                          "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                     "resources": ["configmaps"]}]}]}
            client.AdmissionregistrationV1Api(api).create_validating_webhook_configuration(config)
        yield api_server


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _create(server: LoopbackAPIServer, *names: str) -> None:
    with server.api_client() as api:
        for name in names:
            client.CoreV1Api(api).create_namespaced_config_map("default", {"metadata": {"name": name}})


def test_calls_reuse_one_connection(server: LoopbackAPIServer, webhook: Webhook) -> None:
    _create(server, *(f"cm-{i}" for i in range(10)))
    assert (webhook.reviews, webhook.accepted) == (10, 1)


def test_a_connection_the_webhook_closed_is_not_used_again(server: LoopbackAPIServer, webhook: Webhook) -> None:
    webhook.close_after_answer = True
    _create(server, *(f"cm-{i}" for i in range(3)))
    assert (webhook.reviews, webhook.accepted) == (3, 3)


def test_a_request_the_webhook_hung_up_on_is_sent_again_on_a_new_connection(
        server: LoopbackAPIServer, webhook: Webhook) -> None:
    webhook.hang_up_on_second = True
    _create(server, "first", "second")  # the second goes on the kept connection, unanswered, then on a new one
    assert (webhook.reviews, webhook.accepted) == (3, 2)
    with server.api_client() as api:
        assert {c.metadata.name for c in client.CoreV1Api(api).list_namespaced_config_map("default").items} >= {
            "first", "second"}


def test_stopping_the_server_closes_its_webhook_connections(server: LoopbackAPIServer, webhook: Webhook) -> None:
    _create(server, "cm")
    assert webhook.open == 1
    server.stop()
    eventually(lambda: webhook.open == 0, timeout=5, what="the kept connection closed")
