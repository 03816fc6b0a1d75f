"""A loopback Kubernetes API server for tests, benchmarks and demos; see docs/testing.md."""

from __future__ import annotations

from .auth import User
from .faults import FaultRule, Faults
from .kubeconfig import kubeconfig_text, write_kubeconfig
from .loopback import LoopbackAPIServer
from .resources import Resource, ScalePaths
from .server import FAULTS_PATH

__all__ = ["FAULTS_PATH", "FaultRule", "Faults", "LoopbackAPIServer", "Resource", "ScalePaths", "User",
           "kubeconfig_text", "write_kubeconfig"]
