"""Testing helpers for components: a loopback Kubernetes API server, its pytest fixtures, and ``eventually``.

Importing this package does not import ``kubernetes``; only ``LoopbackAPIServer.api_client`` does.
"""

from __future__ import annotations

from ._eventually import eventually
from ._fakeclock import FakeClock
from ._nodelifecycle import NodeLifecycle
from ._ports import free_port
from .apiserver import FAULTS_PATH, LoopbackAPIServer, Resource, ScalePaths, User

__all__ = ["FAULTS_PATH", "FakeClock", "LoopbackAPIServer", "NodeLifecycle", "Resource", "ScalePaths", "User",
           "eventually", "free_port"]
