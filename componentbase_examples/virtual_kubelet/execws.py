"""``exec`` over WebSocket with Kubernetes' channel subprotocols (``v4.channel.k8s.io``, ``v5.channel.k8s.io``).

Each binary message starts with its channel: 0 stdin, 1 stdout, 2 stderr, 3 the final status (a
``Status`` JSON, as the kubelet writes it), 4 resize (``{"Width": w, "Height": h}``, passed to
``ExecIO.resize`` when the command runs on a terminal). v5 adds 255: the client closes a channel
(``[255, 0]`` ends stdin). Framing is ``wsproto``'s; the handshake answer is the
RFC 6455 one. One thread owns the socket (TLS connections must not be read and written from two threads),
the command runs in another and hands its output over through a queue.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import logging
import os
import queue
import selectors
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from componentbase_examples.virtual_kubelet.provider_types import ExecIO

__all__ = ["PROTOCOLS", "accept_headers", "failure_status", "serve_exec", "success_status"]

log = logging.getLogger("componentbase_examples.virtual_kubelet.api")

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255


def accept_headers(headers: Mapping[str, str] | Any,
                   protocols: tuple[str, ...] = PROTOCOLS) -> tuple[dict[str, str] | None, str]:
    """The 101 response headers for a valid upgrade request offering one of ``protocols``, or (None, why not)."""
    if (headers.get("Upgrade") or "").lower() != "websocket":
        return None, "exec needs a WebSocket upgrade (Upgrade: websocket)"
    key = headers.get("Sec-WebSocket-Key") or ""
    if not key or (headers.get("Sec-WebSocket-Version") or "") != "13":
        return None, "WebSocket handshake needs Sec-WebSocket-Key and Sec-WebSocket-Version: 13"
    offered = [p.strip() for p in (headers.get("Sec-WebSocket-Protocol") or "").split(",") if p.strip()]
    chosen = next((p for p in protocols if p in offered), "")
    if not chosen:
        return None, f"none of the offered subprotocols is supported (want one of {', '.join(protocols)})"
    accept = base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()
    return {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": accept,
            "Sec-WebSocket-Protocol": chosen}, ""


def success_status() -> bytes:
    return json.dumps({"metadata": {}, "status": "Success"}).encode()


def failure_status(message: str, exit_code: int | None = None) -> bytes:
    """The kubelet's words: ``NonZeroExitCode`` with an ``ExitCode`` cause, or an internal error."""
    if exit_code is None:
        doc: dict[str, Any] = {"metadata": {}, "status": "Failure", "message": message, "reason": "InternalError",
                               "details": {"causes": [{"message": message}]}, "code": 500}
    else:
        doc = {"metadata": {}, "status": "Failure", "message": message, "reason": "NonZeroExitCode",
               "details": {"causes": [{"reason": "ExitCode", "message": str(exit_code)}]}}
    return json.dumps(doc).encode()


class _Session:
    """The socket loop: frames in (stdin) and out (stdout, stderr, status), on one thread."""

    def __init__(self, sock: ssl.SSLSocket, protocol: str, want_stdin: bool) -> None:
        from wsproto.connection import Connection, ConnectionType

        self.sock = sock
        self.protocol = protocol
        self.ws = Connection(ConnectionType.SERVER)
        self.out: queue.Queue[tuple[int, bytes] | None] = queue.Queue()
        self.wake_r, self.wake_w = os.pipe()
        self.closed = threading.Event()
        self.stdin_r: io.BufferedReader | None = None
        self.io: ExecIO | None = None  # the streams handed to the command, once it runs
        self.size: tuple[int, int] | None = None
        self._size_lock = threading.Lock()  # also guards _stdin_w, closed from two threads
        self._stdin_w: int | None = None
        if want_stdin:
            r, w = os.pipe()
            self.stdin_r = io.BufferedReader(io.FileIO(r, "rb"))
            self._stdin_w = w

    def resized(self, size: tuple[int, int] | None) -> None:
        """Record the client's terminal size (from channel 4, or None when the command starts) and pass the
        latest to the command's terminal if it has one; messages may come before the command runs."""
        with self._size_lock:
            if size is not None:
                self.size = size
            resize, latest = (self.io.resize if self.io is not None else None), self.size
        if resize is not None and latest is not None:
            resize(*latest)

    def send(self, channel: int, data: bytes) -> None:
        """From any thread: queue a message for the socket thread."""
        self.out.put((channel, data))
        try:
            os.write(self.wake_w, b"x")
        except OSError:
            pass

    def finish(self) -> None:
        self.out.put(None)
        try:
            os.write(self.wake_w, b"x")
        except OSError:
            pass

    def _close_stdin(self) -> None:
        """End the command's input (from the socket thread, or the worker once the command ended)."""
        with self._size_lock:
            fd, self._stdin_w = self._stdin_w, None
        if fd is not None:
            os.close(fd)

    def _write(self, data: bytes) -> None:
        if data:
            self.sock.sendall(data)

    def _on_bytes(self, data: bytes) -> None:
        from wsproto.events import BytesMessage, CloseConnection, Ping, TextMessage

        self.ws.receive_data(data)
        for event in self.ws.events():
            if isinstance(event, BytesMessage | TextMessage):
                payload = event.data.encode() if isinstance(event.data, str) else bytes(event.data)
                self._on_message(payload)
            elif isinstance(event, Ping):
                self._write(self.ws.send(event.response()))
            elif isinstance(event, CloseConnection):
                self.closed.set()
                self._close_stdin()

    def _on_message(self, payload: bytes) -> None:
        if not payload:
            return
        channel, data = payload[0], payload[1:]
        if channel == STDIN and self._stdin_w is not None and data:
            try:
                os.write(self._stdin_w, data)
            except OSError:
                self._close_stdin()
        elif channel == RESIZE:
            try:
                size = json.loads(data)
                self.resized((int(size["Width"]), int(size["Height"])))
            except (ValueError, KeyError, TypeError, OSError) as err:
                log.debug("ignoring a resize message %r: %s", data[:80], err)
        elif channel == CLOSE and data[:1] == bytes([STDIN]) and self.protocol.startswith("v5"):
            self._close_stdin()

    def loop(self, idle_timeout: float = 0.0) -> None:
        """Until the command finished and its status went out; ``idle_timeout`` seconds (0: never) without
        a frame either way closes the stream, as the kubelet's ``--stream-idle-timeout``."""
        from wsproto.connection import ConnectionState
        from wsproto.events import BytesMessage, CloseConnection

        sel = selectors.DefaultSelector()
        last = time.monotonic()
        sel.register(self.sock, selectors.EVENT_READ, "sock")
        sel.register(self.wake_r, selectors.EVENT_READ, "wake")
        try:
            done = False
            while not done:
                events = sel.select(timeout=min(1.0, idle_timeout) if idle_timeout > 0 else 1.0)
                if events:
                    last = time.monotonic()
                elif idle_timeout > 0 and time.monotonic() - last > idle_timeout and not self.closed.is_set():
                    log.info("closing an idle %s stream after %gs", self.protocol, idle_timeout)
                    self._write(self.ws.send(CloseConnection(code=1000, reason="stream idle timeout")))
                    self.closed.set()
                    self._close_stdin()
                    sel.unregister(self.sock)
                for key, _ in events:
                    if key.data == "wake":
                        os.read(self.wake_r, 4096)
                        while True:
                            try:
                                item = self.out.get_nowait()
                            except queue.Empty:
                                break
                            if item is None:
                                done = True
                                break
                            if self.ws.state != ConnectionState.OPEN:
                                continue  # the client left (or the stream idled out): nothing can go out
                            self._write(self.ws.send(BytesMessage(data=bytes([item[0]]) + item[1])))
                    elif not self.closed.is_set():
                        data = self._recv()
                        if data is None:
                            self.closed.set()
                            self._close_stdin()
                            sel.unregister(self.sock)
                        else:
                            self._on_bytes(data)
            if not self.closed.is_set():
                self._write(self.ws.send(CloseConnection(code=1000)))
        except (OSError, ValueError) as err:
            log.debug("exec session ended: %s", err)
            self.closed.set()
        finally:
            sel.close()
            self._close_stdin()
            os.close(self.wake_r)
            os.close(self.wake_w)

    def _recv(self) -> bytes | None:
        """What the socket has now (including what TLS already decrypted); None once the client is gone."""
        try:
            data = self.sock.recv(65536)
            while self.sock.pending():
                data += self.sock.recv(self.sock.pending())
        except (ssl.SSLWantReadError, BlockingIOError, TimeoutError):
            return b""
        except OSError:
            return None
        return data or None


def serve_exec(sock: ssl.SSLSocket, protocol: str, *, stdin: bool, stdout: bool, stderr: bool, tty: bool,
               command: list[str], run: Callable[[ExecIO], int], idle_timeout: float = 0.0) -> None:
    """Run ``run`` wired to the WebSocket on ``sock``; send its status on channel 3, then close."""
    session = _Session(sock, protocol, stdin)
    sock.settimeout(10.0)

    def work() -> None:
        streams = ExecIO(stdin=session.stdin_r,
                         stdout=(lambda b: session.send(STDOUT, b)) if stdout else None,
                         stderr=(lambda b: session.send(STDERR, b)) if stderr and not tty else None,
                         tty=tty, closed=session.closed.is_set,
                         on_terminal=lambda: session.resized(None))
        session.io = streams
        try:
            code = run(streams)
            status = success_status() if code == 0 else failure_status(
                f"command terminated with non-zero exit code: error executing command [{' '.join(command)}], "
                f"exit code {code}", code)
        except Exception as err:
            status = failure_status(str(err) or type(err).__name__)
        finally:
            if session.stdin_r is not None:
                # EOF first: a thread still reading stdin (a terminal's typist) holds the reader's lock,
                # and closing the reader would wait for it until the client typed again.
                session._close_stdin()
                session.stdin_r.close()
        session.send(ERROR, status)
        session.finish()

    worker = threading.Thread(target=work, name="exec", daemon=True)
    worker.start()
    session.loop(idle_timeout)
    worker.join(timeout=5.0)
