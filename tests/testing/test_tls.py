"""TLS and credentials as a cluster has them: HTTPS with the server's own CA whenever authentication is on,
client certificates (``client_ca_file``), static tokens and ServiceAccount tokens from the TokenRequest API."""

from __future__ import annotations

import json
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client, config

from componentbase.testing import LoopbackAPIServer, User
from componentbase.testing.apiserver import write_kubeconfig
from componentbase.util import CertificateAuthority

pytestmark = pytest.mark.integration

KubectlAt = Callable[..., subprocess.CompletedProcess[str]]


def _api(kubeconfig: str) -> client.ApiClient:
    cfg = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
    assert cfg.verify_ssl
    return client.ApiClient(cfg)


def _whoami(kubeconfig: str) -> tuple[str, list[str]]:
    with _api(kubeconfig) as api:
        info = client.AuthenticationV1Api(api).create_self_subject_review(client.V1SelfSubjectReview())
        return info.status.user_info.username, info.status.user_info.groups


def test_kubectl_sends_a_token_to_a_token_authenticated_server(tmp_path: Path, kubectl_at: KubectlAt) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('admin-token,admin,1,"system:masters"\n')
    with LoopbackAPIServer(token_auth_file=tokens) as server:
        assert server.url.startswith("https://127.0.0.1:")
        assert "certificate-authority-data" in Path(server.kubeconfig_path).read_text()
        namespaces = kubectl_at(server.kubeconfig_path, "get", "namespaces", "-o", "name").stdout.split()
        assert "namespace/kube-system" in namespaces
        wrong = tmp_path / "wrong-token"
        write_kubeconfig(wrong, server.url, "not-a-token", ca_data=server.ca_data)
        refused = kubectl_at(str(wrong), "get", "namespaces", check=False)
        assert refused.returncode == 1
        assert refused.stderr.strip() == "error: You must be logged in to the server (Unauthorized)"


def test_tls_verification_is_real(tmp_path: Path) -> None:
    with LoopbackAPIServer(tls=True) as server:  # HTTPS on request, without authentication
        assert server.url.startswith("https://")
        with urllib.request.urlopen(server.url + "/version", timeout=10, context=server.ssl_context()) as resp:
            assert json.loads(resp.read())["major"]
        with pytest.raises(urllib.error.URLError) as info:
            urllib.request.urlopen(server.url + "/version", timeout=10, context=ssl.create_default_context())
        assert isinstance(info.value.reason, ssl.SSLCertVerificationError)
        other = LoopbackAPIServer(tls=True).start()
        try:  # another server's CA does not verify this one
            write_kubeconfig(tmp_path / "wrong-ca", server.url, ca_data=other.ca_data)
            with _api(str(tmp_path / "wrong-ca")) as api, pytest.raises(Exception, match="CERTIFICATE_VERIFY_FAILED"):
                client.CoreV1Api(api).list_namespace(_request_timeout=10)
        finally:
            other.stop()


def test_tls_false_with_authentication_is_refused() -> None:
    with pytest.raises(ValueError, match="kubectl sends credentials only over TLS"):
        LoopbackAPIServer(tokens={"t": User("me")}, tls=False)
    with LoopbackAPIServer() as server:
        assert server.url.startswith("http://") and server.ca_data is None


def test_client_certificates_from_a_given_ca(tmp_path: Path, kubectl_at: KubectlAt) -> None:
    company = CertificateAuthority.generate("company-ca")
    (tmp_path / "ca.crt").write_bytes(company.cert_pem)
    with LoopbackAPIServer(client_ca_file=tmp_path / "ca.crt") as server:
        # the kubeconfig carries an admin client certificate, signed by the server's own CA
        assert _whoami(server.kubeconfig_path) == ("loopback-admin", ["system:masters", "system:authenticated"])
        cert = company.issue("jane", organizations=["dev", "ops"], client=True)
        write_kubeconfig(tmp_path / "jane", server.url, ca_data=server.ca_data, client_cert=cert)
        assert _whoami(str(tmp_path / "jane")) == ("jane", ["dev", "ops", "system:authenticated"])
        stranger = CertificateAuthority.generate("stranger-ca").issue("mallory", organizations=["system:masters"],
                                                                      client=True)
        write_kubeconfig(tmp_path / "mallory", server.url, ca_data=server.ca_data, client_cert=stranger)
        refused = kubectl_at(str(tmp_path / "mallory"), "get", "pods", check=False)
        assert refused.returncode == 1  # TLS refuses a certificate no trusted CA signed
        assert "pods" not in refused.stdout
        user = server.add_user("ann", ["viewers"])
        assert _whoami(user) == ("ann", ["viewers", "system:authenticated"])
        assert kubectl_at(user, "get", "namespaces", "-o", "name").returncode == 0  # RBAC is off: all allowed


def test_service_account_tokens_authenticate(tmp_path: Path, kubectl_at: KubectlAt) -> None:
    with LoopbackAPIServer(tokens={"admin": User("admin", "1", ("system:masters",))}) as server:
        with server.api_client() as api:
            v1 = client.CoreV1Api(api)
            sa = v1.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
            request = v1.create_namespaced_service_account_token(
                "robot", "default", {"spec": {"expirationSeconds": 600}})
            token = request.status.token
            review = client.AuthenticationV1Api(api).create_token_review({"spec": {"token": token}})
            assert review.status.authenticated
            assert review.status.user.username == "system:serviceaccount:default:robot"
            assert review.status.user.uid == sa.metadata.uid
            write_kubeconfig(tmp_path / "robot", server.url, token, ca_data=server.ca_data)
            groups = ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]
            assert _whoami(str(tmp_path / "robot")) == ("system:serviceaccount:default:robot", groups)
            assert kubectl_at(str(tmp_path / "robot"), "get", "pods").returncode == 0

            forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
            assert not client.AuthenticationV1Api(api).create_token_review(
                {"spec": {"token": forged}}).status.authenticated
            v1.delete_namespaced_service_account("robot", "default")
            refused = kubectl_at(str(tmp_path / "robot"), "get", "pods", check=False)
            assert refused.returncode == 1 and "Unauthorized" in refused.stderr  # its account is gone


def test_a_token_request_with_no_audiences_gets_the_servers() -> None:
    """The official client sends ``audiences: []`` (the field is required in its model); kube-apiserver
    defaults an empty list to its own audiences, so the token authenticates."""
    with LoopbackAPIServer(tokens={"admin": User("admin", "1", ("system:masters",))}) as server:
        with server.api_client() as api:
            v1 = client.CoreV1Api(api)
            v1.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
            request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
            answer = v1.create_namespaced_service_account_token("robot", "default", request)
            assert answer.spec.audiences == ["https://kubernetes.default.svc"]
            review = client.AuthenticationV1Api(api).create_token_review({"spec": {"token": answer.status.token}})
            assert review.status.authenticated
