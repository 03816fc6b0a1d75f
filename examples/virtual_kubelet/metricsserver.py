"""``--metrics-addr``: ``/metrics`` over plain HTTP, as upstream serves it next to the kubelet API."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["parse_addr", "serve_metrics"]


def parse_addr(addr: str) -> tuple[str, int]:
    """Go's ``host:port`` (``:10255`` is every interface); ValueError when it is not one."""
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"--metrics-addr {addr!r}: want host:port")
    return host.strip("[]") or "0.0.0.0", int(port)


def serve_metrics(addr: str, metrics: Any) -> ThreadingHTTPServer:
    """Start serving in a thread; ``shutdown()`` then ``server_close()`` stop it."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] != "/metrics":
                self.send_error(404)
                return
            body = metrics.render()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(parse_addr(addr), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, name="metrics-http",
                     daemon=True).start()
    return server
