"""Testing helpers for components: a loopback Kubernetes API server, its pytest fixtures, and ``eventually``.

Importing this package does not import ``kubernetes``; only ``LoopbackAPIServer.api_client`` does.
"""

from __future__ import annotations

from ._eventually import eventually
from .apiserver import (
           FAULTS_PATH,
           FaultRule,
           Faults,
           LoopbackAPIServer,
           User,
           kubeconfig_text,
           write_kubeconfig,
)

__all__ = ["FAULTS_PATH", "FaultRule", "Faults", "LoopbackAPIServer", "User", "eventually", "kubeconfig_text",
           "write_kubeconfig"]
