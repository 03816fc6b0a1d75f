"""RBAC on: requests are authorized from stored Roles, ClusterRoles and bindings as kube's RBAC authorizer
does, refused with kube's 403, and reviews answer from the same rules. Driven by kubectl and the official
client, with TLS verification on."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client, watch

from componentbase.testing import LoopbackAPIServer

pytestmark = pytest.mark.integration

KubectlAt = Callable[..., subprocess.CompletedProcess[str]]
RBAC = "rbac.authorization.k8s.io"
LIMITED = "system:serviceaccount:default:limited"


@pytest.fixture
def server() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer(rbac=True) as s:
        yield s


@pytest.fixture
def admin(server: LoopbackAPIServer) -> Iterator[client.ApiClient]:
    with server.api_client() as api:
        yield api


def _role(name: str, *rules: dict[str, Any], kind: str = "Role", **extra: Any) -> dict[str, Any]:
    return {"apiVersion": f"{RBAC}/v1", "kind": kind, "metadata": {"name": name, **extra}, "rules": list(rules)}


def _binding(name: str, role: str, subject: dict[str, Any], kind: str = "RoleBinding",
             role_kind: str = "Role") -> dict[str, Any]:
    return {"apiVersion": f"{RBAC}/v1", "kind": kind, "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role}, "subjects": [subject]}


def _sa(name: str) -> dict[str, Any]:
    return {"kind": "ServiceAccount", "name": name}


def _grant(api: client.ApiClient, name: str, *rules: dict[str, Any], namespace: str = "default") -> None:
    """A ServiceAccount ``name`` in ``namespace`` with a Role of ``rules`` bound to it."""
    client.CoreV1Api(api).create_namespaced_service_account(namespace, {"metadata": {"name": name}})
    rbac = client.RbacAuthorizationV1Api(api)
    rbac.create_namespaced_role(namespace, _role(name, *rules))
    rbac.create_namespaced_role_binding(namespace, _binding(name, name, _sa(name)))


def _pod(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def _forbidden(call: Callable[[], Any]) -> dict[str, Any]:
    with pytest.raises(client.ApiException) as info:
        call()
    assert info.value.status == 403
    body: dict[str, Any] = json.loads(info.value.body)
    assert body["kind"] == "Status" and body["reason"] == "Forbidden" and body["code"] == 403
    return body


@pytest.fixture
def limited(server: LoopbackAPIServer, admin: client.ApiClient) -> Iterator[client.ApiClient]:
    """As the ServiceAccount default/limited, which may only get pods."""
    _grant(admin, "limited", {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]})
    client.CoreV1Api(admin).create_namespaced_pod("default", _pod("p1"))
    with client.ApiClient(_config(server.service_account_kubeconfig("default", "limited"))) as api:
        yield api


def _config(kubeconfig: str) -> client.Configuration:
    from kubernetes import config

    cfg = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
    assert cfg.verify_ssl and cfg.ssl_ca_cert  # TLS verification on, against the server's CA
    return cfg


def test_service_account_limited_to_get_is_refused_a_list_with_kubes_message(
        server: LoopbackAPIServer, limited: client.ApiClient, kubectl_at: KubectlAt) -> None:
    v1 = client.CoreV1Api(limited)
    assert v1.read_namespaced_pod("p1", "default").metadata.name == "p1"
    body = _forbidden(lambda: v1.list_namespaced_pod("default"))
    assert body["message"] == (f'pods is forbidden: User "{LIMITED}" cannot list resource "pods" in API group "" '
                               'in the namespace "default"')
    assert body["details"] == {"kind": "pods"}
    named = _forbidden(lambda: v1.delete_namespaced_pod("p1", "default"))
    assert named["message"].startswith(f'pods "p1" is forbidden: User "{LIMITED}" cannot delete resource "pods"')
    assert named["details"] == {"name": "p1", "kind": "pods"}

    kubeconfig = server.service_account_kubeconfig("default", "limited")
    listed = kubectl_at(kubeconfig, "get", "pods", check=False)
    assert listed.returncode == 1
    assert listed.stderr.strip() == (f'Error from server (Forbidden): pods is forbidden: User "{LIMITED}" cannot '
                                     'list resource "pods" in API group "" in the namespace "default"')
    assert "p1" in kubectl_at(kubeconfig, "get", "pod", "p1").stdout


def test_get_list_and_watch_are_distinct_verbs(server: LoopbackAPIServer, admin: client.ApiClient) -> None:
    _grant(admin, "lister", {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]})
    client.CoreV1Api(admin).create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    with client.ApiClient(_config(server.service_account_kubeconfig("default", "lister"))) as api:
        v1 = client.CoreV1Api(api)
        assert [c.metadata.name for c in v1.list_namespaced_config_map("default").items] == ["c"]
        _forbidden(lambda: v1.read_namespaced_config_map("c", "default"))
        refused = _forbidden(lambda: next(iter(watch.Watch().stream(v1.list_namespaced_config_map, "default",
                                                                    timeout_seconds=5))))
        assert "cannot watch resource \"configmaps\"" in refused["message"]
        _forbidden(lambda: v1.list_namespaced_config_map("kube-system"))  # a Role grants in its namespace only


def test_resource_names_and_subresources(server: LoopbackAPIServer, admin: client.ApiClient) -> None:
    core = client.CoreV1Api(admin)
    for name in ("mine", "other"):
        core.create_namespaced_pod("default", _pod(name))
    _grant(admin, "status-writer",
           {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": ["mine"]},
           {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch"]})
    with client.ApiClient(_config(server.service_account_kubeconfig("default", "status-writer"))) as api:
        v1 = client.CoreV1Api(api)
        assert v1.read_namespaced_pod("mine", "default").metadata.name == "mine"
        refused = _forbidden(lambda: v1.read_namespaced_pod("other", "default"))
        assert refused["message"].startswith('pods "other" is forbidden')
        patched = v1.patch_namespaced_pod_status("other", "default", {"status": {"phase": "Running"}})
        assert patched.status.phase == "Running"
        body = _forbidden(lambda: v1.patch_namespaced_pod("mine", "default", {"metadata": {"labels": {"a": "b"}}}))
        assert 'cannot patch resource "pods" in API group ""' in body["message"]


def test_wildcards_cluster_roles_and_cluster_scope(server: LoopbackAPIServer, admin: client.ApiClient) -> None:
    core, rbac = client.CoreV1Api(admin), client.RbacAuthorizationV1Api(admin)
    core.create_namespace({"metadata": {"name": "team"}})
    core.create_namespaced_service_account("team", {"metadata": {"name": "owner"}})
    rbac.create_cluster_role(_role("everything", {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                                   kind="ClusterRole"))
    binding = _binding("owner", "everything", {"kind": "ServiceAccount", "name": "owner"}, role_kind="ClusterRole")
    rbac.create_namespaced_role_binding("team", binding)  # a ClusterRole bound in one namespace
    with client.ApiClient(_config(server.service_account_kubeconfig("team", "owner"))) as api:
        v1 = client.CoreV1Api(api)
        v1.create_namespaced_config_map("team", {"metadata": {"name": "c"}})
        client.AppsV1Api(api).list_namespaced_deployment("team")
        assert _forbidden(lambda: v1.list_namespaced_config_map("default"))["message"].endswith(
            'in the namespace "default"')
        assert _forbidden(lambda: v1.list_node())["message"] == (
            'nodes is forbidden: User "system:serviceaccount:team:owner" cannot list resource "nodes" in API group '
            '"" at the cluster scope')
        group = _forbidden(lambda: client.AppsV1Api(api).list_namespaced_deployment("default"))
        assert group["message"].startswith('deployments.apps is forbidden') and group["details"] == {
            "group": "apps", "kind": "deployments"}


def test_aggregated_cluster_roles_follow_their_selectors(server: LoopbackAPIServer, admin: client.ApiClient) -> None:
    rbac = client.RbacAuthorizationV1Api(admin)
    label = {"example.com/aggregate-to-monitoring": "true"}
    rbac.create_cluster_role({"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": "monitoring"},
                              "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": label}]}})
    rbac.create_cluster_role_binding(_binding("bob-monitoring", "monitoring", {"kind": "User", "name": "bob"},
                                              kind="ClusterRoleBinding", role_kind="ClusterRole"))
    with client.ApiClient(_config(server.add_user("bob"))) as api:
        v1 = client.CoreV1Api(api)
        _forbidden(lambda: v1.list_namespaced_endpoints("default"))
        rbac.create_cluster_role(_role("endpoints-reader", {"apiGroups": [""], "resources": ["endpoints"],
                                                            "verbs": ["list"]}, kind="ClusterRole", labels=label))
        assert [e.metadata.name for e in v1.list_namespaced_endpoints("default").items] == ["kubernetes"]

    # kube's default roles are aggregated the same way: admin holds edit's and view's rules
    stored = {r.metadata.name: r for r in rbac.list_cluster_role().items}
    assert {"admin", "edit", "view", "cluster-admin", "system:kube-scheduler", "system:volume-scheduler",
            "system:node", "system:discovery", "system:basic-user"} <= set(stored)
    admin_rules = [(r.resources or (), r.verbs) for r in stored["admin"].rules]
    assert any("rolebindings" in res and "create" in verbs for res, verbs in admin_rules)  # its own
    assert any("secrets" in res and "delete" in verbs for res, verbs in admin_rules)  # from edit
    assert any("pods/log" in res and "get" in verbs for res, verbs in admin_rules)  # from view, via edit


def test_missing_role_is_named_in_the_refusal(server: LoopbackAPIServer, admin: client.ApiClient) -> None:
    rbac = client.RbacAuthorizationV1Api(admin)
    rbac.create_namespaced_role_binding("default", _binding("dangling", "nope", {"kind": "User", "name": "carol"}))
    with client.ApiClient(_config(server.add_user("carol"))) as api:
        body = _forbidden(lambda: client.CoreV1Api(api).list_namespaced_secret("default"))
    assert body["message"] == ('secrets is forbidden: User "carol" cannot list resource "secrets" in API group "" in '
                               'the namespace "default": RBAC: role.rbac.authorization.k8s.io "nope" not found')


def test_system_masters_bypass_rbac(server: LoopbackAPIServer, admin: client.ApiClient) -> None:
    client.RbacAuthorizationV1Api(admin).delete_cluster_role_binding("cluster-admin")
    with client.ApiClient(_config(server.add_user("root", ["system:masters"]))) as api:
        assert client.CoreV1Api(api).list_node().items == []
    with client.ApiClient(_config(server.add_user("nobody"))) as api:
        _forbidden(lambda: client.CoreV1Api(api).list_node())


def _sar(api: client.ApiClient, user: str, groups: list[str], **attrs: str) -> client.V1SubjectAccessReviewStatus:
    spec = client.V1SubjectAccessReviewSpec(user=user, groups=groups,
                                            resource_attributes=client.V1ResourceAttributes(**attrs))
    review = client.V1SubjectAccessReview(spec=spec)
    return client.AuthorizationV1Api(api).create_subject_access_review(review).status


def test_subject_access_reviews_answer_from_the_same_rules(admin: client.ApiClient,
                                                           limited: client.ApiClient) -> None:
    groups = ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]
    allowed = _sar(admin, LIMITED, groups, verb="get", resource="pods", namespace="default", name="p1")
    assert allowed.allowed and allowed.reason == ('RBAC: allowed by RoleBinding "limited/default" of Role "limited" '
                                                  'to ServiceAccount "limited/default"')
    denied = _sar(admin, LIMITED, groups, verb="list", resource="pods", namespace="default")
    assert not denied.allowed
    scheduler = _sar(admin, "system:kube-scheduler", [], verb="create", resource="pods", subresource="binding",
                     namespace="default")
    assert scheduler.allowed
    lease = {"verb": "update", "group": "coordination.k8s.io", "resource": "leases", "namespace": "kube-system"}
    assert _sar(admin, "system:kube-scheduler", [], name="kube-scheduler", **lease).allowed
    assert not _sar(admin, "system:kube-scheduler", [], name="someone-else", **lease).allowed

    authz = client.AuthorizationV1Api(limited)
    attrs = client.V1ResourceAttributes(verb="get", resource="pods", namespace="default")
    review = authz.create_self_subject_access_review(client.V1SelfSubjectAccessReview(
        spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=attrs)))
    assert review.status.allowed
    attrs.verb = "list"
    review = authz.create_self_subject_access_review(client.V1SelfSubjectAccessReview(
        spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=attrs)))
    assert not review.status.allowed and not review.status.reason
    rules = authz.create_self_subject_rules_review(client.V1SelfSubjectRulesReview(
        spec=client.V1SelfSubjectRulesReviewSpec(namespace="default"))).status
    assert {"get"} == {v for r in rules.resource_rules if "pods" in (r.resources or ()) for v in r.verbs}
    assert any("/version" in r.non_resource_urls for r in rules.non_resource_rules)  # system:discovery
    whoami = client.AuthenticationV1Api(limited).create_self_subject_review(client.V1SelfSubjectReview())
    assert whoami.status.user_info.username == LIMITED
    assert whoami.status.user_info.groups == groups


def test_kubectl_auth_can_i(server: LoopbackAPIServer, limited: client.ApiClient, kubectl_at: KubectlAt) -> None:
    kubeconfig = server.service_account_kubeconfig("default", "limited")
    probe = kubectl_at(kubeconfig, "auth", "can-i", "get", "pods", check=False)
    assert (probe.returncode, probe.stdout.strip()) == (0, "yes")
    refused = kubectl_at(kubeconfig, "auth", "can-i", "list", "pods", check=False)
    assert (refused.returncode, refused.stdout.strip()) == (1, "no")
    admin = kubectl_at(server.kubeconfig_path, "auth", "can-i", "delete", "nodes")
    assert admin.stdout.strip() == "yes"


def test_a_role_limited_by_name_may_list_and_watch_its_one_object(server: LoopbackAPIServer,
                                                                   admin: client.ApiClient) -> None:
    core = client.CoreV1Api(admin)
    for name in ("one", "two"):
        core.create_namespaced_config_map("default", {"metadata": {"name": name}})
    _grant(admin, "reader", {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"],
                             "resourceNames": ["one"]})
    with client.ApiClient(_config(server.service_account_kubeconfig("default", "reader"))) as api:
        v1 = client.CoreV1Api(api)
        listed = v1.list_namespaced_config_map("default", field_selector="metadata.name=one")
        assert [c.metadata.name for c in listed.items] == ["one"]
        events = watch.Watch().stream(v1.list_namespaced_config_map, "default", field_selector="metadata.name=one",
                                      timeout_seconds=5)
        assert next(iter(events))["object"].metadata.name == "one"
        refused = _forbidden(lambda: v1.list_namespaced_config_map("default", field_selector="metadata.name=two"))
        assert refused["message"].startswith('configmaps "two" is forbidden: User ')
        _forbidden(lambda: v1.list_namespaced_config_map("default"))


def test_an_aggregated_cluster_role_stores_the_rules_of_the_roles_it_selects(server: LoopbackAPIServer,
                                                                             admin: client.ApiClient) -> None:
    rbac = client.RbacAuthorizationV1Api(admin)
    widgets = {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list", "watch"]}

    def view_rules() -> list[dict[str, Any]]:
        return admin.sanitize_for_serialization(rbac.read_cluster_role("view"))["rules"]  # type: ignore[no-any-return]

    assert widgets not in view_rules()
    rbac.create_cluster_role(_role("widgets-view", widgets, kind="ClusterRole",
                                   labels={"rbac.authorization.k8s.io/aggregate-to-view": "true"}))
    assert widgets in view_rules()  # as kube's aggregation controller writes them
    assert widgets in admin.sanitize_for_serialization(rbac.read_cluster_role("admin"))["rules"]  # admin has view
    rbac.delete_cluster_role("widgets-view")
    assert widgets not in view_rules()


def test_a_put_that_creates_is_also_authorized_as_a_create(server: LoopbackAPIServer, admin: client.ApiClient) -> None:
    # kube's update handler checks create permission when the PUT creates (AllowCreateOnUpdate kinds).
    _grant(admin, "updater", {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["update"]})
    client.CoordinationV1Api(admin).create_namespaced_lease("default", {"metadata": {"name": "there"}})
    with client.ApiClient(_config(server.service_account_kubeconfig("default", "updater"))) as api:
        leases = client.CoordinationV1Api(api)
        assert leases.replace_namespaced_lease("there", "default", {"metadata": {"name": "there"}}).metadata.uid
        body = _forbidden(lambda: leases.replace_namespaced_lease("new", "default", {"metadata": {"name": "new"}}))
    assert body["message"] == ('leases.coordination.k8s.io "new" is forbidden: User '
                               '"system:serviceaccount:default:updater" cannot create resource "leases" in API group '
                               '"coordination.k8s.io" in the namespace "default"')
