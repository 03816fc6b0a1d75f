"""Validation as a user of the real kubectl sees it: kube's causes listed under "is invalid", the strict
decoding error for an unknown field, and the server's warning on stderr."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from componentbase.testing import LoopbackAPIServer
from tests.testing.conftest import Kubectl
from tests.testing.test_validation import SUBDOMAIN

pytestmark = pytest.mark.process

CMS = "/api/v1/namespaces/default/configmaps"


def _file(tmp_path: Path, obj: dict[str, Any]) -> str:
    path = tmp_path / "obj.json"
    path.write_text(json.dumps(obj))
    return str(path)


def _config_map(**extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}, **extra}


def test_kubectl_lists_each_cause(kubectl: Kubectl, tmp_path: Path) -> None:
    bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "Bad_Name"},
           "spec": {"containers": [{"name": "c"}]}}
    done = kubectl("apply", "--validate=false", "-f", _file(tmp_path, bad), check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == (f'The Pod "Bad_Name" is invalid: \n* metadata.name: Invalid value: "Bad_Name": '
                                   f"{SUBDOMAIN}\n* spec.containers[0].image: Required value")
    assert "No resources found" in kubectl("get", "pods", check=False).stderr


def test_kubectl_strict_refuses_an_unknown_field(kubectl: Kubectl, tmp_path: Path) -> None:
    done = kubectl("create", "--raw", f"{CMS}?fieldValidation=Strict", "-f",
                   _file(tmp_path, _config_map(datum={"b": "2"})), check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == ('Error from server (BadRequest): ConfigMap in version "v1" cannot be handled as '
                                   'a ConfigMap: strict decoding error: unknown field "datum"')


def test_kubectl_shows_the_servers_warning(kubectl: Kubectl, tmp_path: Path) -> None:
    done = kubectl("create", "--raw", CMS, "-f", _file(tmp_path, _config_map(datum={"b": "2"})))
    assert done.stderr.strip() == 'Warning: unknown field "datum"'
    assert "datum" not in json.loads(done.stdout)


def test_kubectl_apply_fails_on_an_unknown_field_as_on_a_cluster(kubectl: Kubectl, tmp_path: Path,
                                                                 kube_apiserver: LoopbackAPIServer) -> None:
    """kubectl's default (--validate=strict) asks the server's OpenAPI whether it checks fields itself."""
    done = kubectl("apply", "-f", _file(tmp_path, _config_map(datum={"b": "2"})), check=False)
    assert done.returncode == 1 and 'unknown field "datum"' in done.stderr
    assert "No resources found" in kubectl("get", "configmaps", check=False).stderr
