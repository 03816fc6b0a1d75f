"""A TLS front for the loopback API server, which serves plain HTTP today.

kubectl sends no bearer token over plain HTTP, and the official client's in-cluster configuration always
speaks ``https://KUBERNETES_SERVICE_HOST:PORT``. This relays each TLS connection, byte for byte, to the
server: ``demo --keep`` hands kubectl a kubeconfig for it, and tests/ship runs the scheduler in-cluster
through it. Drop it once the loopback server serves TLS itself.
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
from types import TracebackType


class TLSFront:
    """Listens on 127.0.0.1 with ``cert``/``key``; every connection is relayed to ``backend``."""

    def __init__(self, backend: tuple[str, int], cert: str, key: str) -> None:
        self.backend = backend
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)  # accept() wakes up to notice stop
        self.port = int(self.listener.getsockname()[1])
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.sockets: set[socket.socket] = set()
        self.threads: list[threading.Thread] = []

    def __enter__(self) -> TLSFront:
        self._spawn(self._accept)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stopping.set()
        with self.lock:
            for sock in self.sockets:
                try:  # the plain socket's shutdown wakes the thread blocked reading it, TLS state untouched
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)
                except OSError:
                    pass
        for thread in list(self.threads):
            thread.join(5)
        self.listener.close()

    def _spawn(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True, name="tls-front")  # type: ignore[arg-type]
        with self.lock:
            self.threads.append(thread)
        thread.start()

    def _track(self, sock: socket.socket) -> None:
        with self.lock:
            self.sockets.add(sock)

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            self._track(conn)
            self._spawn(self._serve, conn)

    def _serve(self, conn: socket.socket) -> None:
        """Relay both ways from one thread: an SSL socket must not be read and written by two threads at once."""
        try:
            tls = self.context.wrap_socket(conn, server_side=True)
            upstream = socket.create_connection(self.backend)
        except OSError:  # ssl.SSLError included: a client that gave up, or the server stopping
            conn.close()
            return
        self._track(tls)
        self._track(upstream)
        peers = {tls: upstream, upstream: tls}
        try:
            while not self.stopping.is_set():
                ready = [tls] if tls.pending() else select.select([tls, upstream], [], [], 0.2)[0]
                for source in ready:
                    data = source.recv(65536)
                    if not data:
                        return
                    peers[source].sendall(data)
        except OSError:
            pass
        finally:
            for sock in (tls, upstream):
                sock.close()
