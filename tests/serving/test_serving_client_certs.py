"""The cluster's client CA, looked up in kube-system/extension-apiserver-authentication, and its failures."""

from __future__ import annotations

import datetime as dt
import http.client
import ssl
from pathlib import Path

import pytest

from componentbase.testing import LoopbackAPIServer, eventually, free_port

from .component import Running
from .conftest import NOT_YET, get

pytestmark = pytest.mark.integration


def make_ca_and_client(tmp_path: Path, user: str, group: str) -> tuple[str, Path, Path]:
    """(CA PEM, client cert file, client key file) for a client certificate ``CN=user, O=group``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-client-ca")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, user),
                         x509.NameAttribute(NameOID.ORGANIZATION_NAME, group)])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name).public_key(key.public_key())
            .serial_number(2).not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=1))
            .sign(ca_key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "client.crt", tmp_path / "client.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return ca.public_bytes(serialization.Encoding.PEM).decode(), cert_file, key_file


def publish_client_ca(apiserver: LoopbackAPIServer, ca_pem: str) -> None:
    from kubernetes import client

    api = apiserver.api_client()
    body = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "extension-apiserver-authentication", "namespace": "kube-system"},
            "data": {"client-ca-file": ca_pem}}
    client.CoreV1Api(api).create_namespaced_config_map("kube-system", body, _preload_content=False)
    api.close()


def args_for(apiserver: LoopbackAPIServer, tmp_path: Path, port: int, *extra: str) -> list[str]:
    k = apiserver.kubeconfig_path
    return [f"--kubeconfig={k}", f"--secure-port={port}", "--bind-address=127.0.0.1", f"--cert-dir={tmp_path}",
            f"--authentication-kubeconfig={k}", f"--authorization-kubeconfig={k}", *extra]


def get_with_cert(port: int, path: str, cert: Path, key: Path) -> int:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    ctx.load_cert_chain(cert, key)
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=5)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


def test_client_certificates_signed_by_the_cluster_ca_authenticate(
        apiserver: LoopbackAPIServer, tmp_path: Path) -> None:
    ca, admin_cert, admin_key = make_ca_and_client(tmp_path, "carol", "system:masters")
    publish_client_ca(apiserver, ca)
    port = free_port()
    running = Running(args_for(apiserver, tmp_path, port))
    try:
        eventually(lambda: get(port, "/healthz")[0] == 200, ignoring=NOT_YET)
        assert get_with_cert(port, "/metrics", admin_cert, admin_key) == 200
        assert get(port, "/metrics")[0] == 401  # no certificate, no token
        (tmp_path / "other").mkdir()
        _, other_cert, other_key = make_ca_and_client(tmp_path / "other", "mallory", "system:masters")
        with pytest.raises(ssl.SSLError):  # a certificate the cluster's CA did not sign: no handshake
            get_with_cert(port, "/metrics", other_cert, other_key)
    finally:
        assert running.stop() == 0


def test_skip_lookup_ignores_the_cluster_ca(apiserver: LoopbackAPIServer, tmp_path: Path) -> None:
    ca, cert, key = make_ca_and_client(tmp_path, "carol", "system:masters")
    publish_client_ca(apiserver, ca)
    port = free_port()
    running = Running(args_for(apiserver, tmp_path, port, "--authentication-skip-lookup"))
    try:
        eventually(lambda: get(port, "/healthz")[0] == 200, ignoring=NOT_YET)
        assert get_with_cert(port, "/metrics", cert, key) == 401
    finally:
        assert running.stop() == 0


def test_a_failed_lookup_is_fatal_unless_tolerated(apiserver: LoopbackAPIServer, tmp_path: Path) -> None:
    apiserver.faults.set(error_rate=1.0, resources=("configmaps",))
    port = free_port()
    refused = Running(args_for(apiserver, tmp_path, port, "--authentication-tolerate-lookup-failure=false"))
    assert refused.bg.join() == 1
    assert ("Error: unable to load configmap based client-ca-file: configmap "
            "kube-system/extension-apiserver-authentication: HTTP 500") in refused.err.getvalue()
    tolerated = Running(args_for(apiserver, tmp_path, port))  # tiny tolerates, as kube-scheduler does
    try:
        eventually(lambda: get(port, "/healthz")[0] == 200, ignoring=NOT_YET)
        assert "Error looking up in-cluster authentication configuration" in tolerated.err.getvalue()
    finally:
        apiserver.faults.clear()
        assert tolerated.stop() == 0


def test_client_ca_file_authenticates_client_certificates_without_the_cluster(
        apiserver: LoopbackAPIServer, tmp_path: Path) -> None:
    """--client-ca-file: the CA comes from the file, no lookup needed (kube's ClientCertAuthenticationOptions)."""
    ca, cert, key = make_ca_and_client(tmp_path, "carol", "system:masters")
    (tmp_path / "ca.crt").write_text(ca)
    port = free_port()
    running = Running(args_for(apiserver, tmp_path, port, f"--client-ca-file={tmp_path / 'ca.crt'}",
                               "--authentication-skip-lookup"))
    try:
        eventually(lambda: get(port, "/healthz")[0] == 200, ignoring=NOT_YET)
        assert get_with_cert(port, "/metrics", cert, key) == 200
        assert get(port, "/metrics")[0] == 401
    finally:
        assert running.stop() == 0
    refused = Running(args_for(apiserver, tmp_path, port, f"--client-ca-file={tmp_path / 'missing.crt'}"))
    assert refused.bg.join() == 1
    assert (f"Error: unable to load client CA file {tmp_path / 'missing.crt'}: No such file or directory"
            in refused.err.getvalue())


def test_permit_port_sharing_lets_two_servers_listen_on_one_port() -> None:
    from componentbase.serving import Server

    def app(request: object) -> object:
        raise AssertionError("no request is sent")

    first = Server("127.0.0.1", 0, None, app, reuse_port=True).start()  # type: ignore[arg-type]
    try:
        second = Server("127.0.0.1", first.port, None, app, reuse_port=True).start()  # type: ignore[arg-type]
        second.stop()
        with pytest.raises(OSError):
            Server("127.0.0.1", first.port, None, app).start()  # type: ignore[arg-type]
    finally:
        first.stop()
