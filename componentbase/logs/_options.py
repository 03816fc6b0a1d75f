"""The "Logs flags" section: ``-v``, ``--vmodule``, ``--logging-format``, applied to ``logging``.

Library code logs through ``logging`` at ``V(n)`` levels (``n`` below INFO), so ``-v=2`` shows what klog's
``V(2).Info`` would, and an embedding program keeps control of its own handlers if it wants.
"""

from __future__ import annotations

import fnmatch
import logging
import sys
from typing import TextIO

import attrs

from componentbase.cli import _flags as cliflags
from componentbase.cli._options import Options
from componentbase.logs._format import (
    JSONFormatter,
    KlogFormatter,
    verbosity_of,
)
from componentbase.util import field, parse_quantity
from componentbase.util._duration import Duration

__all__ = ["FORMATS", "LogsOptions", "V", "configure"]

FORMATS = ("text", "json")
SECTION = "Logs flags"


def _parse_size(text: str) -> str:
    parse_quantity(text)  # ValueError names what is wrong
    return text


#: component-base's ``quantity`` flag: a byte size such as ``512``, ``1K``, ``2Ki``.
QUANTITY = cliflags.FlagType("quantity", _parse_size, str, "0")

_BUFFER = ("[Alpha] In {fmt} format with split output streams, the info messages can be buffered for a while to "
           "increase performance. The default value of zero bytes disables buffering. The size can be specified as "
           "number of bytes (512), multiples of 1000 (1K), multiples of 1024 (2Ki), or powers of those (3M, 4G, 5Mi, "
           "6Gi). Enable the LoggingAlphaOptions feature gate to use this.")
_SPLIT = ("[Alpha] In {fmt} format, write error messages to stderr and info messages to stdout. The default is to "
          "write a single stream to stdout. Enable the LoggingAlphaOptions feature gate to use this.")
_ONE_STREAM = "every log line is written to stderr at once, unbuffered"


def V(level: int) -> int:
    """The ``logging`` level of klog's ``V(level)``: ``log.log(V(2), "...")``."""
    return logging.INFO - level


def _parse_vmodule(text: str) -> list[tuple[str, int]]:
    rules = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        pattern, sep, level = part.partition("=")
        if not sep or not pattern or not level.isascii() or not level.isdigit():
            raise ValueError(f"expect comma-separated list of pattern=N, got {part!r}")
        rules.append((pattern, int(level)))
    return rules


class _VModuleFilter(logging.Filter):
    """Per-module verbosity: a record passes at the verbosity of the first pattern matching its module."""

    def __init__(self, verbosity: int, rules: list[tuple[str, int]]) -> None:
        super().__init__()
        self.verbosity = verbosity
        self.rules = rules

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.INFO:
            return True
        limit = self.verbosity
        for pattern, level in self.rules:
            if fnmatch.fnmatch(record.module, pattern) or fnmatch.fnmatch(record.name, pattern):
                limit = level
                break
        return verbosity_of(record.levelno) <= limit


def configure(verbosity: int = 0, vmodule: str = "", fmt: str = "text", stream: TextIO | None = None) -> None:
    """Send the root logger to stderr in the chosen format at the chosen verbosity."""
    rules = _parse_vmodule(vmodule)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JSONFormatter() if fmt == "json" else KlogFormatter())
    handler.addFilter(_VModuleFilter(verbosity, rules))
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_componentbase", False)]:
        root.removeHandler(old)
    handler._componentbase = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    most = max([verbosity, *(level for _, level in rules)])
    root.setLevel(V(most))


@attrs.define
class LogsOptions(Options):
    """component-base's ``logs.Options``, as every component has them."""

    verbosity: int = 0
    vmodule: str = ""
    format: str = "text"
    #: Accepted as component-base's, with no effect: Python's handlers write each line through.
    flush_frequency: Duration = attrs.field(default=Duration(5), converter=Duration)
    text_info_buffer_size: str = "0"
    json_info_buffer_size: str = "0"
    text_split_stream: bool = False
    json_split_stream: bool = False

    def add_flags(self, fss: cliflags.NamedFlagSets) -> None:
        fs = fss.flag_set(SECTION)
        fs.int("v", self, "verbosity", "number for the log level verbosity", shorthand="v", type_label="Level")
        fs.string("vmodule", self, "vmodule",
                  "comma-separated list of pattern=N settings for file-filtered logging "
                  "(only works for text log format)", type_label="pattern=N,...")
        fs.string("logging-format", self, "format",
                  'Sets the log format. Permitted formats: "json", "text".')
        fs.duration("log-flush-frequency", self, "flush_frequency", "Maximum number of seconds between log flushes "
                    "[No effect here: each log line is written through at once]",
                    inert="each log line is written through at once")
        for fmt in FORMATS:
            name = fmt.upper() if fmt == "json" else fmt
            fs.var(f"log-{fmt}-info-buffer-size", self, f"{fmt}_info_buffer_size", QUANTITY,
                   _BUFFER.format(fmt=name) + f" [No effect here: {_ONE_STREAM}]", inert=_ONE_STREAM)
            fs.bool(f"log-{fmt}-split-stream", self, f"{fmt}_split_stream",
                    _SPLIT.format(fmt=name) + f" [No effect here: {_ONE_STREAM}]", inert=_ONE_STREAM)

    def validate(self) -> list[Exception]:
        errs: list[Exception] = []
        if self.verbosity < 0:
            errs.append(field.invalid("v", self.verbosity, "must be non-negative"))
        if self.format not in FORMATS:
            errs.append(field.not_supported("logging-format", self.format, FORMATS))
        try:
            _parse_vmodule(self.vmodule)
        except ValueError as err:
            errs.append(field.invalid("vmodule", self.vmodule, str(err)))
        if self.vmodule and self.format == "json":
            errs.append(field.forbidden("vmodule", "only supported for text log format"))
        return errs

    def apply(self, stream: TextIO | None = None) -> None:
        """Configure ``logging``; called as soon as flags are parsed, so everything after logs right.

        It runs before validation, so it must not fail on a bad value: ``validate`` reports that one.
        """
        vmodule = self.vmodule if self.format == "text" else ""
        try:
            _parse_vmodule(vmodule)
        except ValueError:
            vmodule = ""
        configure(max(0, self.verbosity), vmodule, self.format if self.format in FORMATS else "text", stream)
