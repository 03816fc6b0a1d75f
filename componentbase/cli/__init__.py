"""The command line: flag sets with pflag semantics (sections, deprecated and hidden flags, Go durations) and the
``Options`` base every option group subclasses, whose fields declare their own flags.
"""

from __future__ import annotations

from componentbase.cli._flags import (
    DURATION,
    FlagError,
    FlagType,
    NamedFlagSets,
)
from componentbase.cli._options import (
    Options,
    flag,
)

__all__ = [
    "DURATION",
    "FlagError",
    "FlagType",
    "NamedFlagSets",
    "Options",
    "flag",
]
