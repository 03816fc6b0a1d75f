"""Testing helpers for components: a loopback Kubernetes API server, its pytest fixtures, and ``eventually``.

Importing this package does not import ``kubernetes``; only ``LoopbackAPIServer.api_client`` does.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._eventually import eventually
from ._fakeclock import FakeClock
from ._ports import free_port

if TYPE_CHECKING:
    from ._nodelifecycle import NodeLifecycle
    from ._webhookinstall import install_webhooks
    from .apiserver import FAULTS_PATH, LoopbackAPIServer, Resource, ScalePaths, User

#: The server loads on first use: ``componentbase-apiserver --help`` and the demo's ``--help`` import this
#: package (``free_port``) and need none of it.
_LAZY = {"NodeLifecycle": "._nodelifecycle", "FAULTS_PATH": ".apiserver", "LoopbackAPIServer": ".apiserver",
         "Resource": ".apiserver", "ScalePaths": ".apiserver", "User": ".apiserver",
         "install_webhooks": "._webhookinstall"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value

__all__ = ["FAULTS_PATH", "FakeClock", "LoopbackAPIServer", "NodeLifecycle", "Resource", "ScalePaths", "User",
           "eventually", "free_port", "install_webhooks"]
