"""Validation helpers shared by every component's options and config types."""

from componentbase.validation.field import (
    AggregateError,
    ErrorType,
    FieldError,
    Path,
    aggregate,
    duplicate,
    forbidden,
    internal,
    invalid,
    not_found,
    not_supported,
    required,
    too_long,
    too_many,
)

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
