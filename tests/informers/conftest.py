"""Helpers: a handler that mirrors what it is told, server-side state, and a stop event that joins."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from componentbase.informers import (
    Backoff,
    DeletedFinalStateUnknown,
    meta_namespace_key,
)

Obj = dict[str, Any]


class Mirror:
    """An event handler that keeps {key: resourceVersion} from what it was told, and a log of calls."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.state: dict[str, str] = {}
        self.calls: list[tuple[str, str]] = []
        self.tombstones: list[DeletedFinalStateUnknown] = []
        self.problems: list[str] = []

    def on_add(self, obj: Obj) -> None:
        key = meta_namespace_key(obj)
        with self.lock:
            if key in self.state:
                self.problems.append(f"add for known {key}")
            self.state[key] = obj["metadata"]["resourceVersion"]
            self.calls.append(("add", key))

    def on_update(self, old: Obj, new: Obj) -> None:
        key = meta_namespace_key(new)
        with self.lock:
            if key not in self.state:
                self.problems.append(f"update for unknown {key}")
            self.state[key] = new["metadata"]["resourceVersion"]
            self.calls.append(("update", key))

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        key = meta_namespace_key(obj)
        with self.lock:
            if key not in self.state:
                self.problems.append(f"delete for unknown {key}")
            self.state.pop(key, None)
            self.calls.append(("delete", key))
            if isinstance(obj, DeletedFinalStateUnknown):
                self.tombstones.append(obj)

    def handlers(self) -> dict[str, Any]:
        return {"on_add": self.on_add, "on_update": self.on_update, "on_delete": self.on_delete}

    def snapshot(self) -> dict[str, str]:
        with self.lock:
            return dict(self.state)


def server_state(api: client.ApiClient, resource: str = "configmaps", namespace: str = "default") -> dict[str, str]:
    """{namespace/name: resourceVersion} as the server has it now."""
    path = f"/api/v1/namespaces/{namespace}/{resource}"
    resp = api.call_api(*api.param_serialize("GET", path))
    resp.read()
    items = json.loads(resp.data)["items"]
    return {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o["metadata"]["resourceVersion"]
            for o in items}


def cache_state(informer: Any) -> dict[str, str]:
    return {meta_namespace_key(o): o["metadata"]["resourceVersion"] for o in informer.list()}


def cm(name: str, **labels: str) -> Obj:
    return {"metadata": {"name": name, "labels": labels}, "data": {"k": name}}


@pytest.fixture
def v1(kube_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(kube_client)


_OURS = ("reflector-", "informer-")


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    """Set at teardown; waits for the informers' threads, so none is left running at interpreter exit."""
    event = threading.Event()
    yield event
    event.set()
    deadline = time.monotonic() + 5
    for thread in threading.enumerate():
        if thread.name.startswith(_OURS):
            thread.join(max(0.0, deadline - time.monotonic()))


def fast_backoff() -> Backoff:
    return Backoff(duration=0.05, cap=0.3, jitter=0.2)
