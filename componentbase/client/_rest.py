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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from componentbase.client._errors import json_body
from componentbase.client._fastcall import request

__all__ = ["RESTMapper", "ResourceMapping", "UnknownKind", "request"]


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
        for r in doc.get("resources") or ():
            name = str(r.get("name") or "")
            if not name or "/" in name:  # subresources are not kinds of their own
                continue
            kinds[str(r.get("kind"))] = ResourceMapping(group, version, name, str(r.get("kind")),
                                                        bool(r.get("namespaced")), tuple(r.get("verbs") or ()))
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


class ObjectClient:
    """Create, read, patch and delete any object given as a dict with ``apiVersion`` and ``kind``.

    As controller-runtime's client over the official one: the kind's path comes from the mapper; answers are
    plain dicts. Errors are the official client's ``ApiException``.
    """

    def __init__(self, api_client: Any, mapper: RESTMapper | None = None,
                 on_write: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.api_client = api_client
        self.mapper = mapper or RESTMapper(api_client)
        #: Called with each object a create or patch returns (the Manager's read-your-own-writes).
        self.on_write = on_write

    def _call(self, method: str, obj: dict[str, Any], *, name: bool, subresource: str = "", body: Any = None,
              content_type: str = "application/json", query: Iterable[tuple[str, str]] = ()) -> Any:
        mapping = self.mapper.mapping(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        meta = obj.get("metadata") or {}
        path = mapping.path(meta.get("namespace") or None, str(meta.get("name", "")) if name else "", subresource)
        return json_body(request(self.api_client, method, path, query=list(query), body=body,
                                  content_type=content_type if body is not None else None, timeout=60))

    def get(self, api_version: str, kind: str, name: str, namespace: str = "") -> Any:
        """The object as the server has it now."""
        ref = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace}}
        return self._call("GET", ref, name=True)

    def create(self, obj: dict[str, Any]) -> Any:
        """Create ``obj``; the created object."""
        return self._wrote(self._call("POST", obj, name=False, body=obj))

    def patch(self, obj: dict[str, Any], patch: dict[str, Any], *, subresource: str = "") -> Any:
        """A JSON merge patch of ``obj`` (or of its ``subresource``, such as ``status``); the patched object."""
        return self._wrote(self._call("PATCH", obj, name=True, subresource=subresource, body=patch,
                                      content_type="application/merge-patch+json"))

    def _wrote(self, answer: Any) -> Any:
        if self.on_write is not None and isinstance(answer, dict):
            self.on_write(answer)
        return answer

    def delete(self, obj: dict[str, Any], *, propagation_policy: str = "") -> Any:
        """Delete ``obj``; the server's answer (the object while it finalizes, or a Status)."""
        query = [("propagationPolicy", propagation_policy)] if propagation_policy else []
        return self._call("DELETE", obj, name=True, query=query)
