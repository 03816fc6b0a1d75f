"""The CLI: serves until a signal, writes the kubeconfig, and fails with one clear line."""

from __future__ import annotations

import base64
import json
import os
import signal
import ssl
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client, config

pytestmark = pytest.mark.process

CMD = [sys.executable, "-m", "componentbase.testing.apiserver"]


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str, Path]]:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('tok,admin,1,"system:masters"\n')
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen([*CMD, "--port", "0", "--kubeconfig", str(kubeconfig), "--token-auth-file",
                             str(tokens), "--publish-kubelet-client-ca"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    try:
        yield proc, url, kubeconfig
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()
        assert proc.stderr is not None
        proc.stderr.close()


def _ca_context(kubeconfig: Path) -> ssl.SSLContext:
    """Verify the server with the CA its kubeconfig carries, as kubectl does."""
    line = next(x for x in kubeconfig.read_text().splitlines() if "certificate-authority-data" in x)
    return ssl.create_default_context(cadata=base64.b64decode(json.loads(line.split(":", 1)[1])).decode())


def test_cli_serves_until_sigterm(cli: tuple[subprocess.Popen[str], str, Path]) -> None:
    proc, url, kubeconfig = cli
    assert url.startswith("https://127.0.0.1:")  # a token is only sent over TLS
    with config.new_client_from_config(config_file=str(kubeconfig)) as api:
        assert api.configuration.host == url
        v1 = client.CoreV1Api(api)
        v1.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
        assert [c.metadata.name for c in v1.list_namespaced_config_map("default").items] == ["c"]
        published = v1.read_namespaced_config_map("extension-apiserver-authentication", "kube-system")
        assert published.data["client-ca-file"].startswith("-----BEGIN CERTIFICATE-----")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0


def test_cli_faults_endpoint(cli: tuple[subprocess.Popen[str], str, Path]) -> None:
    proc, url, kubeconfig = cli
    req = urllib.request.Request(url + "/_loopback/faults", data=json.dumps({"error_rate": 1.0}).encode(),
                                 method="PUT")
    with urllib.request.urlopen(req, timeout=10, context=_ca_context(kubeconfig)) as resp:
        assert json.loads(resp.read())["rules"][0]["error_rate"] == 1.0
    with config.new_client_from_config(config_file=str(kubeconfig)) as api:
        with pytest.raises(client.ApiException) as info:
            client.CoreV1Api(api).list_namespace()
        assert info.value.status == 500
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=10) == 0


@pytest.mark.parametrize("args", [
    ["--port", "nope"],
    ["--port", "70000"],
    ["--token-auth-file", "/does/not/exist"],
    ["--kubeconfig", "/does/not/exist/kubeconfig"],
    ["--watch-history", "0"],
    ["--frobnicate"],
])
def test_cli_bad_input(args: list[str]) -> None:
    out = subprocess.run([*CMD, *args], capture_output=True, text=True, timeout=30,
                         env=dict(os.environ, PYTHONWARNINGS="ignore"))
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0], out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_cli_port_in_use(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        out = subprocess.run([*CMD, "--port", str(port), "--kubeconfig", str(tmp_path / "kc")],
                             capture_output=True, text=True, timeout=30)
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1
    assert "Address already in use" in out.stderr


def test_cli_bad_token_file(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("only-two,fields\n")
    out = subprocess.run([*CMD, "--token-auth-file", str(path)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 1 and "line 1" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_cli_client_ca_and_authorization_mode(tmp_path: Path) -> None:
    cmd = CMD
    missing = subprocess.run([*cmd, "--client-ca-file", str(tmp_path / "nope.crt")], capture_output=True,
                             text=True, timeout=30)
    assert missing.returncode == 1
    assert missing.stderr.strip().endswith("nope.crt: No such file or directory")
    (tmp_path / "bad.crt").write_text("not a certificate\n")
    bad = subprocess.run([*cmd, "--client-ca-file", str(tmp_path / "bad.crt")], capture_output=True, text=True,
                         timeout=30)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "bad.crt: no PEM certificate" in bad.stderr
    mode = subprocess.run([*cmd, "--authorization-mode", "Webhook"], capture_output=True, text=True, timeout=30)
    assert mode.returncode == 2
    assert mode.stderr.strip().endswith("--authorization-mode must be AlwaysAllow or RBAC, got 'Webhook'")
