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
        # The binding we build needs no pydantic V1Binding per pod: ~0.05 ms of the scheduler's GIL each.
        self._call("POST", "/api/v1/namespaces/{namespace}/pods/{name}/binding",
                   {"namespace": pod.namespace, "name": pod.name}, body)

    def patch_condition(self, pod: Mapping[str, Any], condition: Mapping[str, Any] | None,
                        nominated_node_name: str | None = None) -> None:
        """Strategic-merge ``condition`` into the pod's status (conditions merge by ``type``), and set
        ``status.nominatedNodeName`` (``""`` clears it) unless that is None.

        The patch carries the pod's resourceVersion: if the pod changed since (bound meanwhile, or this
        very condition already written from a fresher copy), the server answers 409 and nothing is lost.
        """
        status: dict[str, Any] = {"conditions": [dict(condition)]} if condition is not None else {}
        if nominated_node_name is not None:
            status["nominatedNodeName"] = nominated_node_name or None
        self.patch_status(pod, status, precondition=True)

    def patch_status(self, pod: Mapping[str, Any], status: Mapping[str, Any], *, precondition: bool) -> None:
        """Strategic-merge ``status`` into the pod's; with ``precondition``, only if its resourceVersion is
        still the one ``pod`` carries."""
        meta = pod.get("metadata") or {}
        body: dict[str, Any] = {"status": dict(status)}
        if precondition and meta.get("resourceVersion"):
            body["metadata"] = {"resourceVersion": meta["resourceVersion"]}
        self._call("PATCH", "/api/v1/namespaces/{namespace}/pods/{name}/status", meta, body,
                   "application/strategic-merge-patch+json")

    def delete_pod(self, pod: Mapping[str, Any]) -> None:
        """Delete the pod gracefully (its own grace period), as kube's ``util.DeletePod``."""
        self._call("DELETE", "/api/v1/namespaces/{namespace}/pods/{name}", pod.get("metadata") or {}, None)

    def _call(self, method: str, path: str, meta: Mapping[str, Any], body: Any, content_type: str = "") -> None:
        params = {"namespace": meta.get("namespace") or "default", "name": meta.get("name", "")}
        try:
            with observe_request(self.api_client, method) as obs:
                obs.response(componentbase.client.request(
                    self.api_client, method, path, path_params=params, body=body,
                    content_type=content_type or None, timeout=self.request_timeout)).read()
        except Exception as err:  # ApiException, or a transport error
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
