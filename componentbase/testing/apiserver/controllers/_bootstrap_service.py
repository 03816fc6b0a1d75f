"""The ``kubernetes`` Service in ``default``, as kube-apiserver's bootstrap controller keeps it.

Every cluster has it: in-cluster clients find the API server through it (``kubernetes.default.svc``, and
the KUBERNETES_SERVICE_HOST/PORT a kubelet gives each pod), and ``kubectl get all`` in ``default`` shows it.
kube-apiserver's controller (pkg/controlplane/controller/kubernetesservice) writes the Service with the
first address of the service CIDR and port 443 to the server's own port, and its endpoint reconciler the
Endpoints (marked not to be mirrored) and the EndpointSlice naming the server's address.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CLUSTER_IP", "kubernetes_service"]

#: The first address of the service CIDR (the allocator hands out the rest).
CLUSTER_IP = "10.96.0.1"
_NAME, _NAMESPACE = "kubernetes", "default"


def _meta(labels: dict[str, str]) -> dict[str, Any]:
    return {"name": _NAME, "namespace": _NAMESPACE, "labels": labels}


def kubernetes_service(address: str, port: int) -> list[tuple[str, str, dict[str, Any]]]:
    """``(group, plural, object)`` of the Service, its Endpoints and its EndpointSlice for a server
    listening on ``address:port``."""
    target = {"name": "https", "port": port, "protocol": "TCP"}
    service = {"apiVersion": "v1", "kind": "Service",
               "metadata": _meta({"component": "apiserver", "provider": "kubernetes"}),
               "spec": {"type": "ClusterIP", "clusterIP": CLUSTER_IP, "sessionAffinity": "None",
                        "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}]}}
    endpoints = {"apiVersion": "v1", "kind": "Endpoints",
                 "metadata": _meta({"endpointslice.kubernetes.io/skip-mirror": "true"}),
                 "subsets": [{"addresses": [{"ip": address}], "ports": [target]}]}
    family = "IPv6" if ":" in address else "IPv4"
    slice_ = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
              "metadata": _meta({"kubernetes.io/service-name": _NAME}), "addressType": family,
              "endpoints": [{"addresses": [address], "conditions": {"ready": True}}], "ports": [target]}
    return [("", "services", service), ("", "endpoints", endpoints), ("discovery.k8s.io", "endpointslices", slice_)]
