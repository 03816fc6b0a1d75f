"""AdmissionReview v1: the request kube-apiserver sends a webhook, and how it reads the answer.

The request carries what kube's CreateV1AdmissionReview fills in (uid, kind, resource, subResource,
requestKind, requestResource, requestSubResource, name, namespace, operation, userInfo, object,
oldObject, dryRun, options). The answer is checked as VerifyAdmissionResponse checks it, with its
messages; a denial becomes ToStatusErr's status (``admission webhook "NAME" denied the request: ...``,
a code under 400 raised to 400); a JSON patch is applied with evanphx/json-patch v4's failure wording.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from ..apimachinery.errors import ApiError
from ..apimachinery.resources import Resource
from ._webhookclient import CallError

__all__ = ["PatchError", "apply_json_patch", "denial", "review_request", "verify_response"]

_V1 = "admission.k8s.io/v1"
_OPTIONS = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}


def _gvk(res: Resource) -> dict[str, str]:
    return {"group": res.group, "version": res.version, "kind": res.kind}


def _gvr(res: Resource) -> dict[str, str]:
    return {"group": res.group, "version": res.version, "resource": res.plural}


def review_request(*, res: Resource, request_res: Resource, sub: str, name: str, namespace: str, operation: str,
                   user: dict[str, Any], obj: dict[str, Any] | None, old: dict[str, Any] | None, dry_run: bool,
                   options: dict[str, Any] | None, kind: dict[str, str] | None = None) -> dict[str, Any]:
    """A v1 AdmissionReview; ``res`` is the version the webhook is called with, ``request_res`` the request's;
    ``kind`` is a subresource's own kind (policy/v1 Eviction for pods/eviction)."""
    opts = None
    if operation in _OPTIONS:
        opts = {"kind": _OPTIONS[operation], "apiVersion": "meta.k8s.io/v1", **(options or {})}
    request = {
        "uid": str(uuid.uuid4()),
        "kind": kind or _gvk(res), "resource": _gvr(res), "subResource": sub or None,
        "requestKind": kind or _gvk(request_res), "requestResource": _gvr(request_res),
        "requestSubResource": sub or None,
        "name": name or None, "namespace": namespace or None, "operation": operation,
        "userInfo": user, "object": obj, "oldObject": old, "dryRun": dry_run, "options": opts,
    }
    return {"kind": "AdmissionReview", "apiVersion": _V1,
            "request": {k: v for k, v in request.items() if v is not None or k in ("object", "oldObject")}}


def verify_response(uid: str, mutating: bool, review: dict[str, Any]) -> dict[str, Any]:
    """The ``response`` of a v1 review, or CallError worded as kube's VerifyAdmissionResponse."""
    gvk = f"{review.get('apiVersion') or '/'}, Kind={review.get('kind') or ''}"
    if "/" not in gvk.split(",")[0]:
        gvk = "/" + gvk
    response = review.get("response")
    if not isinstance(response, dict):
        raise CallError("received invalid webhook response: webhook response was absent")
    if response.get("uid") != uid:
        raise CallError(f'received invalid webhook response: expected response.uid="{uid}", '
                        f'got "{response.get("uid") or ""}"')
    if (review.get("apiVersion"), review.get("kind")) != (_V1, "AdmissionReview"):
        raise CallError("received invalid webhook response: expected webhook response of admission.k8s.io/v1, "
                        f"Kind=AdmissionReview, got {gvk}")
    patch, patch_type = response.get("patch"), response.get("patchType")
    if mutating:
        if patch and patch_type is None:
            raise CallError("received invalid webhook response: webhook returned response.patch but not "
                            "response.patchType")
        if not patch and patch_type is not None:
            raise CallError("received invalid webhook response: webhook returned response.patchType but not "
                            "response.patch")
        if patch_type is not None and not patch_type:
            raise CallError(f'received invalid webhook response: webhook returned invalid response.patchType of '
                            f'"{patch_type}"')
    else:
        if patch:
            raise CallError("received invalid webhook response: validating webhook may not return response.patch")
        if patch_type is not None:
            raise CallError("received invalid webhook response: validating webhook may not return "
                            "response.patchType")
    return response


def denial(hook_name: str, result: Any) -> ApiError:
    """ToStatusErr: the webhook's status (code at least 400), its message prefixed with who denied it."""
    result = dict(result) if isinstance(result, dict) else {}
    denied_by = f'admission webhook "{hook_name}" denied the request'
    code = result.get("code") if isinstance(result.get("code"), int) else 0
    if result.get("message"):
        message = f"{denied_by}: {result['message']}"
    elif result.get("reason"):
        message = f"{denied_by}: {result['reason']}"
    else:
        message = f"{denied_by} without explanation"
    details = result.get("details") if isinstance(result.get("details"), dict) else None
    return ApiError(max(code, 400), str(result.get("reason") or ""), message, details)


class PatchError(Exception):
    """A JSON patch operation that does not apply, worded as evanphx/json-patch v4 words it."""


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"Unable to parse JSON pointer: {path}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _container(doc: Any, parts: list[str]) -> Any:
    """The object or array holding the last part, or None where the path does not lead."""
    for part in parts[:-1]:
        if isinstance(doc, dict) and part in doc:
            doc = doc[part]
        elif isinstance(doc, list) and part.isdigit() and int(part) < len(doc):
            doc = doc[int(part)]
        else:
            return None
    return doc if isinstance(doc, dict | list) else None


def _index(con: list[Any], key: str, extra: int, path: str, op: str) -> int:
    if key == "-" and extra:
        return len(con)
    if not key.lstrip("-").isdigit() or not -len(con) <= int(key) < len(con) + extra:
        raise PatchError(f"{op} operation does not apply: doc is missing key: {path}: missing value")
    return int(key) % (len(con) + extra) if int(key) < 0 else int(key)


def apply_json_patch(doc: dict[str, Any], ops: Any) -> Any:
    """RFC 6902 on a copy of ``doc``; PatchError names the operation that does not apply."""
    if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
        raise CallError("received undecodable patch in webhook response: json: cannot unmarshal into jsonpatch.Patch")
    out: Any = copy.deepcopy(doc)
    for op in ops:
        kind, path = str(op.get("op") or ""), str(op.get("path") or "")
        parts = _pointer(path)
        if kind == "test":
            con = _container(out, parts) if parts else {"": out}
            key = parts[-1] if parts else ""
            got = con.get(key) if isinstance(con, dict) else (
                con[int(key)] if isinstance(con, list) and key.isdigit() and int(key) < len(con) else None)
            if got != op.get("value"):
                raise PatchError(f"testing value {path} failed: test failed")
            continue
        if kind in ("move", "copy"):
            source = _pointer(str(op.get("from") or ""))
            src = _container(out, source)
            if src is None or (isinstance(src, dict) and source[-1] not in src):
                raise PatchError(f'{kind} operation does not apply: doc is missing from path: '
                                 f'"{op.get("from")}": missing value')
            value = src[source[-1]] if isinstance(src, dict) else src[_index(src, source[-1], 0, path, kind)]
            if kind == "move":
                del src[source[-1] if isinstance(src, dict) else _index(src, source[-1], 0, path, kind)]
            op = {"op": "add", "path": path, "value": copy.deepcopy(value)}
            kind = "add"
        if not parts:
            if kind in ("add", "replace"):
                out = copy.deepcopy(op.get("value"))
                continue
            raise PatchError(f"{kind} operation does not apply: doc is missing path: {path}: missing value")
        con, key = _container(out, parts), parts[-1]
        if con is None:
            quoted = f'"{path}"' if kind in ("add", "remove") else path
            raise PatchError(f"{kind} operation does not apply: doc is missing path: {quoted}: missing value")
        if kind == "add":
            if isinstance(con, dict):
                con[key] = copy.deepcopy(op.get("value"))
            else:
                con.insert(_index(con, key, 1, path, kind), copy.deepcopy(op.get("value")))
        elif kind == "remove":
            if isinstance(con, dict):
                if key not in con:
                    raise PatchError(f"error in remove for path: '{path}': Unable to remove nonexistent key: "
                                     f"{key}: missing value")
                del con[key]
            else:
                del con[_index(con, key, 0, path, kind)]
        elif kind == "replace":
            if isinstance(con, dict):
                con[key] = copy.deepcopy(op.get("value"))  # v4 replaces a missing key: adds it
            else:
                con[_index(con, key, 0, path, kind)] = copy.deepcopy(op.get("value"))
        else:
            raise PatchError(f"Unexpected kind: {kind}")
    return out
