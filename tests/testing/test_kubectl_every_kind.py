"""kubectl 1.37 creates and applies one object of every kind the server can create, with its default
validation: kinds with a PATCH taking ``fieldValidation`` are validated by the server (OpenAPI v3), the
create-only ones (TokenReview, the access reviews, Binding) by kubectl itself from /openapi/v2's protobuf
document, as against kube-apiserver. And ``default`` holds the ``kubernetes`` Service."""

from __future__ import annotations

import base64
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from componentbase.testing import LoopbackAPIServer
from tests.testing.conftest import KubectlAt

pytestmark = [pytest.mark.process, pytest.mark.xdist_group("kubectl-every-kind")]  # one server

_POD_SPEC = {"containers": [{"name": "c", "image": "nginx:1.27"}]}
_JOB_SPEC = {"template": {"spec": dict(_POD_SPEC, restartPolicy="Never")}}


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer() as api:
        yield api


def _csr() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "alice")])
    csr = x509.CertificateSigningRequestBuilder().subject_name(name).sign(key, hashes.SHA256())
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


def _obj(api_version: str, kind: str, name: str, **body: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **body}


def objects(n: str) -> dict[str, dict[str, Any]]:
    """A minimal valid object of every kind that can be created, by the name ``kubectl api-resources`` gives
    its resource; every name ends in ``n`` (a second set of objects never meets the first)."""
    sel, labels = {"matchLabels": {"app": n}}, {"app": n}
    template = {"metadata": {"labels": labels}, "spec": _POD_SPEC}
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"cr-{n}"}
    rules = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["podtemplates"]}
    admission, authn, authz = "admissionregistration.k8s.io/v1", "authentication.k8s.io/v1", "authorization.k8s.io/v1"
    attributes = {"verb": "get", "resource": "pods", "namespace": "default"}
    return {
        "configmaps": _obj("v1", "ConfigMap", f"cm-{n}", data={"k": "v"}),
        "endpoints": _obj("v1", "Endpoints", f"ep-{n}", subsets=[{"addresses": [{"ip": "10.1.0.1"}],
                                                                   "ports": [{"port": 80}]}]),
        "events": _obj("v1", "Event", f"ev-{n}", reason="Started", message="m",
                       involvedObject={"kind": "Pod", "name": f"pod-{n}", "namespace": "default"}),
        "limitranges": _obj("v1", "LimitRange", f"lr-{n}", spec={"limits": [{"type": "Container"}]}),
        "namespaces": _obj("v1", "Namespace", f"team-{n}"),
        "nodes": _obj("v1", "Node", f"node-{n}"),
        "persistentvolumeclaims": _obj("v1", "PersistentVolumeClaim", f"pvc-{n}", spec={
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}),
        "persistentvolumes": _obj("v1", "PersistentVolume", f"pv-{n}", spec={
            "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp"}}),
        "pods": _obj("v1", "Pod", f"pod-{n}", spec=_POD_SPEC),
        "podtemplates": _obj("v1", "PodTemplate", f"pt-{n}", template=template),
        "replicationcontrollers": _obj("v1", "ReplicationController", f"rc-{n}", spec={"template": template}),
        "resourcequotas": _obj("v1", "ResourceQuota", f"quota-{n}", spec={"hard": {"pods": "10"}}),
        "secrets": _obj("v1", "Secret", f"s-{n}", stringData={"k": "v"}),
        "serviceaccounts": _obj("v1", "ServiceAccount", f"sa-{n}"),
        "services": _obj("v1", "Service", f"svc-{n}", spec={"ports": [{"port": 80}], "selector": labels}),
        "mutatingwebhookconfigurations.admissionregistration.k8s.io": _obj(
            admission, "MutatingWebhookConfiguration", f"mwc-{n}", webhooks=[]),
        "validatingadmissionpolicies.admissionregistration.k8s.io": _obj(
            admission, "ValidatingAdmissionPolicy", f"vap-{n}", spec={
                "matchConstraints": {"resourceRules": [rules]}, "validations": [{"expression": "true"}]}),
        "validatingadmissionpolicybindings.admissionregistration.k8s.io": _obj(
            admission, "ValidatingAdmissionPolicyBinding", f"vapb-{n}", spec={
                "policyName": f"vap-{n}", "validationActions": ["Deny"]}),
        "validatingwebhookconfigurations.admissionregistration.k8s.io": _obj(
            admission, "ValidatingWebhookConfiguration", f"vwc-{n}", webhooks=[]),
        "customresourcedefinitions.apiextensions.k8s.io": crd(n),
        "controllerrevisions.apps": _obj("apps/v1", "ControllerRevision", f"rev-{n}", revision=1),
        "daemonsets.apps": _obj("apps/v1", "DaemonSet", f"ds-{n}", spec={"selector": sel, "template": template}),
        "deployments.apps": _obj("apps/v1", "Deployment", f"deploy-{n}", spec={"selector": sel, "template": template}),
        "replicasets.apps": _obj("apps/v1", "ReplicaSet", f"rs-{n}", spec={"selector": sel, "template": template}),
        "statefulsets.apps": _obj("apps/v1", "StatefulSet", f"sts-{n}", spec={
            "selector": sel, "template": template, "serviceName": f"svc-{n}"}),
        "selfsubjectreviews.authentication.k8s.io": _obj(authn, "SelfSubjectReview", f"ssr-{n}"),
        "tokenreviews.authentication.k8s.io": _obj(authn, "TokenReview", f"tr-{n}", spec={"token": "not-a-token"}),
        "localsubjectaccessreviews.authorization.k8s.io": dict(_obj(
            authz, "LocalSubjectAccessReview", f"lsar-{n}", spec={"user": "alice", "resourceAttributes": attributes}),
            metadata={"name": f"lsar-{n}", "namespace": "default"}),
        "selfsubjectaccessreviews.authorization.k8s.io": _obj(authz, "SelfSubjectAccessReview", f"ssar-{n}", spec={
            "resourceAttributes": attributes}),
        "selfsubjectrulesreviews.authorization.k8s.io": _obj(authz, "SelfSubjectRulesReview", f"ssrr-{n}", spec={
            "namespace": "default"}),
        "subjectaccessreviews.authorization.k8s.io": _obj(authz, "SubjectAccessReview", f"sar-{n}", spec={
            "user": "alice", "groups": ["team"], "resourceAttributes": attributes}),
        "horizontalpodautoscalers.autoscaling": _obj("autoscaling/v2", "HorizontalPodAutoscaler", f"hpa-{n}", spec={
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": f"deploy-{n}"},
            "maxReplicas": 5}),
        "cronjobs.batch": _obj("batch/v1", "CronJob", f"cj-{n}", spec={"schedule": "*/5 * * * *",
                                                                       "jobTemplate": {"spec": _JOB_SPEC}}),
        "jobs.batch": _obj("batch/v1", "Job", f"job-{n}", spec=_JOB_SPEC),
        "certificatesigningrequests.certificates.k8s.io": _obj(
            "certificates.k8s.io/v1", "CertificateSigningRequest", f"csr-{n}", spec={
                "request": _csr(), "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]}),
        "leases.coordination.k8s.io": _obj("coordination.k8s.io/v1", "Lease", f"lease-{n}",
                                           spec={"holderIdentity": "me"}),
        "endpointslices.discovery.k8s.io": _obj("discovery.k8s.io/v1", "EndpointSlice", f"slice-{n}",
                                                addressType="IPv4", endpoints=[{"addresses": ["10.1.0.1"]}]),
        "events.events.k8s.io": _obj("events.k8s.io/v1", "Event", f"ev2-{n}", eventTime="2025-01-01T00:00:00.000000Z",
                                     reportingController="example.com/c", reportingInstance="i", action="Start",
                                     reason="Started", type="Normal"),
        "ingressclasses.networking.k8s.io": _obj("networking.k8s.io/v1", "IngressClass", f"ic-{n}",
                                                 spec={"controller": "example.com/ingress"}),
        "ingresses.networking.k8s.io": _obj("networking.k8s.io/v1", "Ingress", f"ing-{n}", spec={"defaultBackend": {
            "service": {"name": f"svc-{n}", "port": {"number": 80}}}}),
        "ipaddresses.networking.k8s.io": _obj("networking.k8s.io/v1", "IPAddress", f"10.96.100.{ord(n)}", spec={
            "parentRef": {"resource": "services", "namespace": "default", "name": f"svc-{n}"}}),
        "networkpolicies.networking.k8s.io": _obj("networking.k8s.io/v1", "NetworkPolicy", f"np-{n}",
                                                  spec={"podSelector": {}}),
        "servicecidrs.networking.k8s.io": _obj("networking.k8s.io/v1", "ServiceCIDR", f"cidr-{n}",
                                               spec={"cidrs": [f"10.{ord(n)}.0.0/16"]}),
        "runtimeclasses.node.k8s.io": _obj("node.k8s.io/v1", "RuntimeClass", f"runc-{n}", handler="runc"),
        "poddisruptionbudgets.policy": _obj("policy/v1", "PodDisruptionBudget", f"pdb-{n}",
                                            spec={"minAvailable": 1, "selector": sel}),
        "clusterrolebindings.rbac.authorization.k8s.io": _obj(
            "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", f"crb-{n}", roleRef=ref,
            subjects=[{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]),
        "clusterroles.rbac.authorization.k8s.io": _obj("rbac.authorization.k8s.io/v1", "ClusterRole", f"cr-{n}",
                                                       rules=[{"apiGroups": [""], "resources": ["pods"],
                                                               "verbs": ["get"]}]),
        "rolebindings.rbac.authorization.k8s.io": _obj(
            "rbac.authorization.k8s.io/v1", "RoleBinding", f"rb-{n}", roleRef=ref,
            subjects=[{"kind": "ServiceAccount", "name": f"sa-{n}", "namespace": "default"}]),
        "roles.rbac.authorization.k8s.io": _obj("rbac.authorization.k8s.io/v1", "Role", f"role-{n}", rules=[]),
        "priorityclasses.scheduling.k8s.io": _obj("scheduling.k8s.io/v1", "PriorityClass", f"high-{n}", value=1000),
        "csidrivers.storage.k8s.io": _obj("storage.k8s.io/v1", "CSIDriver", f"{n}.csi.example.com", spec={}),
        "csinodes.storage.k8s.io": _obj("storage.k8s.io/v1", "CSINode", f"node-{n}", spec={"drivers": []}),
        "csistoragecapacities.storage.k8s.io": _obj("storage.k8s.io/v1", "CSIStorageCapacity", f"cap-{n}",
                                                    storageClassName=f"sc-{n}"),
        "storageclasses.storage.k8s.io": _obj("storage.k8s.io/v1", "StorageClass", f"sc-{n}",
                                              provisioner="example.com/disk"),
        "volumeattachments.storage.k8s.io": _obj("storage.k8s.io/v1", "VolumeAttachment", f"va-{n}", spec={
            "attacher": "example.com/disk", "nodeName": f"node-{n}", "source": {"persistentVolumeName": f"pv-{n}"}}),
        "volumeattributesclasses.storage.k8s.io": _obj("storage.k8s.io/v1", "VolumeAttributesClass", f"vac-{n}",
                                                       driverName="example.com/disk"),
        # last: its pod comes first (a Binding binds the pod of its own name)
        "bindings": _obj("v1", "Binding", f"pod-{n}", target={"kind": "Node", "name": f"node-{n}"}),
    }


def crd(n: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "required": ["size"], "properties": {
        "size": {"type": "string"}, "replicas": {"type": "integer", "nullable": True}}}}}
    return _obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", f"gadget{n}s.example.com", spec={
        "group": "example.com", "scope": "Namespaced",
        "names": {"plural": f"gadget{n}s", "kind": f"Gadget{n.upper()}"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}]})


def _write(folder: Path, objs: list[dict[str, Any]]) -> str:
    """One file per object, numbered so kubectl visits them in order."""
    folder.mkdir()
    for i, obj in enumerate(objs):
        (folder / f"{i:02d}-{obj['kind'].lower()}.json").write_text(json.dumps(obj))
    return str(folder)


def test_every_kind_is_created_and_applied_with_validation(server: LoopbackAPIServer, kubectl_at: KubectlAt,
                                                           tmp_path: Path) -> None:
    def kubectl(*args: str, check: bool = True) -> Any:
        return kubectl_at(server.kubeconfig_path, *args, check=check)

    creatable = kubectl("api-resources", "--verbs=create", "-o", "name").stdout.split()
    readable = set(kubectl("api-resources", "--verbs=get", "-o", "name").stdout.split())
    first = objects("a")
    assert sorted(first) == sorted(creatable)  # a kind the server gains needs its object here
    done = kubectl("create", "-f", _write(tmp_path / "create", list(first.values())), "-o", "name")
    names = done.stdout.split()
    assert len(names) == len(first) and "tokenreview.authentication.k8s.io/tr-a" in names
    assert "openapi" not in done.stderr
    assert kubectl("get", "pod", "pod-a", "-o", "jsonpath={.spec.nodeName}").stdout == "node-a"  # the Binding's

    # apply: a second object of every kind, and one of the custom kind the first CRD serves. A create-only kind
    # (the reviews, Binding) has no GET, so apply cannot read its current state: kube's 405, after validation.
    second = objects("b")
    gadget = {"apiVersion": "example.com/v1", "kind": "GadgetA", "metadata": {"name": "g"},
              "spec": {"size": "small", "replicas": None}}
    done = kubectl("apply", "-f", _write(tmp_path / "apply", [*second.values(), gadget]), "-o", "name", check=False)
    applied = done.stdout.split()
    create_only = sorted(set(second) - readable)
    assert create_only == ["bindings", "localsubjectaccessreviews.authorization.k8s.io",
                           "selfsubjectaccessreviews.authorization.k8s.io",
                           "selfsubjectreviews.authentication.k8s.io",
                           "selfsubjectrulesreviews.authorization.k8s.io",
                           "subjectaccessreviews.authorization.k8s.io", "tokenreviews.authentication.k8s.io"]
    assert sorted(name.split("/", 1)[1] for name in applied) == sorted(
        [*(obj["metadata"]["name"] for resource, obj in second.items() if resource in readable), "g"])
    assert "gadgeta.example.com/g" in applied
    assert done.returncode == 1 and "openapi" not in done.stderr
    refusals = [line for line in done.stderr.splitlines() if line.startswith("Error from server")]
    assert refusals == ["Error from server (MethodNotAllowed): error when retrieving current configuration of:"] * len(
        create_only)
    assert done.stderr.count("the server does not allow this method on the requested resource") == len(create_only)

    # a change to the custom resource: its PATCH offers no strategic merge patch, so kubectl sends a JSON merge one
    gadget["spec"]["size"] = "large"
    (tmp_path / "gadget.json").write_text(json.dumps(gadget))
    assert kubectl("apply", "-f", "gadget.json").stdout == "gadgeta.example.com/g configured\n"
    assert kubectl("get", "gadgeta", "g", "-o", "jsonpath={.spec.size}").stdout == "large"


def test_kubectl_validates_a_create_only_kind_from_the_v2_document(server: LoopbackAPIServer,
                                                                    kubectl_at: KubectlAt, tmp_path: Path) -> None:
    """kube-apiserver offers no PATCH of a TokenReview, so kubectl validates it itself: unknown and mistyped
    fields are refused before anything is sent, in kubectl's words."""
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
              "spec": {"token": "t", "audiences": "api", "tokn": "t"}}
    (tmp_path / "review.json").write_text(json.dumps(review))
    done = kubectl_at(server.kubeconfig_path, "create", "-f", "review.json", check=False)  # kubectl runs in tmp_path
    assert done.returncode == 1
    assert done.stderr.startswith('error: error validating "review.json": error validating data: [')
    assert ('ValidationError(TokenReview.spec.audiences): invalid type for io.k8s.api.authentication.v1.'
            'TokenReviewSpec.audiences: got "string", expected "array"') in done.stderr
    assert 'ValidationError(TokenReview.spec): unknown field "tokn" in io.k8s.api.authentication.v1.TokenReviewSpec' \
        in done.stderr


def test_v3_documents_carry_every_kind_their_paths_do(server: LoopbackAPIServer) -> None:
    def get(path: str) -> Any:
        with urllib.request.urlopen(server.url + path, timeout=30) as resp:
            return json.loads(resp.read())

    root = get("/openapi/v3")["paths"]
    core = get(root["api/v1"]["serverRelativeURL"])
    kinds = {(g["group"], g["version"], g["kind"]) for s in core["components"]["schemas"].values()
             for g in s.get("x-kubernetes-group-version-kind", ())}
    assert {("", "v1", "Binding"), ("", "v1", "Pod"), ("policy", "v1", "Eviction"),
            ("authentication.k8s.io", "v1", "TokenRequest")} <= kinds
    eviction = core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}/eviction"]["post"]
    assert eviction["x-kubernetes-group-version-kind"] == {"group": "policy", "kind": "Eviction", "version": "v1"}
    apps = get(root["apis/apps/v1"]["serverRelativeURL"])
    scale = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["patch"]
    assert scale["x-kubernetes-group-version-kind"]["kind"] == "Scale"
    assert "application/strategic-merge-patch+json" in scale["requestBody"]["content"]


def test_get_all_in_default_shows_the_kubernetes_service(server: LoopbackAPIServer, kubectl_at: KubectlAt) -> None:
    out = kubectl_at(server.kubeconfig_path, "get", "all", "-n", "default").stdout
    line = next(row for row in out.splitlines() if row.startswith("service/kubernetes "))
    assert line.split()[:5] == ["service/kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    got = json.loads(kubectl_at(server.kubeconfig_path, "get", "svc/kubernetes", "ep/kubernetes",
                                "endpointslice/kubernetes", "-n", "default", "-o", "json").stdout)["items"]
    service, endpoints, endpoint_slice = got
    target = {"name": "https", "port": server.port, "protocol": "TCP"}
    assert service["spec"]["ports"] == [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": server.port}]
    assert endpoints["subsets"] == [{"addresses": [{"ip": "127.0.0.1"}], "ports": [target]}]
    assert (endpoint_slice["addressType"], endpoint_slice["endpoints"], endpoint_slice["ports"]) == (
        "IPv4", [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}], [target])
    assert endpoint_slice["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
