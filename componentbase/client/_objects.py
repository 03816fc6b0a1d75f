"""``ObjectClient``: every read and write a controller makes, for any kind, as controller-runtime's client.

Objects are plain dicts with ``apiVersion`` and ``kind``; the kind's path comes from the ``RESTMapper``. All
calls go through the ``ApiClient`` given (the Manager's fenced one, so a replica that no longer leads sends
no write), and every object a write answers with goes to ``on_write`` (the Manager's read-your-own-writes),
except a dry run's: the server stored nothing, and no watch event will ever settle it.

Errors are the official client's ``ApiException``; a 409 ``Conflict`` is its subclass ``Conflict`` (one
line; an apply's conflicting managers and fields in ``Conflict.fields``).
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from componentbase.client._errors import is_resource_expired, json_body
from componentbase.client._fastcall import request
from componentbase.client._mutate import OperationResult, create_or_patch, create_or_update
from componentbase.client._rest import ResourceMapping, RESTMapper

__all__ = ["PATCH_TYPES", "ObjectClient"]

Obj = dict[str, Any]
Selector = str | Mapping[str, str]

#: ``patch_type`` -> the Content-Type kube-apiserver reads it by. Strategic merge needs a kind with Go
#: struct tags: kube refuses it for custom resources (415 UnsupportedMediaType), and so does this client.
PATCH_TYPES = {"merge": "application/merge-patch+json", "json": "application/json-patch+json",
               "strategic": "application/strategic-merge-patch+json"}
_APPLY = "application/apply-patch+yaml"
#: How long one call may take, connect and read: a write that hangs must not hold a worker for ever.
TIMEOUT = 60.0


def _selector(selector: Selector) -> str:
    """A label selector as a string; a mapping means every label equal, as controller-runtime's MatchingLabels."""
    if isinstance(selector, str):
        return selector
    return ",".join(f"{k}={v}" for k, v in selector.items())


def _write_query(dry_run: bool, field_manager: str = "") -> list[tuple[str, str]]:
    query = [("dryRun", "All")] if dry_run else []
    if field_manager:
        query.append(("fieldManager", field_manager))
    return query


class ObjectClient:
    """Get, list, create, update, patch, apply and delete any object given as a dict with ``apiVersion`` and
    ``kind``; ``create_or_update`` and ``create_or_patch`` as controller-runtime's ``controllerutil``.

    Writes take ``dry_run=True`` (``?dryRun=All``: validated and admitted, not stored) and most take a
    ``field_manager``. Status goes through ``subresource="status"`` on ``update``, ``patch`` and ``apply``.
    """

    def __init__(self, api_client: Any, mapper: RESTMapper | None = None,
                 on_write: Callable[[Obj], None] | None = None) -> None:
        self.api_client = api_client
        self.mapper = mapper or RESTMapper(api_client)
        #: Called with each object a write returns, dry runs aside (the Manager's read-your-own-writes).
        self.on_write = on_write

    # --- plumbing -------------------------------------------------------------------------------------------

    def _send(self, method: str, path: str, *, query: Iterable[tuple[str, str]] = (), body: Any = None,
              content_type: str = "application/json") -> Obj:
        try:
            return json_body(request(self.api_client, method, path, query=list(query), body=body,
                                     content_type=content_type if body is not None else None, timeout=TIMEOUT))
        except Exception as err:
            from componentbase.client._conflicterror import conflict_of  # imports kubernetes: the call already did

            conflict = conflict_of(err)
            if conflict is None:
                raise
            raise conflict from err

    def _mapping(self, obj: Mapping[str, Any]) -> ResourceMapping:
        return self.mapper.mapping(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))

    def _call(self, method: str, obj: Mapping[str, Any], *, name: bool, subresource: str = "", body: Any = None,
              content_type: str = "application/json", query: Iterable[tuple[str, str]] = ()) -> Obj:
        meta = obj.get("metadata") or {}
        if name and not meta.get("name"):
            raise ValueError(f"{method} of a {obj.get('kind')} needs metadata.name")
        mapping = self._mapping(obj)
        if mapping.namespaced and not meta.get("namespace"):  # else the server's puzzling 404 for the path
            raise ValueError(f"{method} of a {obj.get('kind')} needs metadata.namespace: the kind is namespaced")
        path = mapping.path(meta.get("namespace") or None, str(meta.get("name", "")) if name else "", subresource)
        return self._send(method, path, query=query, body=body, content_type=content_type)

    def _wrote(self, answer: Obj, dry_run: bool) -> Obj:
        if self.on_write is not None and not dry_run:
            self.on_write(answer)
        return answer

    # --- reads ----------------------------------------------------------------------------------------------

    def get(self, api_version: str, kind: str, name: str, namespace: str = "") -> Obj:
        """The object as the server has it now (not a cache's copy)."""
        ref = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace}}
        return self._call("GET", ref, name=True)

    def iter_list(self, api_version: str, kind: str, namespace: str = "", *, label_selector: Selector = "",
                  field_selector: str = "", limit: int = 0) -> Iterator[Obj]:
        """The objects of ``kind`` (in ``namespace``, or in all namespaces when it is ""), page by page.

        ``limit`` is the page size (0: one page holding everything); the next page is asked for with the
        previous page's ``continue`` token, so at most ``limit`` objects are held at once. Each item carries
        ``apiVersion`` and ``kind``, as controller-runtime's unstructured lists fill them in, so it can be
        written back as it is. An expired token (410) raises ``ApiException``: the caller lists afresh.
        """
        path = self.mapper.mapping(api_version, kind).path(namespace or None)
        query = [("labelSelector", _selector(label_selector))] if label_selector else []
        if field_selector:
            query.append(("fieldSelector", field_selector))
        if limit:
            query.append(("limit", str(limit)))
        token = ""
        while True:
            page = self._send("GET", path, query=query + ([("continue", token)] if token else []))
            for item in page.get("items") or ():
                item.setdefault("apiVersion", api_version)
                item.setdefault("kind", kind)
                yield item
            token = str((page.get("metadata") or {}).get("continue") or "")
            if not token:
                return

    def list(self, api_version: str, kind: str, namespace: str = "", *, label_selector: Selector = "",
             field_selector: str = "", limit: int = 0) -> builtins.list[Obj]:
        """Every object of ``kind`` the selectors match (``namespace`` "" is all namespaces), as a list.

        ``limit`` fetches it in pages of that size, following ``continue``. If a token expires before the
        last page (the server compacted past it), the whole list is read again in one request, as
        client-go's pager falls back to a full list.
        """
        pages = self.iter_list(api_version, kind, namespace, label_selector=label_selector,
                               field_selector=field_selector, limit=limit)
        try:
            return builtins.list(pages)
        except Exception as err:
            if not limit or not is_resource_expired(err):
                raise
        return builtins.list(self.iter_list(api_version, kind, namespace, label_selector=label_selector,
                                            field_selector=field_selector))

    # --- writes ---------------------------------------------------------------------------------------------

    def create(self, obj: Obj, *, dry_run: bool = False, field_manager: str = "") -> Obj:
        """Create ``obj``; the created object. A name taken is ``ApiException`` 409 ``AlreadyExists``."""
        return self._wrote(self._call("POST", obj, name=False, body=obj,
                                      query=_write_query(dry_run, field_manager)), dry_run)

    def update(self, obj: Obj, *, subresource: str = "", dry_run: bool = False, field_manager: str = "") -> Obj:
        """Replace ``obj`` (PUT; ``subresource="status"`` replaces only its status); the stored object.

        ``metadata.resourceVersion`` guards it: if the object changed since, ``Conflict`` is raised (read it
        again and retry, e.g. with ``retry_on_conflict``). Without one, the update is unconditional where the
        kind allows it (custom resources require one).
        """
        return self._wrote(self._call("PUT", obj, name=True, subresource=subresource, body=obj,
                                      query=_write_query(dry_run, field_manager)), dry_run)

    def patch(self, obj: Obj, patch: Obj | builtins.list[Obj], *, patch_type: str = "merge",
              subresource: str = "", dry_run: bool = False, field_manager: str = "") -> Obj:
        """Patch ``obj`` (or its ``subresource``, such as ``status``); the patched object.

        ``patch_type``: ``"merge"`` (RFC 7386, a dict), ``"json"`` (RFC 6902, a list of operations) or
        ``"strategic"`` (built-in kinds only). A ``metadata.resourceVersion`` in a merge patch guards it as
        in ``update``: ``Conflict`` if it is stale.
        """
        content_type = PATCH_TYPES.get(patch_type)
        if content_type is None:
            raise ValueError(f"patch_type {patch_type!r}: must be one of {', '.join(PATCH_TYPES)}")
        if (patch_type == "json") != isinstance(patch, builtins.list):
            raise TypeError(f"a {patch_type} patch is a {'list of operations' if patch_type == 'json' else 'dict'}, "
                            f"not a {type(patch).__name__}")
        return self._wrote(self._call("PATCH", obj, name=True, subresource=subresource, body=patch,
                                      content_type=content_type, query=_write_query(dry_run, field_manager)),
                           dry_run)

    def apply(self, obj: Obj, *, field_manager: str, force: bool = False, subresource: str = "",
              dry_run: bool = False) -> Obj:
        """Server-side apply: ``obj`` holds the fields ``field_manager`` owns (and only those); the result.

        Fields another manager owns and ``obj`` sets differently raise ``Conflict`` naming each manager and
        field, unless ``force=True`` takes them over. Creates the object if it is absent. With
        ``subresource="status"``, applies (and owns) the status alone.
        """
        if not field_manager:
            raise ValueError("apply needs a field_manager: the name its fields are owned by")
        query = _write_query(dry_run, field_manager)
        if force:
            query.append(("force", "true"))
        # kubernetes>=30's REST layer sends a dict as JSON only under a JSON content type: a string goes as it is.
        return self._wrote(self._call("PATCH", obj, name=True, subresource=subresource, body=json.dumps(obj),
                                      content_type=_APPLY, query=query), dry_run)

    def delete(self, obj: Obj, *, propagation_policy: str = "", grace_period_seconds: int | None = None,
               uid: str = "", resource_version: str = "", dry_run: bool = False) -> Obj:
        """Delete ``obj``; the server's answer (the object, still there while finalizers hold it, or a Status).

        ``uid`` and ``resource_version`` are preconditions: the object must still be that one (else 409
        ``Conflict``). ``propagation_policy``: ``Foreground``, ``Background`` or ``Orphan`` for dependents.
        Not passed to ``on_write``: an object that is gone would stay pending.
        """
        return self._call("DELETE", obj, name=True, body=_delete_options(
            propagation_policy, grace_period_seconds, uid, resource_version, dry_run) or None)

    def delete_all_of(self, api_version: str, kind: str, namespace: str = "", *, label_selector: Selector = "",
                      field_selector: str = "", propagation_policy: str = "",
                      grace_period_seconds: int | None = None, dry_run: bool = False) -> None:
        """Delete every object of ``kind`` the selectors match (in ``namespace``, or everywhere when it is "")
        in one collection DELETE, as controller-runtime's ``DeleteAllOf``: no selector deletes them all."""
        path = self.mapper.mapping(api_version, kind).path(namespace or None)
        query = [("labelSelector", _selector(label_selector))] if label_selector else []
        if field_selector:
            query.append(("fieldSelector", field_selector))
        self._send("DELETE", path, query=query, body=_delete_options(
            propagation_policy, grace_period_seconds, "", "", dry_run) or None)

    def create_or_update(self, obj: Obj, mutate: Callable[[Obj], object], *,
                         dry_run: bool = False) -> tuple[Obj, OperationResult]:
        """``mutate`` the live object (or ``obj``, when absent) and write it only if that changed something:
        create, or update (PUT, guarded by the resourceVersion read); the object and what was done."""
        return create_or_update(self, obj, mutate, dry_run=dry_run)

    def create_or_patch(self, obj: Obj, mutate: Callable[[Obj], object], *,
                        dry_run: bool = False) -> tuple[Obj, OperationResult]:
        """As ``create_or_update``, writing a merge patch of the fields ``mutate`` changed."""
        return create_or_patch(self, obj, mutate, dry_run=dry_run)


def _delete_options(policy: str, grace: int | None, uid: str, resource_version: str, dry_run: bool) -> Obj:
    """DeleteOptions as DELETE's body, all of them: kube-apiserver reads the query only when there is no body,
    so ``dryRun`` goes here too."""
    body: Obj = {}
    if policy:
        body["propagationPolicy"] = policy
    if grace is not None:
        body["gracePeriodSeconds"] = grace
    preconditions = {k: v for k, v in (("uid", uid), ("resourceVersion", resource_version)) if v}
    if preconditions:
        body["preconditions"] = preconditions
    if dry_run:
        body["dryRun"] = ["All"]
    return body
