"""What the two event-sender test modules share: a pod to record about, and the Events the server has."""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client

POD = {"kind": "Pod", "apiVersion": "v1",
       "metadata": {"name": "web-1", "namespace": "default", "uid": "uid-1", "resourceVersion": "7"}}


def list_events(api: client.ApiClient, namespace: str = "default") -> list[dict[str, Any]]:
    """The namespace's Events, oldest first."""
    resp = client.CoreV1Api(api).list_namespaced_event(namespace, _preload_content=False)
    items: list[dict[str, Any]] = json.loads(resp.data)["items"]
    return sorted(items, key=lambda e: e["metadata"]["creationTimestamp"] + e["metadata"]["name"])
