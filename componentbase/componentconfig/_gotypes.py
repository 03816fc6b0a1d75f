"""Go's sized numbers and pointer fields, for config types that must decode as kube's do.

A Go config field of type ``int32`` refuses 2147483648 when the file is decoded, and a pointer field
(``*int32``) reads ``null`` as unset, so its default applies. Python's ``int`` has neither rule: annotate
a field ``Int32``/``Int64``/``Float32`` for the range, and declare it with :func:`pointer` for ``null``;
``pointer(None, omitempty=True)`` is Go's ``*T `json:",omitempty"```: left out of a written file while nil.
"""

from __future__ import annotations

import typing
from typing import Any

import attrs

__all__ = ["FLOAT32_MAX", "NULL_IS_UNSET", "OMIT_EMPTY", "SIZED", "Float32", "Int32", "Int64", "pointer"]

#: A Go ``int32``, ``int64`` or ``float32`` field: decoding refuses a value out of its range.
Int32 = typing.NewType("Int32", int)
Int64 = typing.NewType("Int64", int)
Float32 = typing.NewType("Float32", float)

FLOAT32_MAX = 3.4028234663852886e38

#: The Go type name and the inclusive range of each sized type.
SIZED: dict[Any, tuple[str, float, float]] = {
    Int32: ("int32", -(2**31), 2**31 - 1),
    Int64: ("int64", -(2**63), 2**63 - 1),
    Float32: ("float32", -FLOAT32_MAX, FLOAT32_MAX),
}

#: Field metadata: ``null`` in a file means the field was not given (a Go pointer field).
NULL_IS_UNSET = "componentbase.null_is_unset"
#: Field metadata: a ``None`` value is not written at all (Go's ``omitempty`` on a pointer field).
OMIT_EMPTY = "componentbase.omitempty"


def pointer(default: Any = attrs.NOTHING, *, factory: Any = None, converter: Any = None,
            omitempty: bool = False) -> Any:
    """An attrs field that reads ``null`` as absent, so the default (or the defaulter) applies; with
    ``omitempty``, a ``None`` value is not written, as Go leaves out a nil ``omitempty`` pointer."""
    metadata = {NULL_IS_UNSET: True, **({OMIT_EMPTY: True} if omitempty else {})}
    if factory is not None:
        return attrs.field(factory=factory, converter=converter, metadata=metadata)
    return attrs.field(default=default, converter=converter, metadata=metadata)
