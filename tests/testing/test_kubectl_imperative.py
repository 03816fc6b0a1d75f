"""kubectl's imperative commands, which send protobuf bodies for built-in kinds, against the loopback server.

Each command runs with kubectl's defaults; the object it made is read back with the official client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from componentbase.testing import LoopbackAPIServer, eventually
from tests.testing.conftest import Kubectl

pytestmark = pytest.mark.process

Read = Callable[[client.ApiClient], Any]


def _core(api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api)


def _rbac(api: client.ApiClient) -> client.RbacAuthorizationV1Api:
    return client.RbacAuthorizationV1Api(api)


CREATES: list[tuple[list[str], Read, Callable[[Any], bool]]] = [
    (["create", "configmap", "c1", "--from-literal=k=v"],
     lambda a: _core(a).read_namespaced_config_map("c1", "default"), lambda o: o.data == {"k": "v"}),
    (["create", "secret", "generic", "s1", "--from-literal=a=b"],
     lambda a: _core(a).read_namespaced_secret("s1", "default"),
     lambda o: o.data == {"a": "Yg=="} and o.type == "Opaque"),
    (["create", "secret", "docker-registry", "s2", "--docker-server=r.example", "--docker-username=u",
      "--docker-password=p"],
     lambda a: _core(a).read_namespaced_secret("s2", "default"),
     lambda o: o.type == "kubernetes.io/dockerconfigjson" and ".dockerconfigjson" in o.data),
    (["create", "namespace", "n1"], lambda a: _core(a).read_namespace("n1"), lambda o: o.status.phase == "Active"),
    (["create", "deployment", "d1", "--image=nginx", "--replicas=0"],
     lambda a: client.AppsV1Api(a).read_namespaced_deployment("d1", "default"),
     lambda o: o.spec.replicas == 0 and o.spec.template.spec.containers[0].image == "nginx"
     and o.spec.selector.match_labels == {"app": "d1"}),
    (["create", "job", "j1", "--image=busybox", "--", "echo", "hi"],
     lambda a: client.BatchV1Api(a).read_namespaced_job("j1", "default"),
     lambda o: o.spec.template.spec.containers[0].command == ["echo", "hi"]
     and o.spec.template.spec.restart_policy == "Never"),
    (["create", "cronjob", "cj1", "--image=busybox", "--schedule=*/5 * * * *", "--", "date"],
     lambda a: client.BatchV1Api(a).read_namespaced_cron_job("cj1", "default"),
     lambda o: o.spec.schedule == "*/5 * * * *"
     and o.spec.job_template.spec.template.spec.containers[0].command == ["date"]),
    (["create", "serviceaccount", "sa1"], lambda a: _core(a).read_namespaced_service_account("sa1", "default"),
     lambda o: o.metadata.name == "sa1"),
    (["create", "role", "r1", "--verb=get,list", "--resource=pods"],
     lambda a: _rbac(a).read_namespaced_role("r1", "default"),
     lambda o: o.rules[0].verbs == ["get", "list"] and o.rules[0].resources == ["pods"]),
    (["create", "rolebinding", "rb1", "--role=r1", "--serviceaccount=default:sa1"],
     lambda a: _rbac(a).read_namespaced_role_binding("rb1", "default"),
     lambda o: o.role_ref.name == "r1" and o.subjects[0].kind == "ServiceAccount"),
    (["create", "clusterrole", "cr1", "--verb=get", "--resource=nodes"],
     lambda a: _rbac(a).read_cluster_role("cr1"), lambda o: o.rules[0].resources == ["nodes"]),
    (["create", "clusterrolebinding", "crb1", "--clusterrole=cr1", "--user=bob"],
     lambda a: _rbac(a).read_cluster_role_binding("crb1"),
     lambda o: o.subjects[0].name == "bob" and o.role_ref.kind == "ClusterRole"),
    (["create", "service", "clusterip", "svc1", "--tcp=80:8080"],
     lambda a: _core(a).read_namespaced_service("svc1", "default"),
     lambda o: (o.spec.ports[0].port, o.spec.ports[0].target_port) == (80, 8080) and o.spec.type == "ClusterIP"),
    (["create", "quota", "q1", "--hard=pods=3,cpu=1"],
     lambda a: _core(a).read_namespaced_resource_quota("q1", "default"),
     lambda o: o.spec.hard == {"pods": "3", "cpu": "1"}),
    (["create", "priorityclass", "pc1", "--value=1000", "--description=important"],
     lambda a: client.SchedulingV1Api(a).read_priority_class("pc1"),
     lambda o: (o.value, o.description) == (1000, "important")),
    (["create", "pdb", "pdb1", "--selector=app=x", "--min-available=50%"],
     lambda a: client.PolicyV1Api(a).read_namespaced_pod_disruption_budget("pdb1", "default"),
     lambda o: o.spec.min_available == "50%" and o.spec.selector.match_labels == {"app": "x"}),
    (["create", "ingress", "ing1", "--rule=foo.com/bar=svc1:8080"],
     lambda a: client.NetworkingV1Api(a).read_namespaced_ingress("ing1", "default"),
     lambda o: o.spec.rules[0].host == "foo.com" and o.spec.rules[0].http.paths[0].backend.service.port.number
     == 8080),
    (["run", "p1", "--image=nginx", "--labels=app=x", "--env=A=1"],
     lambda a: _core(a).read_namespaced_pod("p1", "default"),
     lambda o: o.metadata.labels == {"app": "x"} and o.spec.containers[0].env[0].value == "1"),
]


@pytest.mark.parametrize(("args", "read", "check"), CREATES, ids=[" ".join(c[0][:3]) for c in CREATES])
def test_imperative_create(kubectl: Kubectl, kube_client: client.ApiClient, args: list[str], read: Read,
                           check: Callable[[Any], bool]) -> None:
    kubectl(*args)
    assert check(read(kube_client))


def test_create_refuses_a_duplicate_with_kube_message(kubectl: Kubectl) -> None:
    kubectl("create", "configmap", "c1")
    done = kubectl("create", "configmap", "c1", check=False)
    assert done.returncode == 1
    assert 'configmaps "c1" already exists' in done.stderr  # kubectl's wording around kube's message


def test_scale_label_annotate(kubectl: Kubectl, kube_client: client.ApiClient) -> None:
    kubectl("create", "deployment", "d1", "--image=nginx")
    kubectl("scale", "deployment", "d1", "--replicas=3")
    kubectl("label", "deployment", "d1", "tier=web")
    kubectl("annotate", "deployment", "d1", "note=hello")
    got = client.AppsV1Api(kube_client).read_namespaced_deployment("d1", "default")
    assert got.spec.replicas == 3
    assert got.metadata.labels == {"app": "d1", "tier": "web"} and got.metadata.annotations == {"note": "hello"}


def test_cordon_and_drain_evict_the_node_pods(kubectl: Kubectl, v1: client.CoreV1Api) -> None:
    v1.create_node({"metadata": {"name": "n1"}})
    for name, node in (("p1", "n1"), ("p2", "n1"), ("other", "")):
        spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
        if node:
            spec["nodeName"] = node
        v1.create_namespaced_pod("default", {"metadata": {"name": name}, "spec": spec})
    kubectl("cordon", "n1")
    assert v1.read_node("n1").spec.unschedulable is True
    done = kubectl("drain", "n1", "--force", "--grace-period=0", "--timeout=30s")
    assert "node/n1 drained" in done.stdout and "pod/p1 evicted" in done.stdout
    assert [p.metadata.name for p in v1.list_namespaced_pod("default").items] == ["other"]
    kubectl("uncordon", "n1")
    assert not v1.read_node("n1").spec.unschedulable


def test_rollout_status_waits_for_the_rollout(kubectl: Kubectl, kube_client: client.ApiClient) -> None:
    apps = client.AppsV1Api(kube_client)
    kubectl("create", "deployment", "d1", "--image=nginx", "--replicas=2")
    pending = kubectl("rollout", "status", "deployment/d1", "--timeout=1s", check=False)
    assert pending.returncode == 1 and "timed out waiting for the condition" in pending.stderr
    status = {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2,
              "availableReplicas": 2}
    apps.patch_namespaced_deployment_status("d1", "default", {"status": status})
    done = kubectl("rollout", "status", "deployment/d1", "--timeout=30s")
    assert 'deployment "d1" successfully rolled out' in done.stdout


def test_dry_run_create_prints_the_decoded_object(kubectl: Kubectl, kube_apiserver: LoopbackAPIServer,
                                                   v1: client.CoreV1Api) -> None:
    done = kubectl("create", "configmap", "c1", "--from-literal=k=v", "--dry-run=server", "-o",
                   "jsonpath={.data.k}")
    assert done.stdout == "v"
    eventually(lambda: v1.list_namespaced_config_map("default").items == [], timeout=5)


def test_create_token_and_autoscale(kubectl: Kubectl, kube_client: client.ApiClient) -> None:
    kubectl("create", "serviceaccount", "sa1")
    token = kubectl("create", "token", "sa1", "--duration=1h").stdout.strip()  # a protobuf TokenRequest
    assert token.count(".") == 2
    kubectl("create", "deployment", "d1", "--image=nginx")
    kubectl("autoscale", "deployment", "d1", "--max=5", "--min=2", "--cpu=80%")
    hpa = client.AutoscalingV2Api(kube_client).read_namespaced_horizontal_pod_autoscaler("d1", "default")
    assert (hpa.spec.min_replicas, hpa.spec.max_replicas) == (2, 5)
    assert hpa.spec.metrics[0].resource.target.average_utilization == 80
