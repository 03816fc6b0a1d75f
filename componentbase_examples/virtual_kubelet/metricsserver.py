"""``--metrics-addr``: ``/metrics`` over plain HTTP, as upstream serves it next to the kubelet API.

Served by the library's server (plain, without TLS), so the port has the kubelet API's defences: header
deadline, idle timeout, requests in flight, no tracebacks for clients that go away.
"""

from __future__ import annotations

from typing import Any

import componentbase

__all__ = ["parse_addr", "serve_metrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def parse_addr(addr: str) -> tuple[str, int]:
    """Go's ``host:port`` (``:10255`` is every interface); ValueError when it is not one."""
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"--metrics-addr {addr!r}: want host:port")
    return host.strip("[]") or "0.0.0.0", int(port)


def serve_metrics(addr: str, metrics: Any, limits: componentbase.serving.ServerLimits | None = None
                  ) -> componentbase.serving.Server:
    """Start serving in a thread; ``stop()`` stops it (its port is ``.port``)."""
    from componentbase.serving import Request, Response, Server

    def app(req: Request) -> Response:
        if req.path != "/metrics":
            return Response(404, b"404 page not found\n")
        if req.method not in ("GET", "HEAD"):
            return Response(405, b"405: Method Not Allowed\n", headers={"Allow": "GET, HEAD"})
        return Response(200, metrics.render(), CONTENT_TYPE)

    host, port = parse_addr(addr)
    return Server(host, port, None, app, limits=limits).start()
