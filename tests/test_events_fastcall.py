"""``componentbase.client.unvalidated``: the generated client methods without pydantic's argument validation."""

from __future__ import annotations

import json

import pytest
from kubernetes import client

import componentbase


@pytest.mark.integration
def test_the_same_call_sends_the_dict_as_built(kube_client: client.ApiClient) -> None:
    core = client.CoreV1Api(kube_client)
    create = componentbase.client.unvalidated(core.create_namespaced_config_map)
    assert create is not core.create_namespaced_config_map
    resp = create("default", {"metadata": {"name": "cm"}, "data": {"k": "v"}}, _preload_content=False)
    assert resp.status == 201
    got = json.loads(core.read_namespaced_config_map("cm", "default", _preload_content=False).data)
    assert got["data"] == {"k": "v"}


@pytest.mark.integration
def test_refusals_raise_as_the_validated_method_does(kube_client: client.ApiClient) -> None:
    core = client.CoreV1Api(kube_client)
    create = componentbase.client.unvalidated(core.create_namespaced_config_map)
    create("default", {"metadata": {"name": "cm"}}, _preload_content=False)
    with pytest.raises(client.ApiException) as err:
        create("default", {"metadata": {"name": "cm"}}, _preload_content=False)
    assert err.value.status == 409


@pytest.mark.unit
def test_anything_else_comes_back_as_it_is() -> None:
    def plain(x: int) -> int:
        return x

    assert componentbase.client.unvalidated(plain) is plain
