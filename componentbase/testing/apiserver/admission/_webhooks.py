"""Admission webhooks: the MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins of kube-apiserver.

``Rest._admit`` calls ``mutate`` before the schema's defaulting and validation and ``validate`` after
them, so a write goes: mutating webhooks, then defaulting and validation, then validating webhooks, then
storage; ``Rest._delete`` calls ``deleting`` (DELETE: ``oldObject`` only). Mutating webhooks run one after
the other (kube's dispatcher), each seeing the last one's patch, and those with ``reinvocationPolicy:
IfNeeded`` run once more when a later webhook changed the object; validating webhooks run in parallel.

A failure to call a webhook (unreachable, timed out, a malformed review) is kube's 500 ``Internal error
occurred: failed calling webhook "NAME": ...`` under ``failurePolicy: Fail`` (the default) and is logged
and passed over under ``Ignore``; a denial, a patch that does not apply, and a dry run reaching a webhook
with side effects are refused whatever the policy, as kube's are. Warnings become ``Warning`` headers.

The verbs hold the store's lock; while a webhook is called the lock is given up (``Condition.wait``), so a
webhook may call this server. The write then goes on only if the object is still as it was read: a
concurrent change is kube's 409 (kube retries an update without a resourceVersion; here the client does).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from ..apimachinery.errors import ApiError
from ..apimachinery.resources import SUBRESOURCES, Registry, Resource
from ..storage._convert import to_storage
from ..storage.store import Store
from ..wire._wire import Request, decode_object
from ._admissionreview import PatchError, apply_json_patch, denial, review_request, verify_response
from ._matchconditions import conditions_match
from ._webhookclient import CallError, WebhookClient
from ._webhookmatch import Hook, Invocation, hooks_of, match

__all__ = ["WebhookAdmission", "warning_header", "with_warnings"]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")
Obj = dict[str, Any]


def _internal(message: str) -> ApiError:
    """apierrors.NewInternalError."""
    return ApiError(500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]})


def _between(res: Resource, target: Resource, obj: Obj) -> Obj:
    """``obj`` (in ``res``'s version) in ``target``'s version; both share one stored form."""
    if res == target:
        return obj
    stored = to_storage(res, obj)
    return (target.convert.from_storage(stored) if target.convert is not None else None) or stored


class WebhookAdmission:
    """Calls the stored webhook configurations' webhooks for the writes of ``Rest``."""

    def __init__(self, store: Store, registry: Registry, client: WebhookClient | None = None) -> None:
        self.store = store
        self.registry = registry
        self.client = client or WebhookClient()

    # --- the three hook points ------------------------------------------------------------------

    def mutate(self, req: Request | None, obj: Obj, old: Obj | None) -> Obj:
        """``obj`` as the matching mutating webhooks leave it (a CREATE when ``old`` is None)."""
        hooks = hooks_of(self.store, self.registry, True) if req is not None else []
        if req is None or not hooks:
            return obj
        operation = "CREATE" if old is None else "UPDATE"
        first = obj
        invoked: set[int] = set()
        reinvoke: set[int] = set()
        changed_any = False
        for again in (False, True):
            if again and not (changed_any and reinvoke):
                break
            for hook in hooks:
                if again and hook.index not in reinvoke:
                    continue
                inv = self._match(hook, req, operation, obj, old)
                if inv is None:
                    continue
                new = self._mutating_call(inv, req, operation, obj, old)
                if new is not None and new != obj:
                    obj, changed_any = new, True
                    reinvoke |= invoked
                if hook.reinvoked:
                    invoked.add(hook.index)
        if not changed_any:
            return obj
        return self._as_created(req, first, obj) if old is None else _as_updated(req.res, old, obj)

    def _as_created(self, req: Request, before: Obj, obj: Obj) -> Obj:
        """What kube's BeforeCreate makes of a mutated new object: the uid and creationTimestamp it assigns (a
        webhook's are overwritten), the request's namespace (another is its 400), and a new name still free."""
        meta, was = dict(obj.get("metadata") or {}), before.get("metadata") or {}
        if meta.get("namespace", "") != was.get("namespace", ""):
            raise ApiError.bad_request("the namespace of the provided object does not match the namespace sent on "
                                       "the request")
        for key in ("uid", "creationTimestamp"):
            if key in was:
                meta[key] = was[key]
        if meta.get("name") != was.get("name") and self._state(req, str(meta.get("name") or "")) is not None:
            raise ApiError.already_exists(req.res, str(meta.get("name")))
        return dict(obj, metadata=meta)

    def validate(self, req: Request | None, obj: Obj, old: Obj | None) -> Obj:
        """Run the matching validating webhooks (in parallel); ``obj`` when all of them allow it."""
        if req is not None:
            self._validating(req, "CREATE" if old is None else "UPDATE", obj, old)
        return obj

    def deleting(self, req: Request, namespace: str, old: Obj,
                 policies: Callable[[Request, Obj], None] | None = None) -> None:
        """DELETE: the mutating webhooks (which may not patch), then ``policies`` (the ValidatingAdmissionPolicy
        plugin's turn in kube's order), then the validating webhooks see ``oldObject``; each object of a
        DELETECOLLECTION is asked about on its own, by its name and namespace, as kube does."""
        if req.verb not in ("delete", "deletecollection") or req.user is None:
            return  # the server's own deletes (an eviction's) are not admitted, as kube's eviction deletes
        name = _name(None, old)
        if (req.namespace, req.name) != (namespace, name):
            req = replace(req, namespace=namespace, name=name)  # shares ``warnings``
        for hook in hooks_of(self.store, self.registry, True):
            inv = self._match(hook, req, "DELETE", None, old)
            if inv is not None:
                self._mutating_call(inv, req, "DELETE", None, old)
        if policies is not None:
            policies(req, old)
        self._validating(req, "DELETE", None, old)

    def create_subresource(self, req: Request) -> bytes:
        """A subresource's CREATE (pods/eviction, pods/binding, serviceaccounts/token, bindings): the webhooks see
        its body as the object, with the subresource's kind; the body as the mutating webhooks leave it."""
        with self.store.cond:  # as the verbs call mutate and validate: the calls give it up
            if not req.body or not any(hooks_of(self.store, self.registry, m) for m in (True, False)):
                return req.body
            kind = _subresource_kind(req) or {"group": req.res.group, "version": req.res.version, "kind": req.res.kind}
            body = {k: v for k, v in decode_object(req.body).items() if k not in ("kind", "apiVersion")}
            version = f"{kind['group']}/{kind['version']}".lstrip("/")
            obj = self.mutate(req, {"kind": kind["kind"], "apiVersion": version, **body}, None)  # as kube decoded it
            self.validate(req, obj, None)
        return json.dumps(obj).encode()

    # --- matching and calling ------------------------------------------------------------------

    def _match(self, hook: Hook, req: Request, operation: str, obj: Obj | None, old: Obj | None) -> Invocation | None:
        labels = None
        if req.res.namespaced and req.namespace:
            ns = self.store.get(self.registry.must("", "v1", "namespaces").bucket, "", req.namespace)
            labels = ((ns.obj.get("metadata") or {}).get("labels") or {}) if ns is not None else {}
        inv = match(hook, operation, req.res, req.sub, req.namespace, self.registry, obj, old, labels)
        if inv is None or not hook.spec.get("matchConditions"):
            return inv
        request = self._review_body(inv, req, operation, obj, old)["request"]
        return inv if conditions_match(hook, req.res, req.name or _name(obj, old), request) else None

    def _validating(self, req: Request, operation: str, obj: Obj | None, old: Obj | None) -> None:
        invocations = [inv for hook in hooks_of(self.store, self.registry, False)
                       if (inv := self._match(hook, req, operation, obj, old)) is not None]
        if not invocations:
            return
        name = _name(obj, old) or req.name
        before = self._state(req, name)
        results = self._unlocked([partial(self._try, inv, req, operation, obj, old) for inv in invocations])
        self._check_unchanged(req, name, before)
        errors = [r for r in results if isinstance(r, ApiError)]
        if errors:
            raise self._with_warnings(req, errors[0])

    def _try(self, inv: Invocation, req: Request, operation: str, obj: Obj | None, old: Obj | None) -> Any:
        try:
            return self._review(inv, req, operation, obj, old)
        except ApiError as err:
            return err

    def _mutating_call(self, inv: Invocation, req: Request, operation: str, obj: Obj | None,
                       old: Obj | None) -> Obj | None:
        """The object as this webhook's patch leaves it (None when it sent none)."""
        target = _name(obj, old) or req.name
        before = self._state(req, target)
        response = self._unlocked([partial(self._review, inv, req, operation, obj, old)])[0]
        self._check_unchanged(req, target, before)
        if isinstance(response, ApiError):
            raise self._with_warnings(req, response)
        if response is None or not response.get("patch"):
            return None
        name = inv.hook.name
        try:
            ops = json.loads(base64.b64decode(str(response["patch"]), validate=True))
        except (binascii.Error, ValueError, UnicodeDecodeError) as err:
            self._raise_unless_ignored(inv.hook, f"received undecodable patch in webhook response: {err}", req)
            return None
        if not ops:
            return None
        if obj is None:
            raise _internal(f'admission webhook "{name}" attempted to modify the object, which is not '
                            "supported for this operation")
        try:
            patched = apply_json_patch(_between(req.res, inv.res, obj), ops)
        except CallError as err:
            self._raise_unless_ignored(inv.hook, str(err), req)
            return None
        except PatchError as err:
            raise self._with_warnings(req, _internal(str(err))) from None
        if not isinstance(patched, dict):
            raise _internal("the patched object is not a JSON object")
        return _between(inv.res, req.res, patched)

    def _review(self, inv: Invocation, req: Request, operation: str, obj: Obj | None,
                old: Obj | None) -> dict[str, Any] | ApiError | None:
        """Ask the webhook; its response, its denial (an ApiError), or None when its failure is ignored."""
        hook, dry = inv.hook, req.options.dry_run
        if dry and hook.spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
            if hook.spec.get("sideEffects") is None:
                return self._failed(hook, "Webhook SideEffects is nil")
            return ApiError.bad_request(f'admission webhook "{hook.name}" does not support dry run')
        versions = [v for v in hook.spec.get("admissionReviewVersions") or () if v in ("v1", "v1beta1")]
        if not versions:
            return self._failed(hook, "could not create admission objects: webhook does not accept known "
                                "AdmissionReview versions (v1, v1beta1)")
        review = self._review_body(inv, req, operation, obj, old)
        if versions[0] == "v1beta1":
            review["apiVersion"] = "admission.k8s.io/v1beta1"
        uid = review["request"]["uid"]
        try:
            answer = self.client.post(hook.spec.get("clientConfig"), review, hook.timeout)
        except CallError as err:
            return self._failed(hook, f"failed to call webhook: {err}")
        try:
            response = verify_response(uid, hook.mutating, _as_v1(answer, uid) if versions[0] == "v1beta1" else answer)
        except CallError as err:
            return self._failed(hook, str(err))
        response = dict(response)
        for warning in response.get("warnings") or ():
            req.warnings.append(str(warning))
        if not response.get("allowed"):
            return denial(hook.name, response.get("status"))
        return response

    @staticmethod
    def _review_body(inv: Invocation, req: Request, operation: str, obj: Obj | None, old: Obj | None) -> Obj:
        """The AdmissionReview sent to ``inv``'s webhook, its objects in the webhook's version."""
        user = req.user.to_user_info() if req.user is not None else {"username": "", "groups": []}
        return review_request(
            res=inv.res, request_res=req.res, sub=req.sub, name=req.name or _name(obj, old),
            namespace=req.namespace or (req.name if req.res.plural == "namespaces" and not req.res.group else ""),
            operation=operation, user=dict(user, extra={}), dry_run=req.options.dry_run,
            options=_options(req, operation), kind=_subresource_kind(req),
            obj=_between(req.res, inv.res, obj) if obj is not None else None,
            old=_between(req.res, inv.res, old) if old is not None else None)

    @staticmethod
    def _failed(hook: Hook, reason: str) -> ApiError | None:
        """ErrCallingWebhook: passed over (logged) under Ignore, else the request's 500."""
        message = f'failed calling webhook "{hook.name}": {reason}'
        if hook.ignores_failures:
            _log.warning("Failed calling webhook, failing open %s: %s", hook.name, message)
            return None
        _log.warning("Failed calling webhook, failing closed %s: %s", hook.name, message)
        return _internal(message)

    def _raise_unless_ignored(self, hook: Hook, reason: str, req: Request) -> None:
        err = self._failed(hook, reason)
        if err is not None:
            raise self._with_warnings(req, err)

    def _with_warnings(self, req: Request, err: ApiError) -> ApiError:
        if req.warnings:
            err.headers = dict(err.headers, Warning=warning_header(req.warnings))
        return err

    # --- the store's lock ----------------------------------------------------------------------

    def _unlocked(self, calls: list[Callable[[], _T]]) -> list[_T | ApiError]:
        """Run ``calls`` on threads of their own with the store's lock given up (the caller holds it), as
        kube calls webhooks outside its storage. Daemon threads: a hung webhook never holds up an exit."""
        results: dict[int, _T | ApiError] = {}

        def run(i: int, call: Callable[[], _T]) -> None:
            try:
                out: _T | ApiError = call()
            except Exception as err:  # a bug here must answer the request, not hang it
                out = _internal(f"webhook call failed: {err!r}")
            with self.store.cond:
                results[i] = out
                self.store.cond.notify_all()

        for i, call in enumerate(calls):
            threading.Thread(target=run, args=(i, call), name="loopback-webhook", daemon=True).start()
        self.store.cond.wait_for(lambda: len(results) == len(calls))
        return [results[i] for i in range(len(calls))]

    def _state(self, req: Request, name: str) -> str | None:
        """The stored object's resourceVersion, None when there is none."""
        entry = self.store.get(req.res.bucket, req.namespace, name)
        return (entry.obj.get("metadata") or {}).get("resourceVersion") if entry is not None else None

    def _check_unchanged(self, req: Request, name: str, before: str | None) -> None:
        """After the lock was given up: the object must be as it was (absent, for a create)."""
        if self._state(req, name) == before or (req.verb == "create" and req.sub):
            return  # a subresource's create (an eviction) writes no object of its own
        if before is None:
            raise ApiError.already_exists(req.res, name)
        raise ApiError.modified(req.res, name)


def _as_updated(res: Resource, old: Obj, obj: Obj) -> Obj:
    """What kube's BeforeUpdate makes of a mutated object: the old creationTimestamp (and uid, if a webhook
    dropped it); a changed name, namespace or uid is ValidateObjectMetaUpdate's 422 'field is immutable'."""
    meta, was = dict(obj.get("metadata") or {}), old.get("metadata") or {}
    for key in ("creationTimestamp", *(() if meta.get("uid") else ("uid",))):
        if key in was:
            meta[key] = was[key]
    causes = [("FieldValueInvalid", f"metadata.{key}", f"Invalid value: {json.dumps(meta.get(key) or '')}: field is "
               "immutable") for key in ("name", "namespace", "uid") if meta.get(key) != was.get(key)]
    if causes:
        raise ApiError.invalid_fields(res.group, res.kind, str(meta.get("name") or ""), causes)
    return dict(obj, metadata=meta)


def _name(obj: Obj | None, old: Obj | None) -> str:
    for o in (obj, old):
        if o is not None and (name := (o.get("metadata") or {}).get("name")):
            return str(name)
    return ""


def _subresource_kind(req: Request) -> dict[str, str] | None:
    """The kind of a subresource's body (policy/v1 Eviction), for a create through it."""
    group, version, kind, _ = SUBRESOURCES.get(req.sub, ("", "", "", ()))
    return {"group": group, "version": version, "kind": kind} if req.verb == "create" and kind else None


def _options(req: Request, operation: str) -> dict[str, Any]:
    """The operation's options as the request gave them (CreateOptions, UpdateOptions, DeleteOptions)."""
    out: dict[str, Any] = {}
    if req.options.dry_run:
        out["dryRun"] = ["All"]
    if operation != "DELETE" and req.query.get("fieldManager"):
        out["fieldManager"] = req.query["fieldManager"]
    if operation == "DELETE":
        if req.options.grace is not None:
            out["gracePeriodSeconds"] = req.options.grace
        if req.options.propagation:
            out["propagationPolicy"] = req.options.propagation
        if req.options.preconditions:
            out["preconditions"] = req.options.preconditions
    return out


def _as_v1(answer: dict[str, Any], uid: str) -> dict[str, Any]:
    """A v1beta1 answer read as v1: kube checked neither its uid nor its kind, and took its patch as JSONPatch."""
    response = answer.get("response")
    if not isinstance(response, dict):
        return answer
    fixed = dict(response, uid=uid)
    if fixed.get("patch"):
        fixed["patchType"] = "JSONPatch"
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": fixed}


def with_warnings(headers: dict[str, str], warnings: list[str]) -> dict[str, str]:
    """``headers`` (a field validation's Warning, if any) with the webhooks' warnings added."""
    if not warnings:
        return headers
    return dict(headers, Warning=", ".join(w for w in (headers.get("Warning"), warning_header(warnings)) if w))


def warning_header(warnings: list[str]) -> str:
    """kube's ``Warning: 299 - "text"``, several in one header, comma-separated."""
    return ", ".join("299 - " + json.dumps(w, ensure_ascii=False) for w in dict.fromkeys(warnings))
