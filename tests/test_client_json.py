"""``decode_json``: orjson's speed with the standard library's answers and errors."""

from __future__ import annotations

import json
import math

import pytest

from componentbase.client import decode_json

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("doc", [
    b'{"kind":"Pod","metadata":{"name":"p","labels":{"a":"b"}},"spec":{"containers":[{"name":"c"}]}}',
    b'[{"type":"ADDED","object":{"n":-0.0,"i":-12,"f":1.5e-3,"t":true,"z":null}}]',
    '{"caf\u00e9":"\u00fc\\u0000"}'.encode(),
    '{"s":"str input"}',
    b'{"a":1,"a":2}',
])
def test_it_answers_what_json_loads_answers(doc: bytes | str) -> None:
    assert decode_json(doc) == json.loads(doc)


def test_what_orjson_refuses_the_standard_library_still_reads() -> None:
    assert math.isnan(decode_json(b"NaN"))
    assert decode_json(b"1E400") == math.inf
    assert decode_json(b'"\\ud800"') == "\ud800"  # a lone surrogate, as json.loads keeps it
    assert decode_json('{"a": 1}'.encode("utf-16")) == {"a": 1}


def test_bad_json_raises_the_standard_librarys_error() -> None:
    with pytest.raises(json.JSONDecodeError) as info:
        decode_json(b'{"a": ')
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(b'{"a": ')
    assert str(info.value) == str(expected.value)
