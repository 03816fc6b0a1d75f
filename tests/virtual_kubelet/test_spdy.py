"""The SPDY/3.1 server session port-forward runs on: frames fed in any split, header blocks, FIN, RST, PING."""

from __future__ import annotations

import struct
import zlib

import pytest

from componentbase_examples.virtual_kubelet import portforward, spdy

pytestmark = pytest.mark.unit


class Client:
    """Frames as a Go SPDY client writes them (one header compression stream for the connection)."""

    def __init__(self) -> None:
        self.deflate = zlib.compressobj(9, zdict=spdy.DICTIONARY)

    def syn_stream(self, stream_id: int, headers: dict[str, str], fin: bool = False) -> bytes:
        block = struct.pack(">I", len(headers)) + b"".join(
            struct.pack(">I", len(k)) + k.encode() + struct.pack(">I", len(v)) + v.encode() for k, v in headers.items())
        payload = struct.pack(">IIBB", stream_id, 0, 0, 0) + self.deflate.compress(block) + \
            self.deflate.flush(zlib.Z_SYNC_FLUSH)
        return control(1, 1 if fin else 0, payload)


def control(kind: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">HHI", 0x8003, kind, (flags << 24) | len(payload)) + payload


def data(stream_id: int, payload: bytes, fin: bool = False) -> bytes:
    return struct.pack(">II", stream_id, ((1 if fin else 0) << 24) | len(payload)) + payload


def test_the_dictionary_is_the_specifications() -> None:
    assert (len(spdy.DICTIONARY), zlib.adler32(spdy.DICTIONARY)) == (1423, 0xE3C6A7C2)


def test_streams_open_carry_data_both_ways_and_close() -> None:
    sent: list[bytes] = []
    opened: list[spdy.Stream] = []
    session = spdy.Session(sent.append, opened.append)
    client = Client()
    wire = client.syn_stream(1, {"streamType": "error", "port": "80", "requestID": "0"}) + \
        client.syn_stream(3, {"streamtype": "data", "port": "80", "requestid": "0"}) + data(3, b"hello") + \
        data(3, b"", fin=True) + control(6, 0, struct.pack(">I", 7))
    for i in range(0, len(wire), 5):  # frames split anywhere, as WebSocket messages or TCP reads split them
        session.feed(wire[i:i + 5])
    assert [s.headers for s in opened] == [{"streamtype": "error", "port": "80", "requestid": "0"},
                                           {"streamtype": "data", "port": "80", "requestid": "0"}]
    assert opened[1].read() == b"hello" and opened[1].read() == b"" and opened[1].read() == b""
    assert [f[:4] for f in sent[:2]] == [b"\x80\x03\x00\x02"] * 2  # SYN_REPLY for each stream
    assert struct.unpack(">I", sent[1][8:12])[0] == 3
    assert sent[2] == control(6, 0, struct.pack(">I", 7))  # PING echoed
    opened[1].write(b"back")
    opened[1].close()
    assert sent[3:] == [data(3, b"back"), data(3, b"", fin=True)]
    session.feed(control(3, 0, struct.pack(">II", 1, 5)))  # RST_STREAM: the error stream reads its end
    assert opened[0].read() == b""


def test_a_broken_header_block_or_version_ends_the_session() -> None:
    session = spdy.Session(lambda frame: None, lambda stream: None)
    with pytest.raises(spdy.SessionError, match="bad SPDY header block"):
        session.feed(control(1, 0, struct.pack(">IIBB", 1, 0, 0, 0) + b"not zlib"))
    with pytest.raises(spdy.SessionError, match="unsupported SPDY version 2"):
        spdy.Session(lambda frame: None, lambda stream: None).feed(struct.pack(">HHI", 0x8002, 1, 0))


def test_port_forward_upgrades_are_websocket_tunnels_or_spdy() -> None:
    ws = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
          "Sec-WebSocket-Version": "13", "Sec-WebSocket-Protocol": "SPDY/3.1+portforward.k8s.io"}
    headers, _, tunnelled = portforward.accept(ws)
    assert tunnelled and headers is not None and headers["Sec-WebSocket-Protocol"] == "SPDY/3.1+portforward.k8s.io"
    spdy_upgrade = {"Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "portforward.k8s.io"}
    headers, _, tunnelled = portforward.accept(spdy_upgrade)
    assert not tunnelled and headers == {"Connection": "Upgrade", "Upgrade": "SPDY/3.1",
                                         "X-Stream-Protocol-Version": "portforward.k8s.io"}
    assert portforward.accept({"Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "v4.channel.k8s.io"})[0] is None
    assert "needs an upgrade" in portforward.accept({})[1]
