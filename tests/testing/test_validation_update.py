"""What an update may not change, refused with kube's messages, and what kube keeps when an update leaves
it out; and the fields kube-apiserver fills into a new pod."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests.testing.test_validation import causes, pod, refused

pytestmark = pytest.mark.integration

POD_UPDATES = ("pod updates may not change fields other than `spec.containers[*].image`,"
               "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
               "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
               "previously negative)")


def test_pod_spec_is_immutable_but_for_images_and_deadlines(v1: client.CoreV1Api) -> None:
    made = v1.create_namespaced_pod("default", pod())
    code, body = refused(lambda: v1.patch_namespaced_pod("p", "default", {
        "spec": {"containers": [{"name": "c", "command": ["sh"]}]}}))
    assert (code, causes(body)) == (422, [("spec", f"Forbidden: {POD_UPDATES}")])
    assert body["message"] == f'Pod "p" is invalid: spec: Forbidden: {POD_UPDATES}'
    v1.patch_namespaced_pod("p", "default", {"spec": {
        "containers": [{"name": "c", "image": "busybox:1.37"}], "activeDeadlineSeconds": 60}})
    patched = v1.patch_namespaced_pod("p", "default", [  # a JSON patch: tolerations have no merge key
        {"op": "add", "path": "/spec/tolerations/-", "value": {"key": "k", "operator": "Exists"}}])
    assert patched.spec.containers[0].image == "busybox:1.37"
    assert patched.spec.active_deadline_seconds == 60
    assert len(patched.spec.tolerations) == len(made.spec.tolerations) + 1
    code, _ = refused(lambda: v1.patch_namespaced_pod("p", "default", {"spec": {"activeDeadlineSeconds": 120}}))
    assert code == 422  # a deadline may only shorten
    code, _ = refused(lambda: v1.patch_namespaced_pod("p", "default", {"spec": {"tolerations": []}}))
    assert code == 422  # nor may tolerations go
    labelled = v1.patch_namespaced_pod("p", "default", {"metadata": {"labels": {"a": "b"}}})
    assert labelled.metadata.labels == {"a": "b"}  # metadata stays mutable


def test_name_and_uid_are_immutable(v1: client.CoreV1Api) -> None:
    made = v1.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    code, body = refused(lambda: v1.patch_namespaced_config_map("c", "default", {"metadata": {"name": "d"}}))
    assert (code, causes(body)) == (422, [("metadata.name", 'Invalid value: "d": field is immutable')])
    code, body = refused(lambda: v1.patch_namespaced_config_map("c", "default", {"metadata": {"uid": "x"}}))
    assert (code, causes(body)) == (422, [("metadata.uid", 'Invalid value: "x": field is immutable')])
    assert v1.read_namespaced_config_map("c", "default").metadata.uid == made.metadata.uid


def test_immutable_config_maps_and_secrets(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_config_map("default", {"metadata": {"name": "c"}, "data": {"a": "1"}, "immutable": True})
    code, body = refused(lambda: v1.patch_namespaced_config_map("c", "default", {"data": {"a": "2"}}))
    assert (code, body["message"]) == (
        422, 'ConfigMap "c" is invalid: data: Forbidden: field is immutable when `immutable` is set')
    code, body = refused(lambda: v1.patch_namespaced_config_map("c", "default", {"immutable": False}))
    assert (code, causes(body)) == (422, [("immutable", "Forbidden: field is immutable when `immutable` is set")])
    v1.patch_namespaced_config_map("c", "default", {"metadata": {"labels": {"a": "b"}}})
    v1.create_namespaced_secret("default", {"metadata": {"name": "s"}, "stringData": {"a": "1"}, "immutable": True})
    code, body = refused(lambda: v1.patch_namespaced_secret("s", "default", {"stringData": {"a": "2"}}))
    assert (code, causes(body)) == (422, [("data", "Forbidden: field is immutable when `immutable` is set")])
    code, body = refused(lambda: v1.patch_namespaced_secret("s", "default", {"type": "kubernetes.io/tls"}))
    assert ("type", 'Invalid value: "kubernetes.io/tls": field is immutable') in causes(body)


def test_a_service_keeps_its_cluster_ip(v1: client.CoreV1Api) -> None:
    made = v1.create_namespaced_service("default", {"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}})
    ip = made.spec.cluster_ip
    replaced = v1.replace_namespaced_service("svc", "default", {
        "metadata": {"name": "svc", "resourceVersion": made.metadata.resource_version},
        "spec": {"ports": [{"port": 81}]}})  # a manifest without the allocated IP keeps it
    assert (replaced.spec.cluster_ip, replaced.spec.cluster_ips) == (ip, [ip])
    code, body = refused(lambda: v1.patch_namespaced_service("svc", "default", {"spec": {"clusterIP": "10.0.0.9"}}))
    assert (code, causes(body)) == (422, [("spec.clusterIPs[0]",
                                           'Invalid value: []string{"10.0.0.9"}: may not change once set')])


def _deployment(app: str) -> dict[str, Any]:
    return {"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": app}},
        "template": {"metadata": {"labels": {"app": app}}, "spec": pod()["spec"]}}}


def test_workload_selectors_and_job_templates_are_fixed(kube_client: client.ApiClient) -> None:
    apps, batch = client.AppsV1Api(kube_client), client.BatchV1Api(kube_client)
    apps.create_namespaced_deployment("default", _deployment("a"))
    code, body = refused(lambda: apps.patch_namespaced_deployment("d", "default", _deployment("b")))
    assert code == 422 and body["message"] == (
        'Deployment.apps "d" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:'
        'map[string]string{"app":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable')
    apps.patch_namespaced_deployment("d", "default", {"spec": {"replicas": 3}})
    job = {"metadata": {"name": "j"}, "spec": {"template": {"spec": pod(restartPolicy="Never")["spec"]}}}
    batch.create_namespaced_job("default", job)
    code, body = refused(lambda: batch.patch_namespaced_job("j", "default", {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "image": "other"}]}}}}))
    assert code == 422 and [f for f, _ in causes(body)] == ["spec.template"]
    assert causes(body)[0][1].endswith("field is immutable")


def test_a_statefulsets_spec_is_fixed_beyond_its_mutable_fields(kube_client: client.ApiClient) -> None:
    apps = client.AppsV1Api(kube_client)
    sts = _deployment("a")
    sts["spec"]["serviceName"] = "web"
    apps.create_namespaced_stateful_set("default", sts)
    apps.patch_namespaced_stateful_set("d", "default", {"spec": {"replicas": 2}})
    code, body = refused(lambda: apps.patch_namespaced_stateful_set("d", "default", {"spec": {"serviceName": "x"}}))
    assert (code, causes(body)) == (422, [("spec", "Forbidden: updates to statefulset spec for fields other than "
                                           "'replicas', 'ordinals', 'template', 'updateStrategy', "
                                           "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
                                           "forbidden")])


def test_a_new_pod_is_filled_in_as_kube_apiserver_does(v1: client.CoreV1Api) -> None:
    limits = {"limits": {"cpu": "1", "memory": "1Gi"}}
    spec = {"containers": [{"name": "c", "image": "busybox:1.36", "resources": limits},
                           {"name": "d", "image": "busybox"}]}
    made = v1.create_namespaced_pod("default", {"metadata": {"name": "p"}, "spec": spec})
    s = made.spec
    assert (s.service_account_name, s.service_account, s.priority, s.preemption_policy) == (
        "default", "default", 0, "PreemptLowerPriority")
    assert (s.enable_service_links, s.scheduler_name, s.dns_policy, s.restart_policy) == (
        True, "default-scheduler", "ClusterFirst", "Always")
    assert [(t.key, t.operator, t.effect, t.toleration_seconds) for t in s.tolerations] == [
        ("node.kubernetes.io/not-ready", "Exists", "NoExecute", 300),
        ("node.kubernetes.io/unreachable", "Exists", "NoExecute", 300)]
    c, d = s.containers
    assert (c.image_pull_policy, d.image_pull_policy) == ("IfNotPresent", "Always")  # by tag: none means latest
    assert c.resources.requests == {"cpu": "1", "memory": "1Gi"}  # requests default to the limits
    assert (c.termination_message_path, c.termination_message_policy) == ("/dev/termination-log", "File")
    assert made.status.qos_class == "Burstable"
    alone = v1.create_namespaced_pod("default", pod("q"))
    assert alone.status.qos_class == "BestEffort"
