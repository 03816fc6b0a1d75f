"""Testing helpers for components: a loopback Kubernetes API server and its pytest fixtures.

Importing this package does not import ``kubernetes``; only ``LoopbackAPIServer.api_client`` does.
"""

from __future__ import annotations

from .apiserver import (
           FAULTS_PATH,
           FaultRule,
           Faults,
           LoopbackAPIServer,
           Resource,
           ScalePaths,
           User,
           kubeconfig_text,
           write_kubeconfig,
)

__all__ = ["FAULTS_PATH", "FaultRule", "Faults", "LoopbackAPIServer", "User", "kubeconfig_text",
           "write_kubeconfig"]
__all__ += ["Resource", "ScalePaths"]
