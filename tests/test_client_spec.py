"""``describe_client`` on clients the official loaders built: what it carries to another process, and what it refuses.

These pin how the client's loaders hand over credentials (a refresh hook closed over the loader, an
``expiry`` on tokens that expire): if a new ``kubernetes`` release changes that, they fail here, by name,
rather than an event sender silently falling back to a thread or carrying a token that dies.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from kubernetes import client, config
from kubernetes.config.incluster_config import SERVICE_TOKEN_FILENAME, InClusterConfigLoader

from componentbase.client import NotPortable, describe_client

pytestmark = pytest.mark.unit


def _kubeconfig(path: Path, user: dict[str, object]) -> Path:
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
           "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443"}}],
           "users": [{"name": "u", "user": user}],
           "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}
    path.write_text(json.dumps(doc))
    return path


def _exec_user(expiration: str | None) -> dict[str, object]:
    status: dict[str, str] = {"token": "from-plugin"}
    if expiration:
        status["expirationTimestamp"] = expiration
    credential = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential", "status": status}
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": ["-c", f"print({json.dumps(json.dumps(credential))})"]}}


def test_a_kubeconfig_token_is_carried_as_it_is(tmp_path: Path) -> None:
    api = config.new_client_from_config(config_file=str(_kubeconfig(tmp_path / "kc", {"token": "abc"})))
    description = describe_client(api)
    assert description.token_file is None
    assert description.api_key == {"BearerToken": "Bearer abc"}
    assert description.host == "https://127.0.0.1:6443"


def test_a_plugin_token_that_never_expires_is_carried(tmp_path: Path) -> None:
    api = config.new_client_from_config(config_file=str(_kubeconfig(tmp_path / "kc", _exec_user(None))))
    assert describe_client(api).api_key == {"BearerToken": "Bearer from-plugin"}


def test_a_plugin_token_that_expires_is_refused(tmp_path: Path) -> None:
    user = _exec_user("2999-01-01T00:00:00Z")
    api = config.new_client_from_config(config_file=str(_kubeconfig(tmp_path / "kc", user)))
    with pytest.raises(NotPortable, match="refreshed in this process"):
        describe_client(api)


def test_an_in_cluster_client_rereads_the_service_account_token(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "ca.crt").write_text("not checked here")
    configuration = client.Configuration()
    InClusterConfigLoader(str(tmp_path / "token"), str(tmp_path / "ca.crt"),
                          environ={"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"},
                          ).load_and_set(configuration)
    description = describe_client(client.ApiClient(configuration))
    assert description.token_file == SERVICE_TOKEN_FILENAME
    assert description.host == "https://10.0.0.1:443"


def test_a_refresh_hook_of_its_own_is_refused() -> None:
    configuration = client.Configuration(host="https://127.0.0.1:6443")
    configuration.refresh_api_key_hook = lambda c: None
    with pytest.raises(NotPortable):
        describe_client(client.ApiClient(configuration))
