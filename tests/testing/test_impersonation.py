"""kubectl's ``--as``: impersonation as kube-apiserver authorizes and applies it, with RBAC on."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer

from .test_rbac import _binding, _config, _forbidden, _grant, _role, _sa

pytestmark = pytest.mark.integration

KubectlAt = Callable[..., subprocess.CompletedProcess[str]]
CTL = "system:serviceaccount:default:ctl"


@pytest.fixture
def server() -> LoopbackAPIServer:
    with LoopbackAPIServer(rbac=True) as s:
        yield s  # type: ignore[misc]


def test_an_admin_checks_a_service_accounts_rights_with_as(server: LoopbackAPIServer, kubectl_at: KubectlAt) -> None:
    with server.api_client() as admin:
        _grant(admin, "ctl", {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]})
    kc = server.kubeconfig_path
    assert kubectl_at(kc, "auth", "can-i", "list", "pods", f"--as={CTL}").stdout.strip() == "yes"
    denied = kubectl_at(kc, "auth", "can-i", "delete", "pods", f"--as={CTL}", check=False)
    assert (denied.returncode, denied.stdout.strip()) == (1, "no")
    refused = kubectl_at(kc, "get", "pods", "-n", "kube-system", f"--as={CTL}", check=False)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (f'Error from server (Forbidden): pods is forbidden: User "{CTL}" cannot list '
                                      'resource "pods" in API group "" in the namespace "kube-system"')
    assert kubectl_at(kc, "get", "pods", f"--as={CTL}").returncode == 0
    who = kubectl_at(kc, "auth", "whoami", f"--as={CTL}", "-o", "jsonpath={.status.userInfo}").stdout
    assert CTL in who and "system:serviceaccounts:default" in who and "system:authenticated" in who
    who = kubectl_at(kc, "auth", "whoami", "--as=jane", "--as-group=devs", "-o",
                     "jsonpath={.status.userInfo.groups}").stdout
    assert who == '["devs","system:authenticated"]'


def test_impersonating_needs_the_impersonate_verb(server: LoopbackAPIServer, kubectl_at: KubectlAt) -> None:
    with server.api_client() as admin:
        _grant(admin, "bob", {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]})
        rbac = client.RbacAuthorizationV1Api(admin)
        rbac.create_cluster_role(_role("as-jane", {"apiGroups": [""], "resources": ["users"],
                                                   "verbs": ["impersonate"], "resourceNames": ["jane"]},
                                       kind="ClusterRole"))
        rbac.create_cluster_role_binding(_binding("bob-as-jane", "as-jane", {**_sa("bob"), "namespace": "default"},
                                                  kind="ClusterRoleBinding", role_kind="ClusterRole"))
    bob = server.service_account_kubeconfig("default", "bob")
    with client.ApiClient(_config(bob)) as api:
        api.set_default_header("Impersonate-User", "joe")
        body = _forbidden(lambda: client.CoreV1Api(api).list_namespaced_pod("default"))
    assert body["message"] == ('users "joe" is forbidden: User "system:serviceaccount:default:bob" cannot impersonate '
                               'resource "users" in API group "" at the cluster scope')
    assert body["details"] == {"name": "joe", "kind": "users"}
    refused = kubectl_at(bob, "get", "pods", "--as=joe", check=False)  # its discovery is refused first: as kube's
    assert refused.stderr.splitlines()[-1] == "Error from server (Forbidden): unknown"
    as_jane = kubectl_at(bob, "get", "pods", "--as=jane", check=False)  # bob may be jane, who may not list
    assert as_jane.stderr.strip() == ('Error from server (Forbidden): pods is forbidden: User "jane" cannot list '
                                      'resource "pods" in API group "" in the namespace "default"')
    with client.ApiClient(_config(bob)) as api:
        api.set_default_header("Impersonate-User", "jane")
        api.set_default_header("Impersonate-Group", "system:masters")
        body = _forbidden(lambda: client.CoreV1Api(api).list_namespaced_pod("default"))
    assert body["message"].startswith('groups "system:masters" is forbidden: User "system:serviceaccount:default:bob" '
                                      'cannot impersonate resource "groups"')


def test_a_group_without_a_user_is_kubes_internal_error(server: LoopbackAPIServer) -> None:
    with server.api_client() as api:
        api.set_default_header("Impersonate-Group", "devs")
        with pytest.raises(client.ApiException) as info:
            client.CoreV1Api(api).list_namespaced_pod("default")
    assert info.value.status == 500
    assert "requested [{Group  devs    }] without impersonating a user" in info.value.body


def _status_of(server: LoopbackAPIServer, path: str) -> tuple[int, dict[str, object] | str]:
    import json
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(server.url + path, timeout=10, context=server.ssl_context()) as r:
            return int(r.status), r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_without_credentials_a_request_is_system_anonymous_under_rbac(server: LoopbackAPIServer) -> None:
    assert _status_of(server, "/healthz") == (200, "ok")  # system:public-info-viewer
    assert _status_of(server, "/version")[0] == 200
    code, body = _status_of(server, "/api/v1/namespaces/default/pods")
    assert code == 403 and isinstance(body, dict) and body["message"] == (
        'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace '
        '"default"')
    with LoopbackAPIServer(rbac=True, anonymous_auth=False) as closed:
        assert _status_of(closed, "/healthz")[0] == 401
