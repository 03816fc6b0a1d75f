"""RBAC authorization from stored Roles, ClusterRoles and their bindings, as kube's RBAC authorizer decides.

A request is allowed when a ClusterRoleBinding, or a RoleBinding in the request's namespace, binds a
role to the user (by name, group or service account) and one of the role's rules matches its verb,
API group, resource (``pods``, ``pods/status``, ``*``, ``*/status``), resource name or non-resource URL
(``/healthz``, ``/apis/*``). A ClusterRole with an ``aggregationRule`` has the rules of every ClusterRole
its label selectors match, as kube's aggregation controller gives it. A binding naming a missing role
allows nothing and is reported as kube does (``RBAC: clusterrole.rbac.authorization.k8s.io "x" not
found``). Everything is read from the store on each decision, so a new binding counts at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..apimachinery.resources import Registry
from ..apimachinery.selectors import compile_selectors, selector_string
from ..apimachinery.user import Attributes, User
from ..storage.store import Store

__all__ = ["Decider", "RBACAuthorizer", "UnionAuthorizer", "cluster_role_rules", "rule_allows"]

_GROUP = "rbac.authorization.k8s.io"


class Decider(Protocol):
    """What the server asks of an authorizer: allowed, and why (or why not)."""

    def decide(self, user: User, a: Attributes) -> tuple[bool, str]: ...


def _has(values: Sequence[str], want: str) -> bool:
    return "*" in values or want in values


def _resource_matches(resources: Sequence[str], a: Attributes) -> bool:
    combined = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
    for r in resources:
        if r in ("*", combined) or (a.subresource and r == f"*/{a.subresource}"):
            return True
    return False


def _url_matches(urls: Sequence[str], path: str) -> bool:
    return any(u == "*" or u == path or (u.endswith("*") and path.startswith(u[:-1])) for u in urls)


def rule_allows(rule: dict[str, Any], a: Attributes) -> bool:
    """kube's rbac ``RuleAllows``: one PolicyRule against one request's attributes."""
    if not _has(rule.get("verbs") or (), a.verb):
        return False
    if not a.resource:
        return _url_matches(rule.get("nonResourceURLs") or (), a.path)
    names = rule.get("resourceNames") or ()
    return (_has(rule.get("apiGroups") or (), a.group) and _resource_matches(rule.get("resources") or (), a)
            and (not names or a.name in names))


def _applies(subject: dict[str, Any], user: User, binding_namespace: str) -> bool:
    """kube's ``appliesToUser``: a ServiceAccount subject's namespace defaults to the binding's."""
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return bool(name == user.name)
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return bool(namespace) and user.name == f"system:serviceaccount:{namespace}:{name}"
    return False


@dataclass
class _Visit:
    """What walking the bindings found: the first allowing binding, and the broken ones."""

    allowed_by: str = ""
    errors: list[str] = field(default_factory=list)


class RBACAuthorizer:
    """Decides from the RBAC objects in ``store``; ``rules_for`` lists a user's rules for rules reviews."""

    def __init__(self, store: Store, registry: Registry) -> None:
        self.store = store
        self._buckets = {plural: registry.must(_GROUP, "v1", plural).bucket
                         for plural in ("roles", "clusterroles", "rolebindings", "clusterrolebindings")}

    def _objects(self, plural: str, namespace: str | None) -> list[dict[str, Any]]:
        return [e.obj for e in self.store.items(self._buckets[plural], namespace)]

    def _bound(self, user: User, namespace: str) -> Iterator[tuple[str, str, list[Any] | None]]:
        """(description, role description, rules or None when the role is missing) per applying binding."""
        cluster_roles = {o["metadata"]["name"]: o for o in self._objects("clusterroles", None)}
        bindings = [("ClusterRoleBinding", "", b) for b in self._objects("clusterrolebindings", None)]
        if namespace:
            bindings += [("RoleBinding", namespace, b) for b in self._objects("rolebindings", namespace)]
        for kind, ns, binding in bindings:
            subjects = [s for s in binding.get("subjects") or () if _applies(s, user, ns)]
            if not subjects:
                continue
            ref = binding.get("roleRef") or {}
            ref_kind, ref_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
            qualified = binding["metadata"]["name"] + (f"/{ns}" if ns else "")
            where = f'{kind} "{qualified}"' + (f' of {ref_kind} "{ref_name}"' if ref_name else "")
            who = _describe_subject(subjects[0], ns)
            if ref_kind == "ClusterRole" and ref_name in cluster_roles:
                yield f"{where} to {who}", "", cluster_role_rules(ref_name, cluster_roles)
            elif ref_kind == "Role" and ns and (role := self.store.get(self._buckets["roles"], ns, ref_name)):
                yield f"{where} to {who}", "", list(role.obj.get("rules") or ())
            else:
                missing = f'{ref_kind.lower()}.{_GROUP} "{ref_name}" not found'
                yield f"{where} to {who}", missing, None

    def _visit(self, user: User, a: Attributes) -> _Visit:
        visit = _Visit()
        with self.store.cond:
            for where, missing, rules in self._bound(user, a.namespace):
                if rules is None:
                    visit.errors.append(missing)
                elif any(rule_allows(r, a) for r in rules):
                    visit.allowed_by = where
                    return visit
        return visit

    def decide(self, user: User, a: Attributes) -> tuple[bool, str]:
        visit = self._visit(user, a)
        if visit.allowed_by:
            return True, f"RBAC: allowed by {visit.allowed_by}"
        return False, _aggregate(visit.errors)

    def rules_for(self, user: User, namespace: str) -> tuple[list[Any], list[str]]:
        """Every rule bound to ``user`` in ``namespace`` (cluster-wide ones included), and the errors."""
        rules: list[Any] = []
        errors: list[str] = []
        with self.store.cond:
            for _, missing, found in self._bound(user, namespace):
                if found is None:
                    errors.append(missing)
                else:
                    rules.extend(r for r in found if r not in rules)
        return rules, _unique(errors)


def _describe_subject(subject: dict[str, Any], binding_namespace: str) -> str:
    """As kube's rbac describes who a binding let in: ``ServiceAccount "name/namespace"``, ``User "name"``."""
    name = str(subject.get("name"))
    if subject.get("kind") == "ServiceAccount":
        name += "/" + str(subject.get("namespace") or binding_namespace)
    return f'{subject.get("kind")} "{name}"'


def _aggregate(errors: Sequence[str]) -> str:
    """The errors as apimachinery's NewAggregate prints them, after ``RBAC: ``; "" for none."""
    unique = _unique(errors)
    if not unique:
        return ""
    return "RBAC: " + (unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]")


def cluster_role_rules(name: str, roles: dict[str, dict[str, Any]], seen: frozenset[str] = frozenset()) -> list[Any]:
    """A ClusterRole's rules; with an aggregationRule, those of the roles it selects (and so on down)."""
    role = roles[name]
    aggregation = role.get("aggregationRule")
    if not isinstance(aggregation, dict):
        return list(role.get("rules") or ())
    seen = seen | {name}
    rules: list[Any] = []
    for other, obj in roles.items():
        if other not in seen and _selected(aggregation.get("clusterRoleSelectors") or (), obj):
            rules.extend(r for r in cluster_role_rules(other, roles, seen) if r not in rules)
    return rules


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _selected(selectors: Iterable[Any], role: dict[str, Any]) -> bool:
    """Does any of an aggregationRule's label selectors match ``role``? An empty one matches all."""
    for selector in selectors:
        text = selector_string(selector if isinstance(selector, dict) else {})
        match = compile_selectors(text, None) if text else None
        if not text or (match is not None and match(role)):
            return True
    return False


@dataclass
class UnionAuthorizer:
    """kube's union of authorizers: the first that allows wins.

    ``decide`` gives the reason a 403 carries (``User "x" cannot ...``, then RBAC's errors); ``review``
    the one a SubjectAccessReview carries, which with RBAC on is RBAC's alone, as kube's (often "", so
    ``kubectl auth can-i`` prints a bare ``no``).
    """

    authorizers: list[Decider]

    def _run(self, user: User, a: Attributes) -> tuple[bool, str, list[str]]:
        rbac: list[str] = []
        for authorizer in self.authorizers:
            allowed, reason = authorizer.decide(user, a)
            if allowed:
                return True, reason, rbac
            if isinstance(authorizer, RBACAuthorizer) and reason:
                rbac.append(reason)
        return False, ": ".join([a.describe(user.name), *rbac]), rbac

    def decide(self, user: User, a: Attributes) -> tuple[bool, str]:
        allowed, reason, _ = self._run(user, a)
        return allowed, reason

    def rules_for(self, user: User, namespace: str) -> tuple[list[Any], list[str]]:
        """The RBAC rules of ``user`` (what a SelfSubjectRulesReview lists); an error without RBAC."""
        rbac = [z for z in self.authorizers if isinstance(z, RBACAuthorizer)]
        if not rbac:
            return [], ["the authorization policy file cannot list rules"]
        return rbac[0].rules_for(user, namespace)

    def review(self, user: User, a: Attributes) -> tuple[bool, str]:
        allowed, reason, rbac = self._run(user, a)
        if allowed or not any(isinstance(z, RBACAuthorizer) for z in self.authorizers):
            return allowed, reason
        return False, ": ".join(rbac)
