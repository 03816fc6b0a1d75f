"""``componentbase.client.request``: a call with a dict body, without the generated methods' pydantic validation."""

from __future__ import annotations

import datetime
import json

import pytest
from kubernetes import client

import componentbase
from componentbase.client import request
from componentbase.testing import LoopbackAPIServer

CONFIG_MAPS = "/api/v1/namespaces/{namespace}/configmaps"
CONFIG_MAP = "/api/v1/namespaces/{namespace}/configmaps/{name}"


def read(core: client.CoreV1Api, name: str) -> dict[str, str]:
    data: dict[str, str] = json.loads(core.read_namespaced_config_map(name, "default", _preload_content=False).data)
    return data


@pytest.mark.integration
def test_the_dict_is_sent_as_built(kube_client: client.ApiClient) -> None:
    resp = request(kube_client, "POST", CONFIG_MAPS, path_params={"namespace": "default"},
                   body={"metadata": {"name": "cm"}, "data": {"k": "v"}})
    assert resp.status == 201
    assert json.loads(resp.read())["metadata"]["name"] == "cm"
    assert read(client.CoreV1Api(kube_client), "cm")["data"] == {"k": "v"}


@pytest.mark.integration
def test_a_datetime_in_a_dict_is_written_as_the_generated_methods_write_it(kube_client: client.ApiClient) -> None:
    when = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    request(kube_client, "POST", CONFIG_MAPS, path_params={"namespace": "default"},
            body={"metadata": {"name": "cm"}, "data": {"when": when}}).read()
    assert read(client.CoreV1Api(kube_client), "cm")["data"] == {"when": when.isoformat()}


@pytest.mark.integration
def test_refusals_raise_what_the_generated_method_raises(kube_client: client.ApiClient) -> None:
    core = client.CoreV1Api(kube_client)
    core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}}, _preload_content=False).read()
    with pytest.raises(client.ApiException) as generated:
        core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}}, _preload_content=False)
    with pytest.raises(client.ApiException) as ours:
        request(kube_client, "POST", CONFIG_MAPS, path_params={"namespace": "default"},
                body={"metadata": {"name": "cm"}})
    assert type(ours.value) is type(generated.value)
    assert ours.value.status == 409
    assert json.loads(ours.value.body)["reason"] == "AlreadyExists"


@pytest.mark.integration
def test_a_patch_merges_a_dict_and_applies_a_list(kube_client: client.ApiClient) -> None:
    core = client.CoreV1Api(kube_client)
    core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}, "data": {"a": "1"}},
                                      _preload_content=False).read()
    where = {"namespace": "default", "name": "cm"}
    request(kube_client, "PATCH", CONFIG_MAP, path_params=where, body={"data": {"b": "2"}}).read()
    assert read(core, "cm")["data"] == {"a": "1", "b": "2"}
    request(kube_client, "PATCH", CONFIG_MAP, path_params=where,
            body=[{"op": "remove", "path": "/data/a"}]).read()
    assert read(core, "cm")["data"] == {"b": "2"}


@pytest.mark.integration
def test_the_content_type_a_caller_names_reaches_the_server(kube_client: client.ApiClient) -> None:
    core = client.CoreV1Api(kube_client)
    core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}, "data": {"a": "1", "b": "2"}},
                                      _preload_content=False).read()
    where = {"namespace": "default", "name": "cm"}
    request(kube_client, "PATCH", CONFIG_MAP, path_params=where, body={"data": {"a": None}},
            content_type="application/merge-patch+json").read()
    assert read(core, "cm")["data"] == {"b": "2"}
    # A dict named a JSON patch is sent as a strategic merge patch, as the generated methods send it.
    request(kube_client, "PATCH", CONFIG_MAP, path_params=where, body={"data": {"c": "3"}},
            content_type="application/json-patch+json").read()
    assert read(core, "cm")["data"] == {"b": "2", "c": "3"}
    with pytest.raises(client.ApiException) as err:  # the server reads the type: kube refuses one it lacks
        request(kube_client, "PATCH", CONFIG_MAP, path_params=where, body={"data": {}},
                content_type="application/x-unknown+json")
    assert err.value.status == 415


@pytest.mark.integration
def test_names_in_the_path_are_quoted(kube_client: client.ApiClient) -> None:
    request(kube_client, "POST", CONFIG_MAPS, path_params={"namespace": "default"},
            body={"metadata": {"name": "cm"}}).read()
    found = request(kube_client, "GET", CONFIG_MAP, path_params={"namespace": "default", "name": "cm"})
    assert json.loads(found.read())["metadata"]["name"] == "cm"
    with pytest.raises(client.ApiException) as err:  # "cm?x" is a name, not "cm" and a query
        request(kube_client, "GET", CONFIG_MAP, path_params={"namespace": "default", "name": "cm?x"})
    assert err.value.status == 404


@pytest.mark.integration
def test_the_client_side_rate_limit_applies(kube_apiserver: LoopbackAPIServer) -> None:
    cc = componentbase.ClientConnectionConfiguration(kubeconfig=kube_apiserver.kubeconfig_path, qps=0.001, burst=1)
    with componentbase.new_api_client(cc) as api:
        request(api, "GET", "/api/v1/namespaces", timeout=5).read()
        with pytest.raises(componentbase.client.ThrottledTimeout):
            request(api, "GET", "/api/v1/namespaces", timeout=5)
