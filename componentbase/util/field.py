"""Field-path validation errors, in the style of ``k8s.io/apimachinery/pkg/util/validation/field``.

Validation returns *all* problems at once, each naming where it is
(``leaderElection.renewDeadline: Invalid value: "20s": must be less than leaseDuration``), so a user
fixes a config file in one pass instead of one error per run.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from componentbase.util._duration import Duration

__all__ = [
    "AggregateError",
    "ErrorType",
    "FieldError",
    "Path",
    "aggregate",
    "duplicate",
    "forbidden",
    "internal",
    "invalid",
    "not_found",
    "not_supported",
    "required",
    "too_long",
    "too_many",
]


class Path:
    """A path to a field: ``Path("profiles").index(1).child("schedulerName")`` -> ``profiles[1].schedulerName``."""

    __slots__ = ("_text",)

    def __init__(self, name: str = "", *more: str) -> None:
        self._text = ".".join(part for part in (name, *more) if part)

    def child(self, name: str, *more: str) -> Path:
        path = Path()
        path._text = ".".join(part for part in (self._text, name, *more) if part)
        return path

    def index(self, i: int) -> Path:
        path = Path()
        path._text = f"{self._text}[{i}]"
        return path

    def key(self, k: str) -> Path:
        path = Path()
        path._text = f"{self._text}[{k}]"
        return path

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Path({self._text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Path) and other._text == self._text

    def __hash__(self) -> int:
        return hash(self._text)


class ErrorType(enum.Enum):
    """The kind of problem, worded as apimachinery words it, so messages read as kube's do."""

    NOT_FOUND = "Not found"
    REQUIRED = "Required value"
    DUPLICATE = "Duplicate value"
    INVALID = "Invalid value"
    NOT_SUPPORTED = "Unsupported value"
    FORBIDDEN = "Forbidden"
    TOO_LONG = "Too long"
    TOO_MANY = "Too many"
    INTERNAL = "Internal error"


_NO_VALUE = object()


def format_value(value: Any) -> str:
    """Render a bad value as Go's ``%q``/``%v`` would, so messages match upstream's."""
    if isinstance(value, Duration):
        return json.dumps(str(value), ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + " ".join(format_value(v) for v in value) + "]"
    return str(value)


class FieldError(Exception):
    """One problem with one field."""

    def __init__(self, type: ErrorType, field: Path | str, bad_value: Any = _NO_VALUE, detail: str = "") -> None:
        self.type = type
        self.field = str(field)
        self.bad_value = bad_value
        self.detail = detail
        super().__init__(self.message())

    def body(self) -> str:
        """The message without the field path, as upstream's ``ErrorBody``."""
        text = self.type.value
        if self.bad_value is not _NO_VALUE and self.type not in (ErrorType.REQUIRED, ErrorType.FORBIDDEN,
                                                                ErrorType.TOO_MANY, ErrorType.INTERNAL):
            text += f": {format_value(self.bad_value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def message(self) -> str:
        return f"{self.field}: {self.body()}" if self.field else self.body()

    def __str__(self) -> str:
        return self.message()

    def __repr__(self) -> str:
        return f"FieldError({self.message()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldError) and other.message() == self.message()

    def __hash__(self) -> int:
        return hash(self.message())


def required(field: Path | str, detail: str = "") -> FieldError:
    """A field that must be set is missing or empty."""
    return FieldError(ErrorType.REQUIRED, field, detail=detail)


def invalid(field: Path | str, value: Any, detail: str) -> FieldError:
    """A value of the right type that breaks a rule; ``detail`` says which."""
    return FieldError(ErrorType.INVALID, field, value, detail)


def not_supported(field: Path | str, value: Any, valid_values: Iterable[str]) -> FieldError:
    """A value outside a fixed set; the message lists the set so the user can pick."""
    detail = "supported values: " + ", ".join(json.dumps(v) for v in valid_values)
    return FieldError(ErrorType.NOT_SUPPORTED, field, value, detail)


def duplicate(field: Path | str, value: Any) -> FieldError:
    """A value that must be unique in its list appears again."""
    return FieldError(ErrorType.DUPLICATE, field, value)


def not_found(field: Path | str, value: Any) -> FieldError:
    """A value that names something which does not exist."""
    return FieldError(ErrorType.NOT_FOUND, field, value)


def forbidden(field: Path | str, detail: str) -> FieldError:
    """A field that may not be set here, whatever its value."""
    return FieldError(ErrorType.FORBIDDEN, field, detail=detail)


def too_long(field: Path | str, value: Any, max_length: int) -> FieldError:
    """A string longer than ``max_length`` bytes."""
    return FieldError(ErrorType.TOO_LONG, field, value, f"must have at most {max_length} bytes")


def too_many(field: Path | str, actual: int, max_items: int) -> FieldError:
    """A list with more than ``max_items`` items."""
    return FieldError(ErrorType.TOO_MANY, field, detail=f"{actual}: must have at most {max_items} items")


def internal(field: Path | str, err: BaseException | str) -> FieldError:
    """Validation itself failed: the fault is in the program, not in the user's value."""
    return FieldError(ErrorType.INTERNAL, field, detail=str(err))


class AggregateError(Exception):
    """Several errors reported together, one per line (upstream's ``utilerrors.Aggregate``)."""

    errors: list[BaseException]

    def __init__(self, errors: Sequence[BaseException]) -> None:
        flat: list[BaseException] = []
        for err in errors:
            if isinstance(err, AggregateError):
                flat.extend(err.errors)
            else:
                flat.append(err)
        self.errors = flat
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(str(err) for err in self.errors)

    def __iter__(self) -> Iterator[BaseException]:
        return iter(self.errors)

    def __len__(self) -> int:
        return len(self.errors)


def aggregate(errors: Sequence[BaseException]) -> AggregateError | None:
    """``None`` for no errors, else one :class:`AggregateError` holding them all (flattened)."""
    return AggregateError(errors) if errors else None
