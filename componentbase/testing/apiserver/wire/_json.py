"""JSON in and out of the server: orjson's speed, the standard library's answers and bytes.

Encoding a stored object was a tenth of a write's CPU with ``json.dumps`` (16 us for a pod, orjson 1.3 us),
and decoding a body about as much. Clients must see the same bytes and errors as before, so orjson is used
only where its answer is the standard library's:

- decoding: what orjson refuses (NaN, Infinity, lone surrogates, encodings other than UTF-8) and documents
  with a run of 19 digits (orjson reads an integer beyond 64 bits as a float) go to ``json.loads``, whose
  result or error stands;
- encoding: what orjson refuses (integers beyond 64 bits, keys that are not strings, nesting past 254)
  goes to ``json.dumps``, and so does an output holding a float between 1e-10 and 1e-4, which orjson
  writes as ``0.00001`` or ``1e-7`` where Python writes ``1e-05`` and ``1e-07``. orjson writes NaN and
  Infinity as ``null``: once a document held them (a decode that needed ``json.loads``, or YAML with
  ``.nan``), this process encodes with ``json.dumps`` only.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

__all__ = ["dumps", "loads", "note_floats"]

_DIGITS_AS_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_NINETEEN_DIGITS = b"0" * 19  # in the translated text: a run of 19 digits (a regular expression took 8 us)
_NUMERIC = frozenset(b"0123456789.")
_json_only = [False]  # set for good once a document may hold NaN or Infinity


def loads(data: bytes) -> Any:
    """``json.loads(data)``."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        doc = json.loads(data)
        _json_only[0] = True  # it may hold NaN or Infinity, which orjson would encode as null
        return doc
    return json.loads(data) if _NINETEEN_DIGITS in bytes(data).translate(_DIGITS_AS_ZEROS) else doc


def dumps(obj: Any) -> bytes:
    """``json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()``."""
    if not _json_only[0]:
        try:
            out = orjson.dumps(obj)
        except TypeError:  # orjson.JSONEncodeError
            pass
        else:
            if not _small_float(out):
                return out
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _small_float(out: bytes) -> bool:
    """Might ``out`` hold a float orjson writes otherwise than Python (``0.00001``, ``1e-7``)? A string that
    looks so too only costs a ``json.dumps``. Found with ``bytes.find``: a regular expression took as long
    as the encoding saved."""
    if b"0.0000" in out:
        return True
    at = out.find(b"e-")
    while at != -1:
        if at and out[at - 1] in _NUMERIC and out[at + 2:at + 3].isdigit() and not out[at + 3:at + 4].isdigit():
            return True
        at = out.find(b"e-", at + 2)
    return False


def note_floats(doc: Any) -> None:
    """Look for NaN and Infinity in a document decoded otherwise than by ``loads`` (YAML)."""
    stack = [doc]
    while stack and not _json_only[0]:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, float) and not math.isfinite(value):
            _json_only[0] = True
