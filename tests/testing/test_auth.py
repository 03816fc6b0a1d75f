"""Static token authentication, TokenReview, SubjectAccessReview and the allow-list policy."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer

TOKENS = 'admin-token,admin,1,"system:masters"\nnode-token,system:node:n1,2,"system:nodes,extra"\nbob-token,bob,3\n'


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokens.csv"
    path.write_text(TOKENS)
    return path


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(
        "- group: system:nodes\n"
        "  verbs: [get, list, watch]\n"
        "  resources: [pods, nodes/status]\n"
        "- user: bob\n"
        "  verbs: ['*']\n"
        "  resources: [configmaps]\n"
        "  namespaces: [default]\n"
        "- user: bob\n"
        "  verbs: [get]\n"
        "  paths: ['/healthz', '/metrics*']\n"
    )
    return path


@pytest.fixture
def server(token_file: Path, policy_file: Path) -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer(token_auth_file=token_file, authorization_policy_file=policy_file) as s:
        yield s


def _get(server: LoopbackAPIServer, path: str, token: str | None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        request = urllib.request.Request(server.url + path, headers=headers)
        with urllib.request.urlopen(request, timeout=10, context=server.ssl_context()) as r:
            return int(r.status)
    except urllib.error.HTTPError as err:
        body = json.loads(err.read())
        assert body["kind"] == "Status" and body["code"] == err.code
        return err.code


@pytest.mark.integration
def test_requests_need_a_valid_token(server: LoopbackAPIServer) -> None:
    assert _get(server, "/api/v1/namespaces", None) == 401
    assert _get(server, "/api/v1/namespaces", "wrong") == 401
    assert _get(server, "/api/v1/namespaces", "bob-token") == 200


@pytest.mark.integration
def test_kubeconfig_carries_first_token(server: LoopbackAPIServer) -> None:
    assert server.token == "admin-token"
    assert "admin-token" in Path(server.kubeconfig_path).read_text()
    with server.api_client() as api:
        assert client.CoreV1Api(api).list_namespace().items


@pytest.mark.integration
def test_token_review(server: LoopbackAPIServer) -> None:
    with server.api_client() as api:
        authn = client.AuthenticationV1Api(api)
        review = authn.create_token_review(client.V1TokenReview(spec=client.V1TokenReviewSpec(token="node-token")))
        assert review.status.authenticated is True
        assert review.status.user.username == "system:node:n1" and review.status.user.uid == "2"
        assert review.status.user.groups == ["system:nodes", "extra", "system:authenticated"]
        bad = authn.create_token_review(client.V1TokenReview(spec=client.V1TokenReviewSpec(token="nope")))
        assert bad.status.authenticated is False


def _sar(api: client.ApiClient, user: str, groups: list[str], **attrs: str) -> client.V1SubjectAccessReview:
    if "path" in attrs:
        spec = client.V1SubjectAccessReviewSpec(user=user, groups=groups,
                                                non_resource_attributes=client.V1NonResourceAttributes(**attrs))
    else:
        spec = client.V1SubjectAccessReviewSpec(user=user, groups=groups,
                                                resource_attributes=client.V1ResourceAttributes(**attrs))
    return client.AuthorizationV1Api(api).create_subject_access_review(client.V1SubjectAccessReview(spec=spec))


@pytest.mark.integration
def test_subject_access_review(server: LoopbackAPIServer) -> None:
    with server.api_client() as api:
        assert _sar(api, "admin", ["system:masters"], verb="delete", resource="nodes").status.allowed
        assert _sar(api, "x", ["system:nodes"], verb="list", resource="pods", namespace="a").status.allowed
        assert not _sar(api, "x", ["system:nodes"], verb="delete", resource="pods").status.allowed
        assert _sar(api, "x", ["system:nodes"], verb="get", resource="nodes", subresource="status").status.allowed
        assert _sar(api, "bob", [], verb="update", resource="configmaps", namespace="default").status.allowed
        denied = _sar(api, "bob", [], verb="update", resource="configmaps", namespace="other")
        assert not denied.status.allowed and 'User "bob" cannot update' in denied.status.reason
        assert _sar(api, "bob", [], verb="get", path="/metrics/extra").status.allowed
        assert not _sar(api, "bob", [], verb="get", path="/debug").status.allowed


@pytest.mark.integration
def test_enforced_authorization(token_file: Path, policy_file: Path) -> None:
    with LoopbackAPIServer(token_auth_file=token_file, authorization_policy_file=policy_file,
                           enforce_authorization=True) as server:
        assert _get(server, "/api/v1/namespaces/default/configmaps", "bob-token") == 200
        assert _get(server, "/api/v1/namespaces/default/pods", "bob-token") == 403
        assert _get(server, "/api/v1/namespaces/default/pods", "node-token") == 200
        assert _get(server, "/healthz", "bob-token") == 200
        assert _get(server, "/api/v1/nodes", "admin-token") == 200


@pytest.mark.integration
def test_tokens_in_process() -> None:
    from componentbase.testing import User

    with LoopbackAPIServer(tokens={"t": User("me", "9", ("system:masters",))}) as server:
        assert _get(server, "/api/v1/nodes", None) == 401
        assert _get(server, "/api/v1/nodes", "t") == 200


@pytest.mark.unit
def test_bad_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('[{"verbs": ["get"], "resources": ["pods"]}]')
    with pytest.raises(ValueError, match="exactly one of user or group"):
        LoopbackAPIServer(authorization_policy_file=path)
