"""A webhook server for the admission and conversion webhook tests: the standard library's HTTPS server,
answering each path with a function of the review it got, and keeping every review for the test to read."""

from __future__ import annotations

import base64
import json
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from componentbase.testing.apiserver.auth._tls import load_pair
from componentbase.util._certs import CertificateAuthority

#: A handler: the review (request) in, the ``response`` out (uid, kind and apiVersion are filled in), or raw
#: bytes sent as they are, or a whole review (a dict with ``"kind"``) sent as it is.
Handler = Callable[[dict[str, Any]], Any]


def server_context(ca: CertificateAuthority, hosts: list[str]) -> ssl.SSLContext:
    """A TLS server context serving a certificate ``ca`` issues for ``hosts``."""
    cert, key = ca.issue("webhook", hosts=hosts, server=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    load_pair(context, cert, key)
    return context


class _QuietServer(ThreadingHTTPServer):
    """A caller that hung up (the API server's webhook timeout, a test's own abort) is no error: socketserver
    prints its traceback to stderr, where a later test of the same worker that checks for tracebacks saw it."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


def json_patch(*ops: dict[str, Any]) -> dict[str, Any]:
    """An allowing response carrying ``ops`` as a JSONPatch."""
    return {"allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(list(ops)).encode()).decode()}


class WebhookServer:
    """HTTPS on 127.0.0.1, its certificate issued by ``ca`` for ``hosts``."""

    def __init__(self, ca: CertificateAuthority, hosts: list[str]) -> None:
        self.ca = ca
        self.handlers: dict[str, Handler] = {}
        self.reviews: dict[str, list[dict[str, Any]]] = {}
        self.paths: list[str] = []  # each request's path, query included
        context = server_context(ca, hosts)
        owner = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                route = self.path.split("?", 1)[0]
                owner.paths.append(self.path)
                owner.reviews.setdefault(route, []).append(review)
                answer = owner.handlers[route](review)
                if isinstance(answer, dict) and "kind" not in answer:
                    uid = review["request"]["uid"]
                    answer = {"apiVersion": review["apiVersion"], "kind": review["kind"],
                              "response": dict(answer, uid=uid)}
                body = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = _QuietServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.ca.cert_pem).decode()

    def url(self, path: str) -> dict[str, str]:
        """A clientConfig reaching ``path`` by URL."""
        return {"url": f"https://127.0.0.1:{self.port}{path}", "caBundle": self.ca_bundle}

    def start(self) -> WebhookServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
