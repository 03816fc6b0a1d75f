"""The resource manager handed to providers: ConfigMaps and Secrets from the informers' caches.

Upstream's ``manager.ResourceManager``: a provider asks for what a pod references instead of calling the
API server, so a thousand pods starting cost no extra requests. The caches are bound when the node starts
(and rebound if it restarts), so a provider built once keeps working across restarts.

A cache miss is not taken as "does not exist": an object created just before the pod that uses it may
not have reached this node's watch yet, and a ``restartPolicy: Never`` pod would fail for it. A miss is
read from the API server instead, as the kubelet's ConfigMap and Secret managers read fresh on first use.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

__all__ = ["Lookup", "LookupFailed", "ResourceManager", "read_through"]

Obj = dict[str, Any]
#: Reads one cached object by ``namespace/name``.
Lookup = Callable[[str], "Obj | None"]


def _nothing(_key: str) -> Obj | None:
    return None


class LookupFailed(Exception):
    """The API server could not say whether a referenced object exists; the message names it and why."""


def read_through(cache: Lookup, read: Lookup) -> Lookup:
    """A lookup that asks ``read`` (the API server) only when ``cache`` has no such object."""
    def lookup(key: str) -> Obj | None:
        found = cache(key)
        return found if found is not None else read(key)
    return lookup


class ResourceManager:
    """Read-only access to cached ConfigMaps and Secrets."""

    def __init__(self) -> None:
        self._configmaps: Lookup = _nothing
        self._secrets: Lookup = _nothing

    def bind(self, configmaps: Lookup, secrets: Lookup) -> None:
        self._configmaps = configmaps
        self._secrets = secrets

    def get_configmap(self, namespace: str, name: str) -> Obj | None:
        return self._configmaps(f"{namespace}/{name}")

    def get_secret(self, namespace: str, name: str) -> Obj | None:
        return self._secrets(f"{namespace}/{name}")

    def configmap_data(self, namespace: str, name: str) -> dict[str, str] | None:
        """A ConfigMap's ``data`` (binaryData left out), or None when it does not exist."""
        cm = self.get_configmap(namespace, name)
        if cm is None:
            return None
        return {str(k): str(v) for k, v in (cm.get("data") or {}).items()}

    def secret_data(self, namespace: str, name: str) -> dict[str, str] | None:
        """A Secret's ``data``, base64-decoded to text, or None when it does not exist."""
        secret = self.get_secret(namespace, name)
        if secret is None:
            return None
        out: dict[str, str] = {}
        for key, value in (secret.get("data") or {}).items():
            try:
                out[str(key)] = base64.b64decode(str(value), validate=True).decode("utf-8", "replace")
            except (binascii.Error, ValueError):
                out[str(key)] = ""
        return out
