"""ValidatingAdmissionPolicies and their bindings (admissionregistration.k8s.io/v1): kube-apiserver's
ValidatingAdmissionPolicy admission plugin, run after the schema's validation and before the validating
webhooks, as kube orders its plugins.

For a CREATE or UPDATE, each binding (in name order) whose policy exists is matched: the policy's
``matchConstraints`` and the binding's ``matchResources`` (resource rules with ``resourceNames`` and
``excludeResourceRules``, namespace and object selectors, ``matchPolicy``, as webhooks match). Its params
are found from the policy's ``paramKind`` and the binding's ``paramRef`` (a name, or a selector, in the
ref's namespace or the request's), and the policy's CEL (``cel._policy``) decides per param. A denial under
``validationActions: [Deny]`` is kube's error (422 Invalid unless the validation names a reason:
``configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: MESSAGE``);
``Warn`` becomes a ``Warning`` header; ``Audit`` is accepted and, with no audit log here, recorded nowhere.
A policy that does not compile, a missing param under ``parameterNotFoundAction: Deny`` or an expression
that raises obeys the policy's ``failurePolicy`` (Fail by default). The CEL runtime is imported only once
a binding exists. DELETE is judged with ``oldObject`` the object and ``object`` null, as kube does. Not
here: CONNECT requests, ``authorizer``, the policy's ``status.typeChecking``.
"""

from __future__ import annotations

from typing import Any

from ..apimachinery.errors import ApiError
from ..apimachinery.resources import Registry, Resource
from ..storage.store import Store
from ..wire._wire import Request
from ._webhookmatch import Hook, labels_match, match
from ._webhooks import warning_header

__all__ = ["PolicyAdmission"]

Obj = dict[str, Any]
_GROUP = "admissionregistration.k8s.io"
_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
_CODES = {"Unauthorized": 401, "Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}
_EVERYTHING = [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*", "*/*"]}]


def _rules(rules: Any, name: str) -> list[Obj]:
    """Resource rules, those naming ``resourceNames`` kept only when the request's object is among them."""
    return [r for r in rules or ()
            if isinstance(r, dict) and (not r.get("resourceNames") or name in r["resourceNames"])]


class PolicyAdmission:
    """Evaluates the stored policies for the writes of ``Rest``; every method runs under the store's lock."""

    def __init__(self, store: Store, registry: Registry) -> None:
        self.store = store
        self.registry = registry

    def admit(self, req: Request | None, res: Resource, obj: Obj, old: Obj | None) -> None:
        """Refuse a policy or binding kube refuses, then a write a binding denies."""
        if res.group == _GROUP and res.kind in _KINDS:
            from ..cel._policy import definition_errors

            errors = definition_errors(res.kind, obj)
            if errors:
                raise ApiError.invalid_fields(res.group, res.kind, str((obj.get("metadata") or {}).get("name", "")),
                                              errors)
        if req is None:
            return
        bindings = self._stored("validatingadmissionpolicybindings")
        if bindings:
            self._dispatch(req, obj, old, bindings, "CREATE" if old is None else "UPDATE")

    def deleting(self, req: Request, old: Obj) -> None:
        """DELETE, as kube evaluates policies for it: ``oldObject`` the object deleted, ``object`` null."""
        bindings = self._stored("validatingadmissionpolicybindings")
        if bindings:
            self._dispatch(req, None, old, bindings, "DELETE")

    def _stored(self, plural: str) -> list[Obj]:
        found = self.registry.lookup(_GROUP, "v1", plural)
        return [e.obj for e in self.store.items(found.bucket, None)] if found is not None else []

    def _dispatch(self, req: Request, obj: Obj | None, old: Obj | None, bindings: list[Obj], operation: str) -> None:
        from ..cel._policy import compiled, evaluate

        meta = (obj if obj is not None else old or {}).get("metadata") or {}
        name = str(meta.get("name") or req.name or meta.get("generateName") or "")
        policies = {str((p.get("metadata") or {}).get("name")): p for p in self._stored("validatingadmissionpolicies")}
        namespace = self._namespace(req)
        for binding in bindings:
            spec = binding.get("spec") or {}
            stored = policies.get(str(spec.get("policyName") or ""))
            if stored is None:
                continue
            pspec = stored.get("spec") or {}
            constraints = pspec.get("matchConstraints") or {}
            if not self._matches(constraints, req, operation, name, obj, old, namespace, _rules(
                    constraints.get("resourceRules"), name)):
                continue
            resources = spec.get("matchResources")
            if isinstance(resources, dict) and not self._matches(
                    resources, req, operation, name, obj, old, namespace,
                    _rules(resources.get("resourceRules"), name) if resources.get("resourceRules") else _EVERYTHING):
                continue
            policy = compiled(stored)
            data = {"object": obj, "oldObject": old, "namespaceObject": namespace, "params": None,
                    "request": self._request(req, operation, name)}
            try:
                params = self._params(pspec.get("paramKind"), spec.get("paramRef"), req)
            except ValueError as err:
                self._failed(req, name, stored, binding, f"failed to configure binding: {err}", policy.fails_closed)
                continue
            if policy.errors:
                self._failed(req, name, stored, binding, f"failed to configure policy: {policy.errors[0][2]}",
                             policy.fails_closed)
                continue
            for param in params:
                decisions, _ = evaluate(policy, dict(data, params=param))
                for decision in decisions:
                    if decision.error and not policy.fails_closed:
                        continue
                    self._decide(req, name, stored, binding, decision.message, decision.reason)

    def _matches(self, spec: Obj, req: Request, operation: str, name: str, obj: Obj | None, old: Obj | None,
                 namespace: Obj | None, rules: list[Obj]) -> bool:
        labels = ((namespace or {}).get("metadata") or {}).get("labels") or {} if namespace is not None else None
        hook = Hook("", 0, {"rules": rules, "namespaceSelector": spec.get("namespaceSelector"),
                            "objectSelector": spec.get("objectSelector"), "matchPolicy": spec.get("matchPolicy")},
                    False)
        if match(hook, operation, req.res, req.sub, req.namespace, self.registry, obj, old, labels) is None:
            return False
        excluded = _rules(spec.get("excludeResourceRules"), name)
        return not excluded or match(Hook("", 0, {"rules": excluded}, False), operation, req.res, req.sub,
                                     req.namespace, self.registry, obj, old, None) is None

    def _namespace(self, req: Request) -> Obj | None:
        if not (req.res.namespaced and req.namespace):
            return None
        entry = self.store.get(self.registry.must("", "v1", "namespaces").bucket, "", req.namespace)
        return entry.obj if entry is not None else None

    @staticmethod
    def _request(req: Request, operation: str, name: str) -> Obj:
        """The admission request CEL sees as ``request`` (kube's CreateAdmissionRequest)."""
        res = req.res
        kind = {"group": res.group, "version": res.version, "kind": res.kind}
        resource = {"group": res.group, "version": res.version, "resource": res.plural}
        user = req.user.to_user_info() if req.user is not None else {"username": "", "groups": []}
        return {"kind": kind, "resource": resource, "subResource": req.sub, "requestKind": kind,
                "requestResource": resource, "requestSubResource": req.sub, "name": name,
                "namespace": req.namespace, "operation": operation, "userInfo": dict(user, extra={}),
                "dryRun": bool(req.options.dry_run)}

    def _params(self, kind: Any, ref: Any, req: Request) -> list[Any]:
        """The params one binding evaluates its policy with: [None] without a paramKind."""
        if not isinstance(kind, dict):
            return [None]
        if not isinstance(ref, dict):
            raise ValueError(f"paramKind kind `{kind.get('kind')}` is defined but paramRef is not set")
        group, _, version = str(kind.get("apiVersion") or "").rpartition("/")
        res = next((r for r in self.registry.resources() if r.group == group and r.version == version
                    and r.kind == kind.get("kind")), None)
        if res is None:
            raise ValueError(f"failed to find resource referenced by paramKind: '{kind.get('apiVersion')}, "
                             f"Kind={kind.get('kind')}'")
        namespace = str(ref.get("namespace") or (req.namespace if res.namespaced else ""))
        if ref.get("name"):
            entry = self.store.get(res.bucket, namespace, str(ref["name"]))
            found = [entry.obj] if entry is not None else []
        else:
            found = [e.obj for e in self.store.items(res.bucket, namespace or None)
                     if labels_match(ref.get("selector") or {}, (e.obj.get("metadata") or {}).get("labels") or {})]
        if not found and ref.get("parameterNotFoundAction") == "Deny":
            raise ValueError("no params found for policy binding with `Deny` parameterNotFoundAction")
        return found

    def _failed(self, req: Request, name: str, policy: Obj, binding: Obj, message: str, fails_closed: bool) -> None:
        if fails_closed:
            self._decide(req, name, policy, binding, message, "Invalid", deny_only=True)

    def _decide(self, req: Request, name: str, policy: Obj, binding: Obj, message: str, reason: str,
                deny_only: bool = False) -> None:
        """Apply the binding's validationActions to a failed validation."""
        pname, bname = (str((o.get("metadata") or {}).get("name")) for o in (policy, binding))
        actions = ["Deny"] if deny_only else (binding.get("spec") or {}).get("validationActions") or ()
        if "Warn" in actions:
            req.warnings.append(f"Validation failed for ValidatingAdmissionPolicy '{pname}' with binding '{bname}': "
                                f"{message}")
        if "Deny" not in actions:
            return
        cause = f"ValidatingAdmissionPolicy '{pname}' with binding '{bname}' denied request: {message}"
        res = req.res
        resource = f"{res.plural}.{res.group}" if res.group else res.plural
        details = {"name": name, "group": res.group, "kind": res.plural, "causes": [{"message": cause}]}
        err = ApiError(_CODES.get(reason, 422), reason, f'{resource} "{name}" is forbidden: {cause}',
                       {k: v for k, v in details.items() if v})  # Go's omitempty
        if req.warnings:
            err.headers = dict(err.headers, Warning=warning_header(req.warnings))
        raise err
