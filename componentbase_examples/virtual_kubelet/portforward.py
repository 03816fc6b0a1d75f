"""``/portForward/{namespace}/{pod}``: the kubelet's port-forward protocol (``portforward.k8s.io``) over SPDY.

kubectl 1.37 asks for a WebSocket with the subprotocol ``SPDY/3.1+portforward.k8s.io`` and runs SPDY inside
its binary messages; an older client (or kubectl's fallback) upgrades to SPDY directly (``Upgrade:
SPDY/3.1``, ``X-Stream-Protocol-Version: portforward.k8s.io``). Both are served. For each connection the
client forwards it opens two streams with the same ``requestID`` and ``port``: ``error`` (where a failure
is written) and ``data`` (the bytes). Once both exist the provider carries the data stream to the port;
a pair not complete within ``--stream-creation-timeout`` is reset, and a session with no frame either way
for ``--stream-idle-timeout`` is closed (kubectl pings every 10 s, so only a dead client is).
"""

from __future__ import annotations

import logging
import os
import selectors
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from componentbase_examples.virtual_kubelet import execws, spdy
from componentbase_examples.virtual_kubelet.provider_types import PortStream

__all__ = ["PROTOCOL", "TUNNEL_PROTOCOL", "accept", "serve"]

log = logging.getLogger("componentbase_examples.virtual_kubelet.api")

PROTOCOL = "portforward.k8s.io"
TUNNEL_PROTOCOL = "SPDY/3.1+" + PROTOCOL


def accept(headers: Mapping[str, str] | Any) -> tuple[dict[str, str] | None, str, bool]:
    """(101 headers, why not, tunnelled in WebSocket) for a port-forward upgrade request."""
    upgrade = (headers.get("Upgrade") or "").lower()
    if upgrade == "websocket":
        answer, why = execws.accept_headers(headers, (TUNNEL_PROTOCOL,))
        return answer, why, True
    if upgrade == "spdy/3.1":
        offered = [p.strip() for p in (headers.get("X-Stream-Protocol-Version") or "").split(",")]
        if PROTOCOL not in offered:
            return None, f"unable to upgrade: no common protocol: want {PROTOCOL}", False
        return {"Connection": "Upgrade", "Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": PROTOCOL}, "", False
    return None, "port-forward needs an upgrade: WebSocket (SPDY/3.1+portforward.k8s.io) or SPDY/3.1", False


class _Pairs:
    """Streams grouped by request; a complete pair starts its forward in a thread of its own."""

    def __init__(self, start: Callable[[int, spdy.Stream, spdy.Stream], None], creation_timeout: float) -> None:
        self._start = start
        self._timeout = creation_timeout
        self._lock = threading.Lock()
        self._waiting: dict[str, dict[str, spdy.Stream]] = {}

    def add(self, stream: spdy.Stream) -> None:
        kind, request = stream.headers.get("streamtype", ""), stream.headers.get("requestid", "")
        if kind not in ("error", "data"):
            log.info("port-forward: refusing a stream of type %r", kind)
            stream.reset(spdy.PROTOCOL_ERROR)
            return
        with self._lock:
            pair = self._waiting.setdefault(request, {})
            pair[kind] = stream
            complete = len(pair) == 2
            if complete:
                del self._waiting[request]
        if not complete:
            if self._timeout > 0:
                threading.Timer(self._timeout, self._expire, args=(request,)).start()
            return
        try:
            port = int(pair["data"].headers.get("port", ""))
        except ValueError:
            pair["error"].write(f"invalid port header {pair['data'].headers.get('port')!r}".encode())
            pair["error"].close()
            pair["data"].reset()
            return
        threading.Thread(target=self._start, args=(port, pair["data"], pair["error"]), daemon=True,
                         name=f"port-forward-{port}").start()

    def _expire(self, request: str) -> None:
        with self._lock:
            pair = self._waiting.pop(request, None)
        for stream in (pair or {}).values():
            log.info("port-forward: timed out waiting for the stream pair of request %s", request)
            stream.reset()


def serve(sock: ssl.SSLSocket, tunnelled: bool, forward: Callable[[int, PortStream], None], what: str, *,
          creation_timeout: float, idle_timeout: float) -> None:
    """Run the session on ``sock`` until the client leaves; ``forward(port, stream)`` carries one connection."""
    from wsproto.connection import Connection, ConnectionType
    from wsproto.events import BytesMessage, CloseConnection, Ping

    ws = Connection(ConnectionType.SERVER) if tunnelled else None
    outgoing: list[bytes] = []
    lock = threading.Lock()
    wake_r, wake_w = os.pipe()

    def send(frame: bytes) -> None:
        with lock:
            outgoing.append(ws.send(BytesMessage(data=frame)) if ws is not None else frame)
        try:
            os.write(wake_w, b"x")
        except OSError:
            pass  # the session is over: nothing more goes out

    def run(port: int, data: spdy.Stream, error: spdy.Stream) -> None:
        try:
            forward(port, PortStream(read=data.read, write=data.write, closed=lambda: session.closed))
        except Exception as err:
            error.write(f"error forwarding port {port} to pod {what}: {err}".encode())
        finally:
            data.close()
            error.close()

    session = spdy.Session(send, _Pairs(run, creation_timeout).add)
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    sel.register(wake_r, selectors.EVENT_READ)
    sock.setblocking(False)
    last = time.monotonic()
    try:
        while not session.closed:
            ready = sel.select(timeout=1.0)
            if not ready and idle_timeout > 0 and time.monotonic() - last > idle_timeout:
                log.info("closing an idle port-forward session after %gs", idle_timeout)
                break
            for key, _ in ready:
                last = time.monotonic()
                if key.fileobj == wake_r:
                    os.read(wake_r, 4096)
                    with lock:
                        pending, outgoing[:] = b"".join(outgoing), []
                    sock.setblocking(True)
                    sock.sendall(pending)
                    sock.setblocking(False)
                    continue
                chunk = _read_available(sock)
                if chunk is None:
                    session.end()
                    break
                if ws is None:
                    session.feed(chunk)
                    continue
                ws.receive_data(chunk)
                for event in ws.events():
                    if isinstance(event, BytesMessage):
                        session.feed(bytes(event.data))
                    elif isinstance(event, Ping):
                        pong = ws.send(event.response())
                        with lock:
                            outgoing.append(pong)
                        os.write(wake_w, b"x")
                    elif isinstance(event, CloseConnection):
                        session.end()
    except (OSError, ValueError, spdy.SessionError) as err:
        log.debug("port-forward session ended: %s", err)
    finally:
        session.end()
        sel.close()
        os.close(wake_r)
        os.close(wake_w)


def _read_available(sock: ssl.SSLSocket) -> bytes | None:
    """Bytes ready now (b"" when TLS had only part of a record); None once the client hung up."""
    parts: list[bytes] = []
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return b"".join(parts) or None
            parts.append(data)
            if not sock.pending():
                break
    except (ssl.SSLWantReadError, BlockingIOError):
        pass
    except OSError:
        return None
    return b"".join(parts)
