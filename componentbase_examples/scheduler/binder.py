"""The scheduler's writes to the API: a pod's binding, and its ``PodScheduled`` condition after a failure.

Both go through the official client with ``_preload_content=False`` and the response read at once, so the
connection returns to the keep-alive pool: a binding costs one request on an open connection, not a new
TCP connection and a pydantic model (``create_namespaced_pod_binding`` also raises on success without it,
kubernetes-client/python#547).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import componentbase
from componentbase.client import describe, format_time, observe_request
from componentbase_examples.scheduler.podinfo import PodInfo

__all__ = ["APIBinder", "BindError", "pod_scheduled_condition", "unschedulable_condition"]

POD_SCHEDULED = "PodScheduled"


class BindError(Exception):
    """The API refused a call; ``str()`` is the server's one-line message, ``status`` its HTTP code."""

    def __init__(self, message: str, status: int | None) -> None:
        super().__init__(message)
        self.status = status


def _message(err: Exception) -> BindError:
    failure = describe(err)
    text = failure.summary
    if failure.status is not None:  # "409 Conflict: Operation cannot ..." -> the server's message, as kube prints it
        head, sep, rest = text.partition(": ")
        text = rest if sep and head.split(" ", 1)[0].isdigit() else text
    return BindError(text, failure.status)


class APIBinder:
    """Binds pods and patches their status through one ``ApiClient`` (safe from many threads)."""

    def __init__(self, api_client: Any, request_timeout: float = 30.0) -> None:
        self.api_client = api_client
        self.request_timeout = request_timeout

    def bind(self, pod: PodInfo, node_name: str) -> None:
        """POST the pod's ``binding`` subresource; raises ``BindError`` if the API refuses."""
        body = {"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": pod.name, "namespace": pod.namespace, **_uid(pod.pod)},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}
        try:
            # The binding we build needs no pydantic V1Binding per pod: ~0.05 ms of the scheduler's GIL each.
            with observe_request(self.api_client, "POST") as obs:
                obs.response(componentbase.client.request(
                    self.api_client, "POST", "/api/v1/namespaces/{namespace}/pods/{name}/binding",
                    path_params={"namespace": pod.namespace, "name": pod.name}, body=body,
                    timeout=self.request_timeout)).read()
        except Exception as err:  # ApiException, or a transport error: the binding cycle fails
            raise _message(err) from None

    def patch_condition(self, pod: Mapping[str, Any], condition: Mapping[str, Any]) -> None:
        """Strategic-merge ``condition`` into the pod's status (conditions merge by ``type``).

        The patch carries the pod's resourceVersion: if the pod changed since (bound meanwhile, or this
        very condition already written from a fresher copy), the server answers 409 and nothing is lost.
        """
        meta = pod.get("metadata") or {}
        body: dict[str, Any] = {"status": {"conditions": [dict(condition)]}}
        if meta.get("resourceVersion"):
            body["metadata"] = {"resourceVersion": meta["resourceVersion"]}
        try:
            with observe_request(self.api_client, "PATCH") as obs:
                obs.response(componentbase.client.request(
                    self.api_client, "PATCH", "/api/v1/namespaces/{namespace}/pods/{name}/status",
                    path_params={"namespace": meta.get("namespace") or "default", "name": meta.get("name", "")},
                    body=body, content_type="application/strategic-merge-patch+json",
                    timeout=self.request_timeout)).read()
        except Exception as err:
            raise _message(err) from None


def _uid(pod: Mapping[str, Any]) -> dict[str, str]:
    uid = (pod.get("metadata") or {}).get("uid")
    return {"uid": uid} if uid else {}


def pod_scheduled_condition(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == POD_SCHEDULED:
            return condition  # type: ignore[no-any-return]
    return None


def unschedulable_condition(pod: Mapping[str, Any], reason: str, message: str) -> dict[str, Any] | None:
    """The ``PodScheduled=False`` condition to write, or None when the pod already says exactly that.

    As kube's ``UpdatePodCondition``: the transition time moves only when the status changes.
    """
    old = pod_scheduled_condition(pod)
    if old is not None and (old.get("status"), old.get("reason"), old.get("message")) == ("False", reason, message):
        return None
    now = format_time()
    since = old.get("lastTransitionTime") if old is not None and old.get("status") == "False" else None
    return {"type": POD_SCHEDULED, "status": "False", "reason": reason, "message": message,
            "lastProbeTime": None, "lastTransitionTime": since or now}
