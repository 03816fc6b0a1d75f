"""The server side of SPDY/3.1 as Kubernetes' streaming uses it: framing, header blocks, a session of streams.

kubectl 1.37 runs ``port-forward`` as SPDY tunnelled in WebSocket (``SPDY/3.1+portforward.k8s.io``) and
falls back to a plain SPDY upgrade; either way the kubelet end speaks SPDY. Only what that needs is here:
streams the client opens (SYN_STREAM, answered with SYN_REPLY), data both ways with FIN, RST_STREAM,
PING echoed, GOAWAY; SETTINGS, WINDOW_UPDATE and HEADERS are read and ignored (Kubernetes' SPDY library
sends no flow control that must be obeyed). Header blocks are zlib streams primed with the dictionary the
SPDY/3 specification defines (section 2.6.10.1), built below from its word list.

``Session.feed`` is driven by the one thread that owns the connection and never blocks; streams are read
and written from any thread, and what is sent goes out through the ``send`` callable given to the session.
"""

from __future__ import annotations

import queue
import struct
import threading
import zlib
from collections.abc import Callable

__all__ = ["DICTIONARY", "Session", "Stream"]

_WORDS = [*(
    "options head post put delete trace accept accept-charset accept-encoding accept-language accept-ranges age "
    "allow authorization cache-control connection content-base content-encoding content-language content-length "
    "content-location content-md5 content-range content-type date etag expect expires from host if-match "
    "if-modified-since if-none-match if-range if-unmodified-since last-modified location max-forwards pragma "
    "proxy-authenticate proxy-authorization range referer retry-after server te trailer transfer-encoding upgrade "
    "user-agent vary via warning www-authenticate method get status"
).split(), "200 OK", *"version HTTP/1.1 url public set-cookie keep-alive origin".split()]
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
    "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
    "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
    "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
    "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)


def _dictionary() -> bytes:
    return b"".join(struct.pack(">I", len(w)) + w.encode() for w in _WORDS) + _TAIL.encode()


#: SPDY/3's header compression dictionary (1423 bytes, Adler-32 0xe3c6a7c2).
DICTIONARY = _dictionary()

_VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01
#: RST_STREAM status codes.
PROTOCOL_ERROR, CANCEL = 1, 5


class Stream:
    """One stream the client opened: its headers, what it sent (``read``) and a way to answer (``write``)."""

    def __init__(self, session: Session, stream_id: int, headers: dict[str, str]) -> None:
        self.session = session
        self.id = stream_id
        self.headers = headers
        self._inbound: queue.Queue[bytes] = queue.Queue()
        self.remote_closed = False
        self.local_closed = False

    def read(self) -> bytes:
        """The client's next bytes (blocking); ``b""`` once it closed its side or the session ended."""
        data = self._inbound.get()
        if not data:
            self._inbound.put(b"")  # every later read sees the end too
        return data

    def write(self, data: bytes) -> None:
        if data and not self.local_closed:
            self.session.send(_data_frame(self.id, 0, data))

    def close(self) -> None:
        """Half-close: FIN on our side."""
        if not self.local_closed:
            self.local_closed = True
            self.session.send(_data_frame(self.id, FLAG_FIN, b""))

    def reset(self, status: int = CANCEL) -> None:
        self.local_closed = True
        self.session.send(_control(RST_STREAM, 0, struct.pack(">II", self.id, status)))

    def _remote(self, data: bytes, fin: bool) -> None:
        if data:
            self._inbound.put(data)
        if fin and not self.remote_closed:
            self.remote_closed = True
            self._inbound.put(b"")


def _control(kind: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">HHI", 0x8000 | _VERSION, kind, (flags << 24) | len(payload)) + payload


def _data_frame(stream_id: int, flags: int, data: bytes) -> bytes:
    return struct.pack(">II", stream_id & 0x7FFFFFFF, (flags << 24) | len(data)) + data


class SessionError(Exception):
    """The peer broke the protocol; the session ends."""


class Session:
    """A SPDY/3.1 server session: ``feed`` it the bytes read, get streams through ``on_stream``."""

    def __init__(self, send: Callable[[bytes], None], on_stream: Callable[[Stream], None]) -> None:
        self._send = send
        self._send_lock = threading.Lock()
        self._on_stream = on_stream
        self._buffer = b""
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(9, zdict=DICTIONARY)
        self.streams: dict[int, Stream] = {}
        self.closed = False

    def send(self, frame: bytes) -> None:
        with self._send_lock:
            if not self.closed:
                self._send(frame)

    def feed(self, data: bytes) -> None:
        """Handle every whole frame in what has arrived so far; raise SessionError on a broken one."""
        self._buffer += data
        while len(self._buffer) >= 8:
            first, second = struct.unpack(">II", self._buffer[:8])
            length = second & 0xFFFFFF
            if len(self._buffer) < 8 + length:
                return
            payload, self._buffer = self._buffer[8:8 + length], self._buffer[8 + length:]
            flags = second >> 24
            if first & 0x80000000:
                self._control((first >> 16) & 0x7FFF, first & 0xFFFF, flags, payload)
            else:
                stream = self.streams.get(first & 0x7FFFFFFF)
                if stream is not None:
                    stream._remote(payload, bool(flags & FLAG_FIN))

    def end(self) -> None:
        """The connection is gone: every stream reads its end."""
        self.closed = True
        for stream in list(self.streams.values()):
            stream._remote(b"", True)

    def _control(self, version: int, kind: int, flags: int, payload: bytes) -> None:
        if version != _VERSION:
            raise SessionError(f"unsupported SPDY version {version}")
        if kind == SYN_STREAM:
            stream_id = struct.unpack(">I", payload[:4])[0] & 0x7FFFFFFF
            stream = Stream(self, stream_id, self._headers(payload[10:]))
            self.streams[stream_id] = stream
            with self._send_lock:  # header blocks share one compression stream: compress and send in order
                block = self._deflate.compress(struct.pack(">I", 0)) + self._deflate.flush(zlib.Z_SYNC_FLUSH)
                self._send(_control(SYN_REPLY, 0, struct.pack(">I", stream_id) + block))
            if flags & FLAG_FIN:
                stream._remote(b"", True)
            self._on_stream(stream)
        elif kind == RST_STREAM:
            stream_id = struct.unpack(">I", payload[:4])[0] & 0x7FFFFFFF
            found = self.streams.get(stream_id)
            if found is not None:
                found.local_closed = True
                found._remote(b"", True)
        elif kind == PING:
            self.send(_control(PING, 0, payload))
        elif kind == GOAWAY:
            self.end()
        elif kind == HEADERS:
            self._headers(payload[4:])  # keep the shared decompression stream in step

    def _headers(self, block: bytes) -> dict[str, str]:
        try:
            raw = self._inflate.decompress(block)
            (count,) = struct.unpack(">I", raw[:4])
            at, headers = 4, {}
            for _ in range(count):
                (n,) = struct.unpack(">I", raw[at:at + 4])
                name = raw[at + 4:at + 4 + n].decode("latin-1")
                at += 4 + n
                (n,) = struct.unpack(">I", raw[at:at + 4])
                headers[name.lower()] = raw[at + 4:at + 4 + n].decode("latin-1").split("\x00")[0]
                at += 4 + n
        except (zlib.error, struct.error) as err:
            raise SessionError(f"bad SPDY header block: {err}") from None
        return headers
