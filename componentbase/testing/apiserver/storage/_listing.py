"""LIST: selectors, ``limit`` and ``continue`` pages; read-only, so apart from the verbs that write."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable
from typing import Any

from ..apimachinery._fieldlabels import field_path
from ..apimachinery.errors import ApiError
from ..apimachinery.resources import Resource
from ..apimachinery.selectors import Predicate, compile_selectors
from ..wire._wire import Reply, Request
from ._convert import view
from ._rv import encode_continue, list_read, snapshot
from .store import Entry, Store, encode

__all__ = ["list_reply", "selectors_of"]


def selectors_of(query: dict[str, str], res: Resource) -> Predicate | None:
    """The request's label and field selectors, the field labels checked as ``res``'s kind registers them."""
    return compile_selectors(query.get("labelSelector"), query.get("fieldSelector"),
                             lambda label: field_path(res.group, res.kind, label, res.selectable_fields))


def list_reply(store: Store, req: Request, pred: Predicate | None) -> Reply:
    """The list body is joined from the entries' cached JSON rather than encoded again.

    A continued page starts by bisecting to its token's key, and a filtered page stops at its ``limit``:
    paging through N objects costs about N, not N per page. As kube's, ``remainingItemCount`` is left out
    when selectors filter the list (the count is unknown without filtering the rest).
    """
    limit = _int_param(req.query, "limit")
    with_ns = req.res.namespaced and not req.namespace
    read = list_read(store, req.query, with_ns, limit)
    with store.cond:
        entries, rv = snapshot(store, read, req.res.bucket, req.namespace or None, with_ns)
    first = 0 if read.start is None else bisect.bisect_right(entries, read.start, key=_key_of(with_ns))
    items = []
    for e in itertools.islice(entries, first, None):
        if req.res.convert is not None:
            e = view(req.res, e)
        if pred is None or pred(e.obj):
            items.append(e)
            if limit and len(items) > limit:
                break  # one more than the page: there is a next page
    list_meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if limit and len(items) > limit:
        last = items[limit - 1].obj["metadata"]
        list_meta["continue"] = encode_continue(rv, (last.get("namespace", ""), last["name"]), with_ns)
        if pred is None:
            list_meta["remainingItemCount"] = len(entries) - first - limit
        items = items[:limit]
    head = {"kind": req.res.kind + "List", "apiVersion": req.res.group_version, "metadata": list_meta}
    body = encode(head)[:-1] + b',"items":[' + b",".join(e.raw for e in items) + b"]}"
    return Reply(200, body)


def _key_of(with_ns: bool) -> Callable[[Entry], tuple[str, str]]:
    """The (namespace, name) a continue token's start is compared with: entries are sorted by it."""
    def key(e: Entry) -> tuple[str, str]:
        meta = e.obj["metadata"]
        return meta.get("namespace", "") if with_ns else "", meta["name"]

    return key


def _int_param(query: dict[str, str], name: str) -> int:
    try:
        return max(0, int(query.get(name) or 0))
    except ValueError:
        raise ApiError.bad_request(f"{name} must be an integer") from None
