"""Log line formats: klog's text header and component-base's JSON, over the standard ``logging`` module."""

from __future__ import annotations

import json
import logging
import os
import time

__all__ = ["JSONFormatter", "KlogFormatter", "verbosity_of"]


def verbosity_of(levelno: int) -> int:
    """``V(n)`` records sit ``n`` below INFO; everything at INFO or above is V(0)."""
    return max(0, logging.INFO - levelno) if levelno < logging.INFO else 0


def _severity(levelno: int) -> str:
    if levelno >= logging.CRITICAL:
        return "F"
    if levelno >= logging.ERROR:
        return "E"
    if levelno >= logging.WARNING:
        return "W"
    return "I"


class KlogFormatter(logging.Formatter):
    """``I1202 13:13:21.123456   12345 file.py:42] message``, klog's header, so log tooling reads it."""

    def format(self, record: logging.LogRecord) -> str:
        t = time.gmtime(record.created)
        micros = int((record.created % 1) * 1_000_000)
        header = (
            f"{_severity(record.levelno)}{t.tm_mon:02d}{t.tm_mday:02d} "
            f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{micros:06d} "
            f"{os.getpid():7d} {record.filename}:{record.lineno}] "
        )
        text = header + record.getMessage()
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


class JSONFormatter(logging.Formatter):
    """component-base's JSON lines: ``{"ts":..., "caller":..., "msg":..., "v":0}``."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": round(record.created, 6),
            "caller": f"{record.filename}:{record.lineno}",
            "msg": record.getMessage(),
        }
        if record.levelno >= logging.ERROR:
            entry["err"] = self.formatException(record.exc_info) if record.exc_info else record.getMessage()
        else:
            entry["v"] = verbosity_of(record.levelno)
        return json.dumps(entry, ensure_ascii=False)
