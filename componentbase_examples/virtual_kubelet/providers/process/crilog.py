"""Container logs in the CRI format the kubelet keeps (``<RFC3339Nano> <stream> <P|F> <text>``), read back.

The shim (``shim.LogWriter``) writes them.

Every line carries its time and stream, so ``timestamps=true`` can show when each line was written and a
partial line (a write without a newline) is joined back as the reader saw it, exactly as the kubelet does.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable, Iterator
from typing import IO

from componentbase.client import parse_time

__all__ = ["read_log"]


def _parse(line: bytes) -> tuple[bytes, bytes] | None:
    """(timestamp, text with its newline, if the record is a full line)."""
    parts = line.rstrip(b"\n").split(b" ", 3)
    if len(parts) < 3:
        return None
    stamp, _stream, tag = parts[0], parts[1], parts[2]
    text = parts[3] if len(parts) == 4 else b""
    return stamp, text + (b"\n" if tag == b"F" else b"")


def _records(f: IO[bytes], since: dt.datetime | None) -> Iterator[tuple[bytes, bytes]]:
    for line in f:
        if not line.endswith(b"\n"):
            f.seek(-len(line), os.SEEK_CUR)  # a record still being written: read it next time
            return
        rec = _parse(line)
        if rec is None:
            continue
        if since is not None and _time_of(rec[0]) < since:
            continue
        yield rec


def _time_of(stamp: bytes) -> dt.datetime:
    try:
        return parse_time(stamp.decode(errors="replace"))
    except ValueError:
        return dt.datetime.min.replace(tzinfo=dt.UTC)


def _render(rec: tuple[bytes, bytes], timestamps: bool) -> bytes:
    return rec[0] + b" " + rec[1] if timestamps else rec[1]


def read_log(path: str, *, tail: int | None = None, limit_bytes: int | None = None, timestamps: bool = False,
             since: dt.datetime | None = None, follow: Callable[[], bool] | None = None,
             poll: float = 0.1) -> Iterator[bytes]:
    """The log's lines as the kubelet serves them; ``follow()`` says whether to keep waiting for more."""
    if not os.path.exists(path):
        return
    left = limit_bytes
    with open(path, "rb") as f:
        first = list(_records(f, since))
        if tail is not None:
            first = first[-tail:] if tail > 0 else []
        pending = [_render(r, timestamps) for r in first]
        while True:
            for chunk in pending:
                if left is not None:
                    chunk = chunk[:left]
                    left -= len(chunk)
                if chunk:
                    yield chunk
                if left is not None and left <= 0:
                    return
            if follow is None:
                return
            still = follow()
            pending = [_render(r, timestamps) for r in _records(f, None)]
            if not pending:
                if not still:
                    return
                time.sleep(poll)
