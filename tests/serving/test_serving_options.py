"""Serving flags on the command line: validation errors, TLS settings, secrets kept out of logs."""

from __future__ import annotations

import http.client
import io
import ssl
import threading
from pathlib import Path

import attrs
import pytest

import componentbase
from componentbase.serving import SecureServer, start_serving
from componentbase.testing import LoopbackAPIServer

from .component import TinyOptions
from .conftest import get


def execute(args: list[str]) -> tuple[int, str]:
    options = TinyOptions()
    cmd = componentbase.Command("tiny", options, lambda c, s: 0, configz_registry=options.registry)
    err = io.StringIO()
    code = cmd.execute(args, stdout=io.StringIO(), stderr=err)
    return code, err.getvalue()


@pytest.mark.unit
def test_bad_serving_flags_are_one_line_each(tmp_path: Path) -> None:
    code, err = execute(["--secure-port=70000", "--tls-min-version=VersionTLS14", "--tls-cert-file=/x.crt",
                         "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_NOPE,TLS_RSA_WITH_RC4_128_SHA",
                         "--authorization-always-allow-paths=/healthz,metrics",
                         "--authentication-token-webhook-cache-ttl=-1s",
                         "--show-hidden-metrics-for-version=1.2",
                         "--allow-metric-labels=my-metric,label=a", f"--write-config-to={tmp_path / 'c.yaml'}"])
    assert code == 1
    lines = err.splitlines()
    assert "Error: --secure-port 70000 must be between 0 and 65535, inclusive. 0 for turning off secure port" in lines
    assert "Error: --tls-cert-file and --tls-private-key-file must be given together" in lines
    assert ('Error: --tls-min-version: unknown tls version "VersionTLS14"; possible values: VersionTLS10, '
            "VersionTLS11, VersionTLS12, VersionTLS13") in lines
    assert "Error: --tls-cipher-suites: Cipher suite TLS_NOPE not supported or doesn't exist" in lines
    assert ("Error: --tls-cipher-suites: Cipher suite TLS_RSA_WITH_RC4_128_SHA is not available in this Python's "
            "TLS library") in lines
    assert "Error: --authorization-always-allow-paths[1]: 'metrics': must start with '/'" in lines
    assert "Error: --authentication-token-webhook-cache-ttl: must not be negative, got -1s" in lines
    assert ("Error: --show-hidden-metrics-for-version must be omitted or have the value '0.0'. Only the previous "
            "minor version is allowed") in lines  # componentbase is 0.1
    assert any(line.startswith("Error: --allow-metric-labels: 'my-metric,label': must have a list of kv pair")
               for line in lines)
    assert "Traceback" not in err


@pytest.mark.unit
def test_a_bad_bind_address_is_a_usage_error() -> None:
    code, err = execute(["--bind-address=localhost"])
    assert code == 1
    assert 'invalid argument "localhost" for "--bind-address" flag: failed to parse IP: "localhost"' in err


@pytest.mark.unit
def test_an_unreadable_certificate_fails_at_start_up(tmp_path: Path) -> None:
    (tmp_path / "tls.crt").write_text("not a certificate")
    (tmp_path / "tls.key").write_text("not a key")
    code, err = execute([f"--tls-cert-file={tmp_path / 'tls.crt'}", f"--tls-private-key-file={tmp_path / 'tls.key'}",
                         "--master=http://127.0.0.1:1"])
    assert code == 1
    assert err.startswith(f"Error: unable to load server certificate (--tls-cert-file={tmp_path / 'tls.crt'}")
    code, err = execute([f"--tls-cert-file={tmp_path / 'no.crt'}", f"--tls-private-key-file={tmp_path / 'tls.key'}",
                         "--master=http://127.0.0.1:1"])
    assert code == 1
    assert f"Error: unable to read --tls-cert-file {tmp_path / 'no.crt'}: No such file or directory" in err


@pytest.mark.unit
def test_allow_metric_labels_take_several_pairs_with_comma_lists() -> None:
    options = TinyOptions()
    fss = componentbase.cli.NamedFlagSets()
    options.add_flags(fss)
    fss.parse(["--allow-metric-labels=metric1,label1='v1,v2,v3', metric1,label2='v1,v2' metric2,label1=x",
               "--allow-metric-labels", "metric3,l=y"])
    assert options.serving.metrics.allow_labels() == {
        "metric1,label1": ["v1", "v2", "v3"], "metric1,label2": ["v1", "v2"], "metric2,label1": ["x"],
        "metric3,l": ["y"]}


@pytest.mark.unit
def test_secret_flags_are_redacted_when_flags_are_logged(tmp_path: Path) -> None:
    code, err = execute(["-v=1", "--api-token=hunter2", f"--write-config-to={tmp_path / 'c.yaml'}"])
    assert code == 0
    assert 'FLAG: --api-token="<redacted>"' in err
    assert "hunter2" not in err
    assert 'FLAG: --secure-port="10999"' in err
    code, err = execute(["-v=1", f"--write-config-to={tmp_path / 'c.yaml'}"])
    assert 'FLAG: --api-token=""' in err


def serve_tls(min_version: str, suites: list[str]) -> SecureServer:
    opts = componentbase.ServingOptions.for_component(10259, "t")
    opts.secure_serving.bind_address = "127.0.0.1"
    opts.secure_serving.tls_min_version = min_version
    opts.secure_serving.tls_cipher_suites = suites
    config = componentbase.Config()
    opts.apply_to(config)
    assert config.secure_serving is not None
    config.secure_serving = attrs.evolve(config.secure_serving, port=0)
    return start_serving(config, threading.Event())


def tls12_client(openssl_ciphers: str) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers(openssl_ciphers)
    return ctx


def handshake(port: int, ctx: ssl.SSLContext) -> str:
    """The cipher negotiated for one /healthz request (raises ssl.SSLError when no handshake is possible)."""
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=5)
    try:
        conn.request("GET", "/healthz")
        assert conn.getresponse().status == 200
        return str(conn.sock.cipher()[0])  # type: ignore[union-attr]
    finally:
        conn.close()


@pytest.mark.integration
def test_tls_cipher_suites_are_enforced(apiserver: LoopbackAPIServer) -> None:
    srv = serve_tls("VersionTLS12", ["TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"])
    try:
        with pytest.raises(ssl.SSLError):
            handshake(srv.port, tls12_client("ECDHE-RSA-AES128-GCM-SHA256"))
        assert handshake(srv.port, tls12_client("ECDHE-RSA-AES256-GCM-SHA384")) == "ECDHE-RSA-AES256-GCM-SHA384"
        assert get(srv.port, "/healthz") == (200, "ok")  # TLS 1.3 clients use TLS 1.3's own suites
    finally:
        srv.stop()


@pytest.mark.integration
def test_tls_min_version_is_enforced(apiserver: LoopbackAPIServer) -> None:
    srv = serve_tls("VersionTLS13", [])
    try:
        with pytest.raises(ssl.SSLError):
            handshake(srv.port, tls12_client("ECDHE-RSA-AES256-GCM-SHA384"))
        assert get(srv.port, "/healthz") == (200, "ok")
    finally:
        srv.stop()


@pytest.mark.unit
def test_secure_port_zero_serves_nothing() -> None:
    opts = componentbase.ServingOptions.for_component(0, "t")
    config = componentbase.Config()
    opts.apply_to(config)
    assert config.secure_serving is None and config.authentication is None and config.authorization is None
