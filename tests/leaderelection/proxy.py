"""A TCP proxy that can black-hole its traffic: a network partition for one client only.

The loopback server's faults hit every client alike; cutting a single candidate off needs the
cut on its own path. While cut, bytes stay queued in the kernel in both directions, so requests
neither fail nor arrive; on heal they flow again, late, as after a partition.
"""

from __future__ import annotations

import select
import socket
import threading
from types import TracebackType

__all__ = ["BlackholeProxy"]


class BlackholeProxy:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self._upstream = (upstream_host, upstream_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.cut = threading.Event()
        self._closed = threading.Event()
        self._conns: list[socket.socket] = []
        self._mu = threading.Lock()
        self._thread = threading.Thread(target=self._accept_loop, name="blackhole-proxy", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                server = socket.create_connection(self._upstream)
            except OSError:
                client.close()
                continue
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._mu:
                self._conns += [client, server]
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        peer = {a: b, b: a}
        try:
            while not self._closed.is_set():
                if self.cut.is_set():
                    self._closed.wait(0.005)
                    continue
                ready, _, _ = select.select([a, b], [], [], 0.02)
                for s in ready:
                    if self.cut.is_set():
                        break
                    data = s.recv(65536)
                    if not data:
                        return
                    peer[s].sendall(data)
        except OSError:
            pass
        finally:
            a.close()
            b.close()

    def close(self) -> None:
        self._closed.set()
        self._listener.close()
        with self._mu:
            for s in self._conns:
                try:
                    s.close()
                except OSError:
                    pass
        self._thread.join(2)

    def __enter__(self) -> BlackholeProxy:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
