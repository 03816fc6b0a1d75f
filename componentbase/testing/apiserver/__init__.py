"""A loopback Kubernetes API server for tests, benchmarks and demos; see docs/testing.md."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .apimachinery.resources import Resource, ScalePaths
    from .auth import User
    from .faults import FaultRule, Faults
    from .kubeconfig import kubeconfig_text, write_kubeconfig
    from .loopback import LoopbackAPIServer
    from .server import FAULTS_PATH

#: Each name loads on first use, so ``componentbase-apiserver --help`` (whose ``__main__`` is in this package)
#: answers without loading the server.
_LAZY = {"User": ".auth", "FaultRule": ".faults", "Faults": ".faults", "kubeconfig_text": ".kubeconfig",
         "write_kubeconfig": ".kubeconfig", "LoopbackAPIServer": ".loopback", "Resource": ".apimachinery.resources",
         "ScalePaths": ".apimachinery.resources", "FAULTS_PATH": ".server"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value

__all__ = ["FAULTS_PATH", "FaultRule", "Faults", "LoopbackAPIServer", "Resource", "ScalePaths", "User",
           "kubeconfig_text", "write_kubeconfig"]
