"""``port-forward`` to a process container: a TCP connection to the port on this machine, the pod's address.

Every process of the provider shares the host's network, so the pod's port is ``127.0.0.1:port``. The
client's bytes go in until it closes its side (then the socket's write side is shut); the process's bytes
come back until it closes, which ends the forwarded connection.
"""

from __future__ import annotations

import socket
import threading

from componentbase_examples.virtual_kubelet.provider_types import PortStream

__all__ = ["forward"]

_CONNECT_TIMEOUT = 5.0


def _upstream(stream: PortStream, sock: socket.socket) -> None:
    try:
        while data := stream.read():
            sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the process closed the connection first


def forward(host: str, port: int, stream: PortStream) -> None:
    """Carry ``stream`` to ``host:port``; raise OSError (connection refused...) when it cannot connect."""
    sock = socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT)
    sock.settimeout(None)
    threading.Thread(target=_upstream, args=(stream, sock), name=f"forward-{port}", daemon=True).start()
    try:
        while data := sock.recv(65536):
            stream.write(data)
    except OSError:
        pass
    finally:
        sock.close()
