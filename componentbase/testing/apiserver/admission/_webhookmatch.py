"""Which webhooks a request calls: the stored Mutating- and ValidatingWebhookConfigurations read with
admissionregistration/v1's defaults, and matched as kube-apiserver's generic webhook source does.

Configurations are taken in name order and their webhooks in the order listed (kube's sorted webhook
source). A webhook is called when its ``namespaceSelector`` and ``objectSelector`` match (the object's
labels, or the old object's) and one of its ``rules`` matches the request's operation, group, version,
resource (``pods``, ``pods/status``, ``pods/*``, ``*/status``, ``*``, ``*/*``) and scope. With
``matchPolicy: Equivalent`` (v1's default) a rule naming another served version of the same stored
resource matches too: the webhook then gets the object in that version (``kind``/``resource``) and the
request's own in ``requestKind``/``requestResource``, as kube's equivalent resource mapper does. Here the
versions that share storage are equivalent (a CRD's versions; events.k8s.io/v1 and v1 Events;
autoscaling/v1 and v2); kube also maps renamed built-in groups (extensions -> apps), not served here.
A webhook matched so is called when its ``matchConditions`` (CEL) all hold (``_matchconditions``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..apimachinery.resources import Registry, Resource
from ..storage.store import Store

__all__ = ["Hook", "Invocation", "hooks_of", "labels_match", "match"]

_GROUP = "admissionregistration.k8s.io"


@dataclass(frozen=True, slots=True)
class Hook:
    """One webhook of a configuration, with v1's defaults filled in."""

    configuration: str
    index: int  # position among all webhooks called, the reinvocation bookkeeping's key
    spec: dict[str, Any]
    mutating: bool

    @property
    def name(self) -> str:
        return str(self.spec.get("name") or "")

    @property
    def ignores_failures(self) -> bool:
        return self.spec.get("failurePolicy") == "Ignore"

    @property
    def timeout(self) -> float:
        """``timeoutSeconds``: 10 by default, 1 to 30 (kube's validation bounds)."""
        value = self.spec.get("timeoutSeconds")
        return float(min(max(value, 1), 30)) if isinstance(value, int) and not isinstance(value, bool) else 10.0

    @property
    def reinvoked(self) -> bool:
        return self.spec.get("reinvocationPolicy") == "IfNeeded"


@dataclass(frozen=True, slots=True)
class Invocation:
    """A matching webhook and the version of the resource it is called with."""

    hook: Hook
    res: Resource


def hooks_of(store: Store, registry: Registry, mutating: bool) -> list[Hook]:
    """The stored webhooks of one kind, in kube's calling order; call it holding the store's lock."""
    plural = "mutatingwebhookconfigurations" if mutating else "validatingwebhookconfigurations"
    res = registry.lookup(_GROUP, "v1", plural)
    if res is None:
        return []
    hooks: list[Hook] = []
    for entry in store.items(res.bucket, None):  # sorted by name
        name = str((entry.obj.get("metadata") or {}).get("name") or "")
        for spec in entry.obj.get("webhooks") or ():
            if isinstance(spec, dict):
                hooks.append(Hook(name, len(hooks), spec, mutating))
    return hooks


def labels_match(selector: Any, labels: dict[str, Any]) -> bool:
    """A LabelSelector (matchLabels, matchExpressions) against ``labels``; none or ``{}`` matches all."""
    if not isinstance(selector, dict):
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or ():
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or ()
        present = key in labels
        if (op == "In" and (not present or labels[key] not in values)) or \
                (op == "NotIn" and present and labels[key] in values) or \
                (op == "Exists" and not present) or (op == "DoesNotExist" and present):
            return False
    return True


def _labels(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    if obj is None:
        return None
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def _rule_matches(rule: dict[str, Any], operation: str, res: Resource, sub: str, namespace: str) -> bool:
    """predicates/rules' Matcher: scope, operation, group, version, then resource/subresource."""
    scope = rule.get("scope") or "*"
    is_namespace = res.group == "" and res.plural == "namespaces"
    if scope == "Namespaced" and (is_namespace or not namespace):
        return False
    if scope == "Cluster" and not (is_namespace or not namespace):
        return False
    ops = rule.get("operations") or ()
    if "*" not in ops and operation not in ops:
        return False
    for key, value in (("apiGroups", res.group), ("apiVersions", res.version)):
        allowed = rule.get(key) or ()
        if "*" not in allowed and value not in allowed:
            return False
    for name in rule.get("resources") or ():
        want_res, _, want_sub = str(name).partition("/")
        if want_res in ("*", res.plural) and want_sub in ("*", sub):
            return True
    return False


def match(hook: Hook, operation: str, res: Resource, sub: str, namespace: str, registry: Registry,
          obj: dict[str, Any] | None, old: dict[str, Any] | None,
          namespace_labels: dict[str, Any] | None) -> Invocation | None:
    """kube's ShouldCallHook: selectors first, then the rules, then (Equivalent) the equivalent versions.

    ``namespace_labels`` are the labels of the request's namespace (None for a cluster-scoped request);
    for a namespace itself, its own labels are used.
    """
    spec = hook.spec
    ns_selector = spec.get("namespaceSelector")
    if res.group == "" and res.plural == "namespaces" and not sub:
        namespace_labels = _labels(obj if obj is not None else old)
    if namespace_labels is not None and not labels_match(ns_selector, namespace_labels):
        return None
    selector = spec.get("objectSelector")
    if isinstance(selector, dict) and (selector.get("matchLabels") or selector.get("matchExpressions")):
        new_labels, old_labels = _labels(obj), _labels(old)
        if not ((new_labels is not None and labels_match(selector, new_labels))
                or (old_labels is not None and labels_match(selector, old_labels))):
            return None
    rules = [r for r in spec.get("rules") or () if isinstance(r, dict)]
    if any(_rule_matches(r, operation, res, sub, namespace) for r in rules):
        return Invocation(hook, res)
    if (spec.get("matchPolicy") or "Equivalent") != "Equivalent":
        return None
    others = [r for r in registry.resources() if r.bucket == res.bucket and r != res and r.stored]
    for rule in rules:
        for other in others:
            if _rule_matches(rule, operation, other, sub, namespace):
                return Invocation(hook, other)
    return None
