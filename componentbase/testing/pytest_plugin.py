"""pytest fixtures for the loopback API server; registered through the ``pytest11`` entry point."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .apiserver import LoopbackAPIServer

__all__ = ["kube_apiserver", "kube_apiserver_session", "kube_client"]


@pytest.fixture
def kube_apiserver() -> Iterator[LoopbackAPIServer]:
    """A fresh server per test: starting one takes milliseconds, and tests stay independent."""
    with LoopbackAPIServer() as server:
        yield server


@pytest.fixture(scope="session")
def kube_apiserver_session() -> Iterator[LoopbackAPIServer]:
    """One server shared by a whole session, for suites that only read or clean up after themselves."""
    with LoopbackAPIServer() as server:
        yield server


@pytest.fixture
def kube_client(kube_apiserver: LoopbackAPIServer) -> Iterator[Any]:
    """A ready ``kubernetes.client.ApiClient`` for ``kube_apiserver``."""
    client = kube_apiserver.api_client()
    try:
        yield client
    finally:
        client.close()
