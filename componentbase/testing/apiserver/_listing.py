"""LIST: selectors, ``limit`` and ``continue`` pages; read-only, so apart from the verbs that write."""

from __future__ import annotations

from typing import Any

from ._convert import view
from ._rv import encode_continue, list_read, snapshot
from ._wire import Reply, Request
from .errors import ApiError
from .selectors import Predicate, compile_selectors
from .store import Store, encode

__all__ = ["list_reply", "selectors_of"]


def selectors_of(query: dict[str, str]) -> Predicate | None:
    return compile_selectors(query.get("labelSelector"), query.get("fieldSelector"))


def list_reply(store: Store, req: Request, pred: Predicate | None) -> Reply:
    """The list body is joined from the entries' cached JSON rather than encoded again."""
    limit = _int_param(req.query, "limit")
    with_ns = req.res.namespaced and not req.namespace
    read = list_read(store, req.query, with_ns, limit)
    with store.cond:
        entries, rv = snapshot(store, read, req.res.bucket, req.namespace or None, with_ns)
    if req.res.convert is not None:
        entries = [view(req.res, e) for e in entries]
    items = []
    for e in entries:
        meta = e.obj["metadata"]
        if read.start is not None and (meta.get("namespace", "") if with_ns else "", meta["name"]) <= read.start:
            continue
        if pred is None or pred(e.obj):
            items.append(e)
    list_meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if limit and len(items) > limit:
        last = items[limit - 1].obj["metadata"]
        list_meta["continue"] = encode_continue(rv, (last.get("namespace", ""), last["name"]), with_ns)
        list_meta["remainingItemCount"] = len(items) - limit
        items = items[:limit]
    head = {"kind": req.res.kind + "List", "apiVersion": req.res.group_version, "metadata": list_meta}
    body = encode(head)[:-1] + b',"items":[' + b",".join(e.raw for e in items) + b"]}"
    return Reply(200, body)


def _int_param(query: dict[str, str], name: str) -> int:
    try:
        return max(0, int(query.get(name) or 0))
    except ValueError:
        raise ApiError.bad_request(f"{name} must be an integer") from None
