"""The pod controller's API calls reuse keep-alive connections instead of opening one per call."""

from __future__ import annotations

from typing import Any

import pytest

from componentbase.testing import eventually
from componentbase_examples.virtual_kubelet.providers.mock import MockProvider
from tests.virtual_kubelet.conftest import Kube, new_provider

pytestmark = pytest.mark.integration

PODS = 40


def opened(api: Any) -> int:
    """Connections the client's pool for the API server has opened so far (urllib3 counts them)."""
    return int(api.rest_client.pool_manager.connection_from_url(api.configuration.host).num_connections)


def test_status_writes_and_deletes_reuse_connections(kube: Kube, run_node: Any) -> None:
    run_node(new_provider(MockProvider), workers=4)
    before = opened(kube.api)
    for i in range(PODS):
        kube.create_pod(f"p{i}", [{"name": "c", "image": "nginx"}])
    eventually(lambda: all(kube.phase(f"p{i}") == "Running" for i in range(PODS)), 20, what="every pod to run")
    for i in range(PODS):  # read, so that this test's own calls leave their connections in the pool
        kube.core.delete_namespaced_pod(f"p{i}", "default", body={}, _preload_content=False).read()
    eventually(lambda: all(kube.pod(f"p{i}") is None for i in range(PODS)), 20, what="every pod to be deleted")
    # One status write, one event and one delete per pod: a connection per call would be 120 or more.
    assert opened(kube.api) - before < PODS // 2
