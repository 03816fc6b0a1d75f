"""Helpers for the controller runtime's tests."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def configmap(name: str, namespace: str = "default", **labels: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": labels}, "data": {"k": "v"}}
