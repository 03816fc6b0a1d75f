"""What the lifecycle tests share: a Deployment -> ReplicaSet -> Pod chain and a watch's history."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kubernetes import client
from kubernetes.watch.watch import iter_resp_lines

NS = "default"
SPEC = {"containers": [{"name": "c", "image": "i"}]}


def owner_ref(obj: Any, kind: str, api_version: str = "apps/v1") -> dict[str, Any]:
    """The reference kube's controllers put on what they create: controller and blocking."""
    return {"apiVersion": api_version, "kind": kind, "name": obj.metadata.name, "uid": obj.metadata.uid,
            "controller": True, "blockOwnerDeletion": True}


def make_chain(api: client.ApiClient) -> tuple[Any, Any]:
    """Deployment ``web`` owning ReplicaSet ``web-1`` owning pods ``web-a`` (unscheduled) and ``web-b``
    (bound to node ``n1``), as the deployment and replicaset controllers would leave them."""
    apps, v1 = client.AppsV1Api(api), client.CoreV1Api(api)
    labels = {"app": "web"}
    template = {"metadata": {"labels": labels}, "spec": SPEC}
    deploy = apps.create_namespaced_deployment(NS, {"metadata": {"name": "web"}, "spec": {
        "selector": {"matchLabels": labels}, "template": template}})
    rs = apps.create_namespaced_replica_set(NS, {"metadata": {"name": "web-1", "labels": labels, "ownerReferences": [
        owner_ref(deploy, "Deployment")]}, "spec": {"selector": {"matchLabels": labels}, "template": template}})
    for name, node in (("web-a", None), ("web-b", "n1")):
        spec = dict(SPEC, nodeName=node) if node else SPEC
        v1.create_namespaced_pod(NS, {"metadata": {"name": name, "labels": labels, "ownerReferences": [
            owner_ref(rs, "ReplicaSet")]}, "spec": spec})
    return deploy, rs


def names(list_fn: Callable[..., Any], *args: Any) -> list[str]:
    return sorted(o.metadata.name for o in list_fn(*args).items)


def history(list_fn: Callable[..., Any], rv: str, **kw: Any) -> list[tuple[str, str, dict[str, Any]]]:
    """Every event after ``rv`` as (type, name, metadata); the watch ends after a second of quiet."""
    resp = list_fn(watch=True, resource_version=rv, timeout_seconds=1, _preload_content=False, **kw)
    try:
        events = [json.loads(line) for line in iter_resp_lines(resp)]
    finally:
        resp.close()
    return [(e["type"], e["object"]["metadata"]["name"], e["object"]["metadata"]) for e in events]
