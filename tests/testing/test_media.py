"""Request bodies in every media type a client may send: decoded, or refused with kube's 400 or 415."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from componentbase.client import request
from componentbase.testing import LoopbackAPIServer

pytestmark = pytest.mark.integration

CRDS = Path(__file__).parent / "crds"
PROTOBUF = "application/vnd.kubernetes.protobuf"


@pytest.fixture
def kube_apiserver() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer(crd_dirs=[CRDS]) as server:
        yield server


def _post(api: client.ApiClient, path: str, body: bytes, content_type: str) -> ApiException | dict[str, object]:
    try:
        resp = request(api, "POST", path, body=body, content_type=content_type)
    except ApiException as err:
        return err
    return dict(json.loads(resp.read()))


def _status(answer: ApiException | dict[str, object]) -> tuple[int, dict[str, object]]:
    assert isinstance(answer, ApiException), answer
    return answer.status, json.loads(answer.body)


def test_yaml_body_creates(kube_client: client.ApiClient) -> None:
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y1\ndata:\n  when: 2024-01-01\n"
    got = _post(kube_client, "/api/v1/namespaces/default/configmaps", body, "application/yaml")
    assert isinstance(got, dict) and got["data"] == {"when": "2024-01-01"}


@pytest.mark.parametrize(("body", "content_type", "message"), [
    (b"nope", PROTOBUF, "the object provided is unrecognized (must be of type ConfigMap): provided data does not "
                        "appear to be a protobuf message, expected prefix [107 56 115 0] (6e6f7065)"),
    (b"k8s\x00\x0a\x05ab", PROTOBUF, "the object provided is unrecognized (must be of type ConfigMap): "
                                      "unexpected EOF (6b3873000a056162)"),
    (b"k8s\x00\x0a\x0c\x0a\x02v1\x12\x06Secret\x12\x02\x0a\x09", PROTOBUF,
     'Secret in version "v1" cannot be handled as a ConfigMap: unexpected EOF'),
    (b"k8s\x00\x0a\x0b\x0a\x02v1\x12\x05Thing\x12\x00", PROTOBUF,
     'Thing in version "v1" cannot be handled as a ConfigMap: no kind "Thing" is registered for version "v1"'),
    (b"a: [1", "application/yaml", "the object provided is unrecognized (must be of type ConfigMap): error "
                                   "converting YAML to JSON: yaml: "),
])
def test_undecodable_bodies_are_400(kube_client: client.ApiClient, body: bytes, content_type: str,
                                    message: str) -> None:
    code, status = _status(_post(kube_client, "/api/v1/namespaces/default/configmaps", body, content_type))
    assert (code, status["reason"]) == (400, "BadRequest")
    assert str(status["message"]).startswith(message)


def test_unknown_media_type_is_415(kube_client: client.ApiClient) -> None:
    code, status = _status(_post(kube_client, "/api/v1/namespaces/default/configmaps", b"x", "text/plain"))
    assert (code, status["reason"]) == (415, "UnsupportedMediaType")
    assert status["message"] == ("the body of the request was in an unknown format - accepted media types include: "
                                 "application/json, application/yaml, application/vnd.kubernetes.protobuf")


def test_custom_resources_do_not_read_protobuf(kube_client: client.ApiClient) -> None:
    path = "/apis/example.com/v1/namespaces/default/widgets"
    code, status = _status(_post(kube_client, path, b"k8s\x00", PROTOBUF))
    assert code == 415 and str(status["message"]).endswith("accepted media types include: application/json, "
                                                           "application/yaml")
