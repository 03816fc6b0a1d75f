"""Deprecated alias of ``.auth.reviews``, where issue 30's layout moved this module.

Importing it warns; every name is read from the new module, so old imports keep working until it goes.
"""

from __future__ import annotations

import warnings
from typing import Any

from .auth import reviews as _moved

warnings.warn(f"{__name__} is deprecated; import {_moved.__name__}", DeprecationWarning, stacklevel=2)


def __getattr__(name: str) -> Any:
    return getattr(_moved, name)
