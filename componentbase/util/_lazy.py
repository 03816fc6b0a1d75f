"""``lazy_exports``: a package's ``__getattr__`` (PEP 562) that loads some of its names on first use.

A package whose options are on every component's ``--help`` path keeps its heavy modules (sockets, TLS, the
HTTP server) off that path by exporting them this way; each loads once and then lives in the package's
namespace like any other name.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: each name of ``exports`` (name -> module, relative to ``package``
    when it starts with a dot) is imported on first use and kept; any other name is an ``AttributeError``."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
