"""LIST: selectors, ``limit`` and ``continue`` pages; read-only, so apart from the verbs that write."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from ._convert import view
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
    start: tuple[str, str] | None = None
    with store.cond:
        entries = store.items(req.res.bucket, req.namespace or None)
        rv = store.rv
    if req.query.get("continue"):
        rv, start = _decode_continue(req.query["continue"])
    if req.res.convert is not None:
        entries = [view(req.res, e) for e in entries]
    items = []
    for e in entries:
        meta = e.obj["metadata"]
        if start is not None and (meta.get("namespace", ""), meta["name"]) <= start:
            continue
        if pred is None or pred(e.obj):
            items.append(e)
    list_meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if limit and len(items) > limit:
        last = items[limit - 1].obj["metadata"]
        list_meta["continue"] = _encode_continue(rv, (last.get("namespace", ""), last["name"]))
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


def _encode_continue(rv: int, key: tuple[str, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps([rv, key[0], key[1]]).encode()).decode()


def _decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        rv, ns, name = json.loads(base64.urlsafe_b64decode(token.encode()))
        return int(rv), (str(ns), str(name))
    except (ValueError, TypeError, binascii.Error):
        raise ApiError.bad_request("continue key is not valid") from None
