"""Subresources with bodies of their own: scale (autoscaling/v1 Scale), pods/binding, pods/eviction and
serviceaccounts/token; and which part of an object each writable subresource owns."""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import Callable
from typing import Any, Protocol

from ..apimachinery.errors import ApiError
from ..apimachinery.resources import Registry, Resource
from ..apimachinery.selectors import compile_selectors, selector_string
from ..storage.store import Entry, Store
from ..wire._wire import Request, now_rfc3339

__all__ = ["binding_conflict", "check_disruption_budgets", "merge_subresource", "scale_of", "token_request",
           "with_replicas"]


def _at(obj: Any, path: str) -> Any:
    for part in [p for p in path.split(".") if p]:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def scale_of(res: Resource, obj: dict[str, Any]) -> dict[str, Any]:
    """The autoscaling/v1 Scale view of ``obj``."""
    assert res.scale is not None
    meta = obj.get("metadata") or {}
    scale_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                  if k in meta}
    replicas = _at(obj, res.scale.status_replicas)
    status: dict[str, Any] = {"replicas": replicas if isinstance(replicas, int) else 0}
    selector = selector_string(_at(obj, res.scale.label_selector))
    if selector:
        status["selector"] = selector
    spec_replicas = _at(obj, res.scale.spec_replicas)
    spec = {"replicas": spec_replicas} if isinstance(spec_replicas, int) else {}
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta, "spec": spec,
            "status": status}


def with_replicas(res: Resource, obj: dict[str, Any], scale: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with the replicas a Scale body asks for written where ``res`` keeps them."""
    assert res.scale is not None
    replicas = (scale.get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        why = f"Invalid value: {json.dumps(replicas)}: must be greater than or equal to 0"
        raise ApiError.invalid_fields("autoscaling", "Scale", (obj.get("metadata") or {}).get("name", ""),
                                      [("FieldValueInvalid", "spec.replicas", why)])
    wanted = (scale.get("metadata") or {}).get("resourceVersion")
    if wanted and wanted != (obj.get("metadata") or {}).get("resourceVersion"):
        raise ApiError.modified(res, (obj.get("metadata") or {}).get("name", ""))
    out = dict(obj)
    parts = [p for p in res.scale.spec_replicas.split(".") if p]
    node = out
    for part in parts[:-1]:
        node[part] = dict(node.get(part) or {})
        node = node[part]
    node[parts[-1]] = replicas
    return out


def merge_subresource(res: Resource, old: dict[str, Any], new: dict[str, Any], sub: str) -> dict[str, Any]:
    """What a write through ``sub`` may change: status its status, approval its conditions, finalize the
    namespace's finalizers; a write of the main resource keeps the old status."""
    if sub == "status":  # and the managedFields a status apply computed
        merged = _with_status(old, new)
        if isinstance(new.get("metadata"), dict) and "managedFields" in new["metadata"]:
            merged["metadata"] = dict(merged.get("metadata") or {}, managedFields=new["metadata"]["managedFields"])
        return merged
    if sub == "approval":
        merged = dict(old)
        merged["status"] = dict(old.get("status") or {}, conditions=(new.get("status") or {}).get("conditions"))
        return merged
    if sub == "finalize":
        merged = dict(old)
        merged["spec"] = dict(old.get("spec") or {}, finalizers=(new.get("spec") or {}).get("finalizers") or [])
        return merged
    return _with_status(new, old) if res.has_status else new


def _with_status(obj: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with the status of ``source`` (none when it has none)."""
    merged = dict(obj)
    if "status" in source:
        merged["status"] = source["status"]
    else:
        merged.pop("status", None)
    return merged


def binding_conflict(name: str, why: str) -> ApiError:
    message = f'Operation cannot be fulfilled on pods/binding "{name}": {why}'
    return ApiError(409, "Conflict", message, {"name": name, "kind": "pods/binding"})


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).rstrip(b"=").decode()


def token_request(sa: dict[str, Any], body: dict[str, Any], issuer: str,
                  sign: Callable[[str], str] | None = None) -> dict[str, Any]:
    """A TokenRequest answered as kube-apiserver answers it: a JWT for the service account that expires.

    The token is shaped as kube's (claims and all); ``sign`` signs it (HS256) when the server
    authenticates with such tokens, and without it the token is signed by nobody.
    """
    spec = dict(body.get("spec") or {})
    expiry = spec.get("expirationSeconds")
    expiry = expiry if isinstance(expiry, int) and expiry >= 600 else 3600
    spec["expirationSeconds"] = expiry
    spec["audiences"] = spec.get("audiences") or [issuer]  # an empty list too, as kube-apiserver defaults it
    meta = sa.get("metadata") or {}
    now = int(time.time())
    claims = {"aud": spec["audiences"], "exp": now + expiry, "iat": now, "iss": issuer, "nbf": now,
              "sub": f"system:serviceaccount:{meta.get('namespace')}:{meta.get('name')}",
              "kubernetes.io": {"namespace": meta.get("namespace"),
                                "serviceaccount": {"name": meta.get("name"), "uid": meta.get("uid")}}}
    unsigned = f"{_b64({'alg': 'HS256' if sign else 'none', 'kid': 'loopback'})}.{_b64(claims)}"
    token = f"{unsigned}.{sign(unsigned) if sign else secrets.token_urlsafe(32)}"
    return {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace"),
                         "creationTimestamp": now_rfc3339()},
            "spec": spec, "status": {"token": token, "expirationTimestamp": now_rfc3339(expiry)}}


class _Writer(Protocol):
    """What an eviction needs of the REST layer (``rest.Rest``, which imports this module)."""

    registry: Registry
    store: Store

    def _write(self, res: Resource, namespace: str, obj: dict[str, Any], *, dry: bool) -> Entry: ...


def check_disruption_budgets(rest: _Writer, req: Request, pod: dict[str, Any]) -> None:
    """Refuse an eviction that a PodDisruptionBudget forbids; otherwise count it against the budget."""
    pdbs = rest.registry.lookup("policy", "v1", "poddisruptionbudgets")
    if pdbs is None:
        return
    labels = (pod.get("metadata") or {}).get("labels") or {}
    for entry in rest.store.items(pdbs.bucket, req.namespace):
        selector = selector_string((entry.obj.get("spec") or {}).get("selector"))
        match = compile_selectors(selector, None)
        if not selector or match is None or not match({"metadata": {"labels": labels}}):
            continue
        status = entry.obj.get("status") or {}
        allowed = status.get("disruptionsAllowed") or 0
        if allowed <= 0:
            name = entry.obj["metadata"]["name"]
            why = (f"The disruption budget {name} needs {status.get('desiredHealthy', 0)} healthy pods "
                   f"and has {status.get('currentHealthy', 0)} currently")
            raise ApiError(429, "TooManyRequests",
                           "Cannot evict pod as it would violate the pod's disruption budget.",
                           {"causes": [{"reason": "DisruptionBudget", "message": why}]})
        if not req.options.dry_run:
            obj = dict(entry.obj)
            disrupted = dict(status.get("disruptedPods") or {}, **{req.name: now_rfc3339()})
            obj["status"] = dict(status, disruptionsAllowed=allowed - 1, disruptedPods=disrupted)
            obj["metadata"] = dict(obj["metadata"])
            rest._write(pdbs, req.namespace, obj, dry=False)
