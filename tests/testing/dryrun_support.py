"""What the dry-run tests share: object builders and a watch that shows nothing happened."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

from kubernetes import client
from kubernetes.watch.watch import iter_resp_lines

Kubectl = Callable[..., subprocess.CompletedProcess[str]]  # the ``kubectl`` fixture of conftest.py
ALL = "All"


def cm_body(name: str, **data: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "data": data or {"a": "1"}}


def pod_body(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


def raw_body(resp: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(resp.data)
    return body


def error_body(exc: client.ApiException) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(exc.body)
    return body


class Watching:
    """A watch opened from the list's resourceVersion right now; ``first`` reads its first event."""

    def __init__(self, list_fn: Callable[..., Any], **kw: Any) -> None:
        self.rv = list_fn(**kw).metadata.resource_version
        self._resp = list_fn(watch=True, resource_version=self.rv, timeout_seconds=10, _preload_content=False,
                             **kw)
        self._lines: Iterator[str] = iter_resp_lines(self._resp)

    def first(self) -> dict[str, Any]:
        event: dict[str, Any] = json.loads(next(self._lines))
        self._resp.close()
        return event

    def expect_only(self, kind: str, name: str) -> None:
        """The real change made after the dry runs is the first event, at the very next resourceVersion."""
        event = self.first()
        meta = event["object"]["metadata"]
        assert (event["type"], meta["name"]) == (kind, name)
        assert meta["resourceVersion"] == str(int(self.rv) + 1)


def watch_configmaps(v1: client.CoreV1Api) -> Watching:
    return Watching(v1.list_namespaced_config_map, namespace="default")


def marker(v1: client.CoreV1Api, w: Watching) -> None:
    v1.create_namespaced_config_map("default", cm_body("marker"))
    w.expect_only("ADDED", "marker")
