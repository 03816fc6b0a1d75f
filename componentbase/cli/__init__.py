"""The command line: flag sets with pflag semantics (sections, deprecated and hidden flags, Go durations) and the
``Options`` base every option group subclasses, whose fields declare their own flags.
"""

from __future__ import annotations

from componentbase.cli._flags import (
    BOOL,
    DURATION,
    FLOAT,
    INT,
    STRING,
    STRINGS,
    Flag,
    FlagError,
    FlagSet,
    FlagType,
    NamedFlagSets,
)
from componentbase.cli._options import (
    FlagSpec,
    Options,
    flag,
)

__all__ = [
    "BOOL",
    "DURATION",
    "FLOAT",
    "INT",
    "STRING",
    "STRINGS",
    "Flag",
    "FlagError",
    "FlagSet",
    "FlagSpec",
    "FlagType",
    "NamedFlagSets",
    "Options",
    "flag",
]
