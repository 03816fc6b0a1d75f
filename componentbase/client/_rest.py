"""Any served resource, by apiVersion and kind: discovery, a REST mapper, and raw calls through the official client.

The official client has a generated method per built-in resource, and none for custom resources. Its public
``ApiClient.param_serialize`` and ``ApiClient.call_api`` reach any path with the client's own configuration,
authentication, rate limit and connections, so every call still goes through it. The mapper reads only the
discovery document of the group-version asked for (``/api/v1`` or ``/apis/<group>/<version>``), not the whole
of ``/apis`` as the client's ``DynamicClient`` does, and reads it again when a kind is missing (a CRD created
after start-up).
"""

from __future__ import annotations

import difflib
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from componentbase.client._errors import json_body
from componentbase.client._fastcall import request

__all__ = ["RESTMapper", "ResourceMapping", "UnknownKind"]


class UnknownKind(LookupError):
    """No served resource has this kind in this apiVersion; the message lists close matches."""


@dataclass(frozen=True, slots=True)
class ResourceMapping:
    """Where a kind is served: its group, version, plural resource name and scope."""

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()  # "status", "scale"... as discovery lists them

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str = "", subresource: str = "") -> str:
        """The URL path of the collection, or of one object (and its subresource)."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.resource}"
        if name:
            base += f"/{quote(name, safe='')}"
            if subresource:
                base += f"/{subresource}"
        return base


class RESTMapper:
    """Maps ``(apiVersion, kind)`` to its ``ResourceMapping``, from discovery, cached per group-version."""

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client
        self._lock = threading.Lock()
        self._by_gv: dict[str, dict[str, ResourceMapping]] = {}

    def mapping(self, api_version: str, kind: str) -> ResourceMapping:
        """The mapping of ``kind``; discovery is read again once if the kind is not known yet."""
        with self._lock:
            kinds = self._by_gv.get(api_version)
        if kinds is None or kind not in kinds:
            kinds = self._discover(api_version)
        found = kinds.get(kind)
        if found is None:
            raise UnknownKind(_no_match(api_version, kind, kinds))
        return found

    def invalidate(self, api_version: str | None = None) -> None:
        """Forget discovery (of one group-version, or all), so the next lookup reads it again."""
        with self._lock:
            if api_version is None:
                self._by_gv.clear()
            else:
                self._by_gv.pop(api_version, None)

    def _discover(self, api_version: str) -> dict[str, ResourceMapping]:
        from kubernetes.client.exceptions import ApiException  # slow import, kept off this package's import

        group, _, version = api_version.rpartition("/")
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            doc = json_body(request(self.api_client, "GET", path, timeout=30))
        except ApiException as err:
            if err.status != 404:
                raise
            doc = {}
        kinds: dict[str, ResourceMapping] = {}
        resources = [r for r in doc.get("resources") or () if isinstance(r, dict)]
        subresources: dict[str, list[str]] = {}
        for r in resources:
            parent, _, sub = str(r.get("name") or "").partition("/")
            if sub:  # subresources are not kinds of their own
                subresources.setdefault(parent, []).append(sub)
        for r in resources:
            name = str(r.get("name") or "")
            if not name or "/" in name:
                continue
            kinds[str(r.get("kind"))] = ResourceMapping(group, version, name, str(r.get("kind")),
                                                        bool(r.get("namespaced")), tuple(r.get("verbs") or ()),
                                                        tuple(subresources.get(name, ())))
        with self._lock:
            self._by_gv[api_version] = kinds
        return kinds


def _no_match(api_version: str, kind: str, kinds: dict[str, ResourceMapping]) -> str:
    message = f'no matches for kind "{kind}" in version "{api_version}"'
    if not kinds:
        return message + f" (the server serves no {api_version})"
    close = difflib.get_close_matches(kind, list(kinds), n=3, cutoff=0.6)
    if not close:
        close = [k for k in kinds if k.lower() == kind.lower()]
    return message + (f"; did you mean {', '.join(close)}?" if close else "")

