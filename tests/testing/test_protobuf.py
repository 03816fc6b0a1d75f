"""The protobuf wire decoder: messages built here by hand, field by field, decode to kube's JSON."""

from __future__ import annotations

import struct

import pytest

from componentbase.testing.apiserver.wire._protobuf import MAGIC, ProtobufError, decode_envelope, decode_message

pytestmark = pytest.mark.unit


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def vfield(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def lfield(number: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


def entry(key: str, value: bytes | str) -> bytes:
    return lfield(1, key) + lfield(2, value)


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return MAGIC + lfield(1, lfield(1, api_version) + lfield(2, kind)) + lfield(2, raw)


def test_configmap_with_maps_and_metadata() -> None:
    meta = lfield(1, "c1") + lfield(3, "") + vfield(7, 0) + lfield(8, b"") + lfield(11, entry("app", "x"))
    raw = lfield(1, meta) + lfield(2, entry("k", "v")) + lfield(2, entry("j", "w")) + lfield(3, entry("b", b"\x00\xff"))
    api_version, kind, body = decode_envelope(envelope("v1", "ConfigMap", raw))
    assert (api_version, kind) == ("v1", "ConfigMap")
    # empty namespace, zero generation and a zero creationTimestamp print nothing, as Go's JSON omits them
    assert decode_message("core.v1.ConfigMap", body) == {
        "metadata": {"name": "c1", "labels": {"app": "x"}},
        "data": {"k": "v", "j": "w"}, "binaryData": {"b": "AP8="}}


def test_pointer_zero_kept_and_special_types() -> None:
    # replicas is a pointer: an explicit 0 stays; minReadySeconds is omitempty: its 0 goes
    spec = vfield(1, 0) + vfield(5, 0) + vfield(6, (1 << 64) - 1)  # revisionHistoryLimit -1, as 10 varint bytes
    assert decode_message("apps.v1.DeploymentSpec", spec) == {"replicas": 0, "revisionHistoryLimit": -1}
    port = lfield(1, "http") + vfield(3, 80) + lfield(4, vfield(1, 1) + lfield(3, "web"))
    assert decode_message("core.v1.ServicePort", port) == {"name": "http", "port": 80, "targetPort": "web"}
    resources = lfield(1, entry("cpu", lfield(1, "100m")))
    assert decode_message("core.v1.ResourceRequirements", resources) == {"limits": {"cpu": "100m"}}
    stamp = lfield(8, vfield(1, 1_700_000_000))
    assert decode_message("meta.v1.ObjectMeta", stamp) == {"creationTimestamp": "2023-11-14T22:13:20Z"}


def test_repeated_scalars_packed_and_not() -> None:
    packed = lfield(4, varint(1000) + varint(2000))
    assert decode_message("core.v1.PodSecurityContext", packed) == {"supplementalGroups": [1000, 2000]}
    unpacked = vfield(4, 1000) + vfield(4, 2000)
    assert decode_message("core.v1.PodSecurityContext", unpacked) == {"supplementalGroups": [1000, 2000]}
    container = lfield(1, "c") + lfield(3, "sh") + lfield(3, "-c")
    assert decode_message("core.v1.Container", container) == {"name": "c", "command": ["sh", "-c"]}


def test_unknown_fields_are_skipped() -> None:
    body = lfield(1, lfield(1, "c1")) + vfield(99, 5) + varint(98 << 3 | 1) + struct.pack("<d", 1.5)
    assert decode_message("core.v1.ConfigMap", body) == {"metadata": {"name": "c1"}}


@pytest.mark.parametrize(("body", "message"), [
    (b"", "empty data"),
    (b"nope", "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"),
    (MAGIC, "empty body"),
    (MAGIC + b"\x0a\x05ab", "unexpected EOF"),
    (MAGIC + b"\x0a" + b"\xff" * 11, "proto: integer overflow"),
])
def test_bad_envelopes(body: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=f"^{message.replace('[', '.').replace(']', '.')}$"):
        decode_envelope(body)


@pytest.mark.parametrize(("body", "message"), [
    (lfield(1, b"\x0a\x05ab"), "unexpected EOF"),
    (vfield(1, 3), "proto: wrong wireType = 0 for field metadata"),
    (lfield(1, vfield(1, 3)), "proto: wrong wireType = 0 for field name"),
    (b"\x0c", "proto: ConfigMap: wiretype end group for non-group"),
    (b"\x0f", "proto: ConfigMap: illegal wireType 7"),
])
def test_bad_messages(body: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=f"^{message}$"):
        decode_message("core.v1.ConfigMap", body)


def test_inline_structs_print_in_the_parent() -> None:
    # IngressRule embeds IngressRuleValue (json:",inline"); Volume embeds VolumeSource
    rule = lfield(1, "foo.com") + lfield(2, lfield(1, lfield(1, lfield(1, "/bar"))))
    want = {"host": "foo.com", "http": {"paths": [{"path": "/bar"}]}}
    assert decode_message("networking.v1.IngressRule", rule) == want
    volume = lfield(1, "v") + lfield(2, lfield(2, b""))  # volumeSource.emptyDir = {}
    assert decode_message("core.v1.Volume", volume) == {"name": "v", "emptyDir": {}}
