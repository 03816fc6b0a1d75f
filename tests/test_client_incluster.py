"""The in-cluster configuration reads the service account's files from the pod's folder, or from the folder
COMPONENTBASE_SERVICE_ACCOUNT_DIR names (so a component can be run as in a pod outside one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.config.config_exception import ConfigException

from componentbase import ClientConnectionConfiguration, new_api_client
from componentbase.client import SERVICE_ACCOUNT_DIR_ENV, ClientConfigError, load_incluster_config

pytestmark = pytest.mark.unit


@pytest.fixture
def account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "token").write_text("the-token")
    (tmp_path / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.setenv(SERVICE_ACCOUNT_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    return tmp_path


def test_the_folder_named_by_the_environment_holds_the_token_and_ca(account: Path) -> None:
    configuration = client.Configuration()
    assert load_incluster_config(configuration) == str(account / "token")
    assert configuration.host == "https://10.0.0.1:443"
    assert configuration.ssl_ca_cert == str(account / "ca.crt")
    assert configuration.api_key["BearerToken"] == "bearer the-token"


def test_new_api_client_uses_it_and_re_reads_the_token_from_there(account: Path) -> None:
    api = new_api_client(ClientConnectionConfiguration())
    assert api.configuration.refresh_api_key_hook.path == str(account / "token")
    api.close()


def test_a_missing_token_is_a_one_line_configuration_error(account: Path) -> None:
    (account / "token").unlink()
    with pytest.raises(ConfigException, match="Service token file does not exist"):
        load_incluster_config(client.Configuration())
    with pytest.raises(ClientConfigError, match="invalid configuration: Service token file does not exist"):
        new_api_client(ClientConnectionConfiguration())
