"""What a user sees when a config file is wrong: one line per problem, naming the file and the line."""

from __future__ import annotations

from componentbase.util.field import AggregateError

__all__ = ["DecodeError", "LocatedError", "decode_error"]


class LocatedError(ValueError):
    """One problem in one file, printed as ``file:line: message`` (``file: message`` without a line)."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        self.source = source
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.source}: {self.message}"
        return f"{self.source}:{self.line}: {self.message}"


class DecodeError(AggregateError):
    """Every problem found in a config file, one :class:`LocatedError` per line, so one pass fixes them all."""


def decode_error(problems: list[LocatedError]) -> DecodeError:
    """Problems in file order; those without a line last."""
    ordered = sorted(problems, key=lambda p: (p.line is None, p.line or 0))
    return DecodeError(ordered)
