"""The pod and ServiceAccount verbs with bodies of their own: pods/binding (the scheduler's bind), pods/eviction
(``kubectl drain``) and serviceaccounts/token, on the generic registry's writes (``rest.Rest``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from ..apimachinery.errors import ApiError, status_body
from ..storage._convert import view
from ..storage.store import Entry, encode
from ..wire._wire import Reply, Request, decode_object, now_rfc3339
from ._deletion import Deleter, refuse_in_terminating
from ._subresources import binding_conflict, check_disruption_budgets, token_request

__all__ = ["PodRest", "bind", "evict", "token"]


class PodRest(Deleter, Protocol):
    """What these verbs need of the REST layer (``rest.Rest``, which imports this module)."""

    issuer: str
    sign_token: Callable[[str], str] | None

    def _current(self, req: Request) -> Entry: ...

    def _delete(self, req: Request, namespace: str, cur: Entry) -> Entry: ...


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def bind(rest: PodRest, req: Request) -> Reply:
    """Pod binding: set spec.nodeName once, as the scheduler's POST .../binding does."""
    binding = decode_object(req.body)
    name = req.name or _meta(binding).get("name") or ""
    node = (binding.get("target") or {}).get("name")
    pods = rest.registry.must("", "v1", "pods")
    if not node:
        raise ApiError.invalid(pods, name, "target.name", "Required value")
    with rest.store.cond:
        refuse_in_terminating(rest, pods, req.namespace, name)
        cur = rest.store.get(pods.bucket, req.namespace, name)
        if cur is None:
            raise ApiError.not_found(pods, name)
        spec = cur.obj.get("spec") or {}
        meta = _meta(cur.obj)
        if spec.get("nodeName"):
            why = f'pod {name} is already assigned to node "{spec["nodeName"]}"'
            raise binding_conflict(name, why)
        if meta.get("deletionTimestamp"):
            why = f"pod {name} is being deleted, cannot be assigned to a host"
            raise binding_conflict(name, why)
        obj = dict(cur.obj)
        obj["spec"] = dict(spec, nodeName=node)
        status = dict(cur.obj.get("status") or {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                           "lastTransitionTime": now_rfc3339()})
        status["conditions"] = conditions
        obj["status"] = status
        new_meta = dict(meta)
        extra = _meta(binding).get("annotations")
        if isinstance(extra, dict):
            new_meta["annotations"] = dict(meta.get("annotations") or {}, **extra)
        obj["metadata"] = new_meta
        rest._write(pods, req.namespace, obj, dry=req.options.dry_run)
    return Reply(201, encode(status_body(201, "", "")))

def evict(rest: PodRest, req: Request) -> Reply:
    """pods/eviction: the graceful delete ``kubectl drain`` asks for, refused (429) while a
    PodDisruptionBudget selecting the pod allows no disruption, as kube's eviction REST does."""
    eviction = decode_object(req.body)
    options = eviction.get("deleteOptions")
    grace = options.get("gracePeriodSeconds") if isinstance(options, dict) else None
    with rest.store.cond:
        cur = rest._current(req)
        check_disruption_budgets(rest, req, cur.obj)
        delete = Request("delete", rest.registry.must("", "v1", "pods"), req.namespace, req.name,
                         options=replace(req.options, grace=grace if isinstance(grace, int) else None))
        rest._delete(delete, req.namespace, cur)
    return Reply(201, encode(status_body(201, "", "")))

def token(rest: PodRest, req: Request) -> Reply:
    """serviceaccounts/token: a TokenRequest for an existing service account."""
    body = decode_object(req.body)
    sa = view(req.res, rest._current(req)).obj
    return Reply(201, encode(token_request(sa, body, rest.issuer, rest.sign_token)))
