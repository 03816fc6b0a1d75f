"""Every built-in group a controller author touches, through kubectl and the official client: apply one
object of each kind, read it back, see kube's defaults, and use the scale, eviction and token subresources."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from componentbase.informers import InformerFactory
from componentbase.testing import LoopbackAPIServer, Resource, eventually
from tests.testing.helpers import informing

Kubectl = Callable[..., subprocess.CompletedProcess[str]]  # the ``kubectl`` fixture of conftest.py
_POD_SPEC = {"containers": [{"name": "c", "image": "nginx:1.27"}]}
_TEMPLATE = {"metadata": {"labels": {"app": "a"}}, "spec": _POD_SPEC}
_SELECTOR = {"matchLabels": {"app": "a"}}


def _obj(api_version: str, kind: str, name: str, **body: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **body}


#: (resource as kubectl names it, object) for one object of every built-in kind
KINDS: list[tuple[str, dict[str, Any]]] = [
    ("configmaps", _obj("v1", "ConfigMap", "cm", data={"k": "v"})),
    ("endpoints", _obj("v1", "Endpoints", "ep", subsets=[])),
    ("events", _obj("v1", "Event", "ev", involvedObject={"kind": "Pod", "name": "p"}, reason="R")),
    ("limitranges", _obj("v1", "LimitRange", "lr", spec={"limits": [{"type": "Container"}]})),
    ("namespaces", _obj("v1", "Namespace", "team-a")),
    ("nodes", _obj("v1", "Node", "node-1")),
    ("persistentvolumeclaims", _obj("v1", "PersistentVolumeClaim", "pvc", spec={
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}})),
    ("persistentvolumes", _obj("v1", "PersistentVolume", "pv", spec={
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp"}})),
    ("pods", _obj("v1", "Pod", "pod", spec=_POD_SPEC)),
    ("podtemplates", _obj("v1", "PodTemplate", "pt", template=_TEMPLATE)),
    ("replicationcontrollers", _obj("v1", "ReplicationController", "rc", spec={"template": _TEMPLATE})),
    ("resourcequotas", _obj("v1", "ResourceQuota", "quota", spec={"hard": {"pods": "10"}})),
    ("secrets", _obj("v1", "Secret", "s", stringData={"k": "v"})),
    ("serviceaccounts", _obj("v1", "ServiceAccount", "sa")),
    ("services", _obj("v1", "Service", "svc", spec={"ports": [{"port": 80}], "selector": {"app": "a"}})),
    ("controllerrevisions.apps", _obj("apps/v1", "ControllerRevision", "cr", revision=1)),
    ("daemonsets.apps", _obj("apps/v1", "DaemonSet", "ds", spec={"selector": _SELECTOR, "template": _TEMPLATE})),
    ("deployments.apps", _obj("apps/v1", "Deployment", "deploy", spec={"selector": _SELECTOR,
                                                                      "template": _TEMPLATE})),
    ("replicasets.apps", _obj("apps/v1", "ReplicaSet", "rs", spec={"selector": _SELECTOR, "template": _TEMPLATE})),
    ("statefulsets.apps", _obj("apps/v1", "StatefulSet", "sts", spec={"selector": _SELECTOR, "template": _TEMPLATE,
                                                                     "serviceName": "svc"})),
    ("events.events.k8s.io", _obj("events.k8s.io/v1", "Event", "ev2", eventTime="2025-01-01T00:00:00.000000Z",
                                  reportingController="x/y", reportingInstance="i", action="A", reason="R")),
    ("horizontalpodautoscalers.autoscaling", _obj("autoscaling/v2", "HorizontalPodAutoscaler", "hpa", spec={
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "deploy"}, "maxReplicas": 5})),
    ("cronjobs.batch", _obj("batch/v1", "CronJob", "cj", spec={"schedule": "*/5 * * * *", "jobTemplate": {
        "spec": {"template": {"spec": dict(_POD_SPEC, restartPolicy="Never")}}}})),
    ("jobs.batch", _obj("batch/v1", "Job", "job", spec={"template": {"spec": dict(_POD_SPEC, restartPolicy="Never")}})),
    ("certificatesigningrequests.certificates.k8s.io", _obj("certificates.k8s.io/v1", "CertificateSigningRequest",
                                                            "csr", spec={"request": "", "signerName": "x/y",
                                                                         "usages": ["client auth"]})),
    ("ingressclasses.networking.k8s.io", _obj("networking.k8s.io/v1", "IngressClass", "ic",
                                              spec={"controller": "x/y"})),
    ("ingresses.networking.k8s.io", _obj("networking.k8s.io/v1", "Ingress", "ing", spec={"defaultBackend": {
        "service": {"name": "svc", "port": {"number": 80}}}})),
    ("ipaddresses.networking.k8s.io", _obj("networking.k8s.io/v1", "IPAddress", "10.96.100.1",
                                           spec={"parentRef": {"resource": "services", "name": "svc"}})),
    ("networkpolicies.networking.k8s.io", _obj("networking.k8s.io/v1", "NetworkPolicy", "np",
                                               spec={"podSelector": {}})),
    ("servicecidrs.networking.k8s.io", _obj("networking.k8s.io/v1", "ServiceCIDR", "cidr",
                                            spec={"cidrs": ["10.100.0.0/16"]})),
    ("poddisruptionbudgets.policy", _obj("policy/v1", "PodDisruptionBudget", "pdb",
                                         spec={"minAvailable": 1, "selector": _SELECTOR})),
    ("clusterrolebindings.rbac.authorization.k8s.io", _obj(
        "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "crb", subjects=[{"kind": "User", "name": "u"}],
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cr"})),
    ("clusterroles.rbac.authorization.k8s.io", _obj("rbac.authorization.k8s.io/v1", "ClusterRole", "cr", rules=[
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])),
    ("rolebindings.rbac.authorization.k8s.io", _obj(
        "rbac.authorization.k8s.io/v1", "RoleBinding", "rb", subjects=[{"kind": "User", "name": "u"}],
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "role"})),
    ("roles.rbac.authorization.k8s.io", _obj("rbac.authorization.k8s.io/v1", "Role", "role", rules=[])),
    ("csidrivers.storage.k8s.io", _obj("storage.k8s.io/v1", "CSIDriver", "csi.example.com", spec={})),
    ("csinodes.storage.k8s.io", _obj("storage.k8s.io/v1", "CSINode", "node-1", spec={"drivers": []})),
    ("csistoragecapacities.storage.k8s.io", _obj("storage.k8s.io/v1", "CSIStorageCapacity", "cap",
                                                 storageClassName="sc")),
    ("storageclasses.storage.k8s.io", _obj("storage.k8s.io/v1", "StorageClass", "sc", provisioner="x/y")),
    ("volumeattachments.storage.k8s.io", _obj("storage.k8s.io/v1", "VolumeAttachment", "va", spec={
        "attacher": "x", "nodeName": "node-1", "source": {"persistentVolumeName": "pv"}})),
    ("volumeattributesclasses.storage.k8s.io", _obj("storage.k8s.io/v1", "VolumeAttributesClass", "vac",
                                                    driverName="x")),
    ("mutatingwebhookconfigurations.admissionregistration.k8s.io", _obj(
        "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "mwc", webhooks=[])),
    ("validatingadmissionpolicies.admissionregistration.k8s.io", _obj(
        "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "vap", spec={  # kube requires both
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                                    "resources": ["resourcequotas"]}]},
            "validations": [{"expression": "true"}]})),
    ("validatingadmissionpolicybindings.admissionregistration.k8s.io", _obj(
        "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "vapb",
        spec={"policyName": "vap", "validationActions": ["Deny"]})),
    ("validatingwebhookconfigurations.admissionregistration.k8s.io", _obj(
        "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "vwc", webhooks=[])),
    ("priorityclasses.scheduling.k8s.io", _obj("scheduling.k8s.io/v1", "PriorityClass", "high", value=1000)),
    ("leases.coordination.k8s.io", _obj("coordination.k8s.io/v1", "Lease", "lease", spec={"holderIdentity": "me"})),
    ("runtimeclasses.node.k8s.io", _obj("node.k8s.io/v1", "RuntimeClass", "rc", handler="runc")),
    ("endpointslices.discovery.k8s.io", _obj("discovery.k8s.io/v1", "EndpointSlice", "slice", addressType="IPv4",
                                             endpoints=[])),
]


@pytest.mark.process
def test_kubectl_applies_and_gets_one_object_of_every_built_in_kind(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "all.yaml"
    manifest.write_text("\n---\n".join(json.dumps(obj) for _, obj in KINDS))
    applied = kubectl("apply", "-f", str(manifest)).stdout.splitlines()
    assert len(applied) == len(KINDS) and all(line.endswith(" created") for line in applied)
    # One kubectl for all 49 reads: it still resolves each resource name through discovery and GETs each object
    # (a resource it cannot get fails the whole command), at a fiftieth of the processes.
    got = json.loads(kubectl("get", *(f"{resource}/{obj['metadata']['name']}" for resource, obj in KINDS),
                             "-o", "json").stdout)["items"]
    assert sorted((o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in got) == \
        sorted((obj["apiVersion"], obj["kind"], obj["metadata"]["name"]) for _, obj in KINDS)
    names = kubectl("get", "deploy,rs,sts,ds,cj,hpa,pdb,sa,pvc,quota,limits,rc,sc,pc,netpol,ing,csr",
                    "-A", "-o", "name").stdout.split()
    assert {"deployment.apps/deploy", "cronjob.batch/cj", "poddisruptionbudget.policy/pdb",
            "storageclass.storage.k8s.io/sc", "priorityclass.scheduling.k8s.io/high"} <= set(names)


@pytest.mark.process
def test_api_resources_lists_every_group_with_short_names(kubectl: Kubectl) -> None:
    rows = [line.split() for line in kubectl("api-resources", "--no-headers").stdout.splitlines()]
    short = {(r[0], r[2]): r[1] for r in rows if len(r) == 5}  # NAME SHORTNAMES APIVERSION NAMESPACED KIND
    assert short[("deployments", "apps/v1")] == "deploy"
    assert short[("customresourcedefinitions", "apiextensions.k8s.io/v1")] == "crd,crds"
    assert short[("horizontalpodautoscalers", "autoscaling/v2")] == "hpa"
    assert short[("persistentvolumeclaims", "v1")] == "pvc"
    groups = {r[-3].rpartition("/")[0] for r in rows}
    assert {"", "apps", "batch", "autoscaling", "policy", "rbac.authorization.k8s.io", "networking.k8s.io",
            "discovery.k8s.io", "storage.k8s.io", "scheduling.k8s.io", "node.k8s.io", "coordination.k8s.io",
            "events.k8s.io", "admissionregistration.k8s.io", "certificates.k8s.io", "apiextensions.k8s.io"} <= groups


@pytest.mark.integration
def test_kube_defaults_the_common_fields(kube_client: client.ApiClient) -> None:
    apps, batch, core = client.AppsV1Api(kube_client), client.BatchV1Api(kube_client), client.CoreV1Api(kube_client)
    deploy = apps.create_namespaced_deployment("default", _obj("apps/v1", "Deployment", "d", spec={
        "selector": _SELECTOR, "template": _TEMPLATE}))
    assert (deploy.spec.replicas, deploy.spec.revision_history_limit, deploy.spec.progress_deadline_seconds) == (
        1, 10, 600)
    assert deploy.spec.strategy.type == "RollingUpdate"
    assert deploy.spec.strategy.rolling_update.max_surge == "25%"
    container = deploy.spec.template.spec.containers[0]
    assert (container.image_pull_policy, container.termination_message_policy) == ("IfNotPresent", "File")
    job = batch.create_namespaced_job("default", _obj("batch/v1", "Job", "j", spec={
        "template": {"spec": dict(_POD_SPEC, restartPolicy="Never")}}))
    assert (job.spec.backoff_limit, job.spec.completions, job.spec.parallelism) == (6, 1, 1)
    assert job.spec.selector.match_labels == {"batch.kubernetes.io/controller-uid": job.metadata.uid}
    svc = core.create_namespaced_service("default", {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}})
    assert (svc.spec.type, svc.spec.session_affinity) == ("ClusterIP", "None")
    assert svc.spec.cluster_ip.startswith("10.") and svc.spec.ports[0].protocol == "TCP"
    assert svc.spec.ports[0].target_port == 80


@pytest.mark.integration
def test_scale_subresource_reads_and_writes_spec_replicas(kube_client: client.ApiClient) -> None:
    apps = client.AppsV1Api(kube_client)
    apps.create_namespaced_stateful_set("default", _obj("apps/v1", "StatefulSet", "s", spec={
        "selector": _SELECTOR, "template": _TEMPLATE, "serviceName": "s", "replicas": 2}))
    scale = apps.read_namespaced_stateful_set_scale("s", "default")
    assert (scale.kind, scale.api_version, scale.spec.replicas, scale.status.selector) == (
        "Scale", "autoscaling/v1", 2, "app=a")
    apps.patch_namespaced_stateful_set_scale("s", "default", {"spec": {"replicas": 5}})
    assert apps.read_namespaced_stateful_set("s", "default").spec.replicas == 5
    scale = apps.read_namespaced_stateful_set_scale("s", "default")
    scale.spec.replicas = 0
    assert apps.replace_namespaced_stateful_set_scale("s", "default", scale).spec.replicas == 0
    with pytest.raises(client.ApiException) as info:
        apps.patch_namespaced_stateful_set_scale("s", "default", {"spec": {"replicas": -1}})
    assert info.value.status == 422


@pytest.mark.integration
def test_eviction_deletes_gracefully_unless_a_budget_forbids(kube_client: client.ApiClient) -> None:
    core, policy = client.CoreV1Api(kube_client), client.PolicyV1Api(kube_client)
    for name in ("free", "guarded"):
        labels = {"app": "guarded"} if name == "guarded" else {}
        core.create_namespaced_pod("default", {"metadata": {"name": name, "labels": labels},
                                               "spec": dict(_POD_SPEC, nodeName="n1")})
    policy.create_namespaced_pod_disruption_budget("default", _obj("policy/v1", "PodDisruptionBudget", "b", spec={
        "minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}))
    core.create_namespaced_pod_eviction("free", "default", {"metadata": {"name": "free"}})
    assert core.read_namespaced_pod("free", "default").metadata.deletion_timestamp is not None
    with pytest.raises(client.ApiException) as info:
        core.create_namespaced_pod_eviction("guarded", "default", {"metadata": {"name": "guarded"}})
    assert info.value.status == 429
    assert json.loads(info.value.body)["message"] == (
        "Cannot evict pod as it would violate the pod's disruption budget.")


@pytest.mark.integration
def test_service_account_token_request(kube_client: client.ApiClient) -> None:
    core = client.CoreV1Api(kube_client)
    core.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
    answer = core.create_namespaced_service_account_token("robot", "default", {"spec": {"audiences": ["api"]}})
    assert answer.status.token.count(".") == 2 and answer.spec.audiences == ["api"]
    assert answer.status.expiration_timestamp.timestamp() > time.time() + 3000
    with pytest.raises(client.ApiException) as info:
        core.create_namespaced_service_account_token("nobody", "default", {"spec": {}})
    assert info.value.status == 404


@pytest.mark.integration
def test_autoscaling_v1_and_v2_are_one_object(kube_client: client.ApiClient) -> None:
    v1, v2 = client.AutoscalingV1Api(kube_client), client.AutoscalingV2Api(kube_client)
    v1.create_namespaced_horizontal_pod_autoscaler("default", {"metadata": {"name": "h"}, "spec": {
        "scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 3,
        "targetCPUUtilizationPercentage": 60}})
    got = v2.read_namespaced_horizontal_pod_autoscaler("h", "default")
    assert got.spec.min_replicas == 1
    assert got.spec.metrics[0].resource.target.average_utilization == 60


@pytest.mark.integration
def test_aggregated_discovery_as_kubectl_asks_for_it(kube_apiserver: LoopbackAPIServer) -> None:
    accept = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
              "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")
    req = urllib.request.Request(kube_apiserver.url + "/apis", headers={"Accept": accept})
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.headers["Content-Type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        etag, doc = resp.headers["ETag"], json.loads(resp.read())
    assert doc["kind"] == "APIGroupDiscoveryList" and doc["apiVersion"] == "apidiscovery.k8s.io/v2"
    apps = next(g for g in doc["items"] if g["metadata"]["name"] == "apps")
    deploy = next(r for r in apps["versions"][0]["resources"] if r["resource"] == "deployments")
    assert deploy["scope"] == "Namespaced" and deploy["shortNames"] == ["deploy"]
    assert {s["subresource"]: s["responseKind"]["kind"] for s in deploy["subresources"]} == {
        "status": "Deployment", "scale": "Scale"}
    autoscaling = next(g for g in doc["items"] if g["metadata"]["name"] == "autoscaling")
    assert [v["version"] for v in autoscaling["versions"]] == ["v2", "v1"]
    req = urllib.request.Request(kube_apiserver.url + "/apis", headers={"Accept": accept, "If-None-Match": etag})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=10)
    assert info.value.code == 304
    req = urllib.request.Request(kube_apiserver.url + "/api", headers={"Accept": accept})
    with urllib.request.urlopen(req, timeout=10) as resp:
        core = json.loads(resp.read())["items"]
    assert [g["metadata"] for g in core] == [{"creationTimestamp": None}]


@pytest.mark.integration
def test_unknown_group_is_kubes_404(kube_apiserver: LoopbackAPIServer) -> None:
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(kube_apiserver.url + "/apis/example.com/v1/namespaces/default/widgets", timeout=10)
    assert info.value.code == 404
    assert json.loads(info.value.read()) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server could not find the requested resource", "reason": "NotFound", "details": {},
        "code": 404}


@pytest.mark.integration
def test_registered_resources_are_served_and_discovered(kube_client: client.ApiClient,
                                                        kube_apiserver: LoopbackAPIServer) -> None:
    kube_apiserver.register(Resource("example.com", "v1", "Gadget", "gadgets", namespaced=False,
                                     short_names=("gd",), subresources=("status",)))
    resources = client.CustomObjectsApi(kube_client).get_api_resources("example.com", "v1").resources
    assert [(r.name, r.short_names, r.namespaced) for r in resources] == [
        ("gadgets", ["gd"], False), ("gadgets/status", None, False)]
    objects = client.CustomObjectsApi(kube_client)
    objects.create_cluster_custom_object("example.com", "v1", "gadgets", {"metadata": {"name": "g"}, "x": 1})
    assert objects.get_cluster_custom_object("example.com", "v1", "gadgets", "g")["kind"] == "Gadget"


@pytest.mark.integration
def test_generic_informer_for_deployments(kube_apiserver: LoopbackAPIServer, kube_client: client.ApiClient) -> None:
    apps = client.AppsV1Api(kube_client)
    apps.create_namespaced_deployment("default", _obj("apps/v1", "Deployment", "before", spec={
        "selector": _SELECTOR, "template": _TEMPLATE}))
    factory = InformerFactory(kube_apiserver.api_client())
    deployments = factory.for_kind("apps/v1", "Deployment")
    with informing(factory):
        assert deployments.get("default/before")["spec"]["replicas"] == 1
        apps.create_namespaced_deployment("default", _obj("apps/v1", "Deployment", "after", spec={
            "selector": _SELECTOR, "template": _TEMPLATE}))
        eventually(lambda: deployments.get("default/after"), what="the watch to deliver the new Deployment")
