"""Helpers the default plugins share: toleration matching, node and pod label selectors, score normalization.

Semantics follow k8s.io/api's ``Toleration.ToleratesTaint`` and component-helpers' ``nodeaffinity``: a
node selector term is parsed as ``labels.NewRequirement`` parses it (a qualified key, label values, the
operator's rule: ``In`` without values, ``Gt`` with a non-integer); a required term that does not parse
matches nothing, as upstream ignores its error, and a preferred one is an error (``PreferredTerms.error``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from componentbase import field
from componentbase_examples.scheduler.framework import MAX_NODE_SCORE
from componentbase_examples.scheduler.plugins.selectorparse import (
    aggregate,
    go_int,
    requirement_errors,
    term_errors,
)
from componentbase_examples.scheduler.snapshot import NodeInfo, Taint

__all__ = [
    "NodeSelector",
    "PreferredTerms",
    "RequiredNodeAffinity",
    "Requirement",
    "SelectorError",
    "default_normalize",
    "find_untolerated",
    "labels_match",
    "selector_requirements",
    "tolerates",
]

#: One pod label selector requirement: ``(key, operator, values)``.
Requirement = tuple[str, str, frozenset[str]]


class SelectorError(ValueError):
    """A label selector that cannot be parsed (the API server rejects such pods; a manifest may not)."""


def _new_requirement(key: str, op: str, values: list[str]) -> Requirement:
    """``labels.NewRequirement`` for a pod label selector (kube's words); raises ``SelectorError``."""
    if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
        raise SelectorError(f'"{op}" is not a valid label selector operator')
    errs = requirement_errors(key, op, values, field.Path())
    if errs:
        raise SelectorError(aggregate(errs))
    return key, op, frozenset(values)


def selector_requirements(selector: Mapping[str, Any]) -> tuple[Requirement, ...]:
    """A ``LabelSelector``'s ``matchLabels`` and ``matchExpressions``, ANDed (``()`` selects everything);
    raises ``SelectorError`` with ``LabelSelectorAsSelector``'s message for an invalid key, value or operator."""
    found = [_new_requirement(str(k), "In", [str(v)]) for k, v in (selector.get("matchLabels") or {}).items()]
    found += [_new_requirement(e.get("key", ""), e.get("operator", ""), [str(v) for v in e.get("values") or ()])
              for e in selector.get("matchExpressions") or ()]
    return tuple(found)


def labels_match(requirements: tuple[Requirement, ...], labels: Mapping[str, str]) -> bool:
    for key, op, values in requirements:
        if op == "In":
            if labels.get(key) not in values:
                return False
        elif op == "NotIn":
            if key in labels and labels[key] in values:
                return False
        elif op == "Exists":
            if key not in labels:
                return False
        elif key in labels:  # DoesNotExist
            return False
    return True


def tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    key, value, effect = taint
    t_effect = toleration.get("effect") or ""
    if t_effect and t_effect != effect:
        return False
    t_key = toleration.get("key") or ""
    if t_key and t_key != key:
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == value


def find_untolerated(taints: Iterable[Taint], tolerations: Sequence[Mapping[str, Any]]) -> Taint | None:
    """The first taint no toleration tolerates, as ``FindMatchingUntoleratedTaint``."""
    for taint in taints:
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


Matcher = Callable[[NodeInfo], bool]


def _never(node: NodeInfo) -> bool:
    return False


def _label_matcher(expr: Mapping[str, Any]) -> Matcher:
    """A parsed ``matchExpressions`` entry (``term_errors`` has found none in it)."""
    key = expr.get("key", "")
    op = expr.get("operator", "")
    values = [str(v) for v in expr.get("values") or ()]
    if op in ("In", "NotIn"):
        wanted = frozenset(values)
        if op == "In":
            return lambda n: n.labels.get(key) in wanted
        return lambda n: n.labels.get(key) not in wanted
    if op == "Exists":
        return lambda n: key in n.labels
    if op == "DoesNotExist":
        return lambda n: key not in n.labels
    bound = go_int(values[0])
    assert bound is not None
    return _compare(key, bound, op == "Gt")


def _compare(key: str, bound: int, greater: bool) -> Matcher:
    def match(n: NodeInfo) -> bool:
        have = go_int(n.labels.get(key, "")) if key in n.labels else None
        if have is None:
            return False
        return have > bound if greater else have < bound

    return match


def _field_matcher(expr: Mapping[str, Any]) -> Matcher:
    """A parsed ``matchFields`` entry: a node has one field, ``metadata.name``; any other reads as empty."""
    key, value = expr.get("key"), str((expr.get("values") or ("",))[0])
    if key != "metadata.name":
        return (lambda n: value == "") if expr.get("operator") == "In" else (lambda n: value != "")
    if expr.get("operator") == "In":
        return lambda n: n.name == value
    return lambda n: n.name != value


def compile_term(term: Mapping[str, Any]) -> Matcher:
    """One ``NodeSelectorTerm``: all its expressions and fields hold; an empty term, or one that does not
    parse (``term_errors``), matches nothing, as upstream's required affinity ignores parse errors."""
    exprs = list(term.get("matchExpressions") or ())
    fields = list(term.get("matchFields") or ())
    if (not exprs and not fields) or term_errors(term, field.Path()):
        return _never
    checks = [_label_matcher(e) for e in exprs] + [_field_matcher(f) for f in fields]
    if len(checks) == 1:
        return checks[0]
    return lambda n: all(check(n) for check in checks)


class NodeSelector:
    """A ``NodeSelector``: its terms are ORed."""

    def __init__(self, selector: Mapping[str, Any]) -> None:
        self.terms = [compile_term(t) for t in selector.get("nodeSelectorTerms") or ()]

    def match(self, node: NodeInfo) -> bool:
        return any(term(node) for term in self.terms)


class RequiredNodeAffinity:
    """kube's ``GetRequiredNodeAffinity``: a pod's ``nodeSelector`` labels and required node affinity, both
    must hold (NodeAffinity filters with it, PodTopologySpread's ``nodeAffinityPolicy: Honor`` counts by it)."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.labels = dict(spec.get("nodeSelector") or {})
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution")
        self.selector = NodeSelector(required) if required is not None else None

    def is_empty(self) -> bool:
        return not self.labels and self.selector is None

    def match(self, n: NodeInfo) -> bool:
        labels = n.labels
        for key, value in self.labels.items():
            if labels.get(key) != value:
                return False
        return self.selector is None or self.selector.match(n)

    def matching(self, nodes: list[NodeInfo]) -> list[NodeInfo]:
        """The nodes that match, in order; a lone ``nodeSelector`` label is one comprehension (a hot loop)."""
        if self.selector is None and len(self.labels) == 1:
            ((key, value),) = self.labels.items()
            return [n for n in nodes if n.labels.get(key) == value]
        match = self.match
        return [n for n in nodes if match(n)]


class PreferredTerms:
    """``preferredDuringSchedulingIgnoredDuringExecution``: a node scores the weights of the terms it matches.

    As component-helpers' ``NewPreferredSchedulingTerms``, terms of weight 0 or with no requirement are left
    out, and a term that does not parse is an error (``error``, its message, paths from ``[i]``), which
    NodeAffinity's PreScore and Score report, where a required term's would only match nothing.
    """

    def __init__(self, terms: Iterable[Mapping[str, Any]]) -> None:
        kept = [(i, int(t.get("weight") or 0), t.get("preference") or {}) for i, t in enumerate(terms)]
        kept = [(i, w, p) for i, w, p in kept if w != 0 and (p.get("matchExpressions") or p.get("matchFields"))]
        errs = [e for i, _, p in kept for e in term_errors(p, field.Path().index(i))]
        self.error = aggregate(errs) if errs else ""
        self.terms = [] if errs else [(w, compile_term(p)) for _, w, p in kept]

    def score(self, node: NodeInfo) -> int:
        return sum(w for w, match in self.terms if match(node))

    def scores(self, nodes: list[NodeInfo]) -> list[int]:
        """``score`` of each node; a lone term is one comprehension (a hot loop)."""
        if len(self.terms) == 1:
            ((weight, match),) = self.terms
            return [weight if match(n) else 0 for n in nodes]
        score = self.score
        return [score(n) for n in nodes]


def default_normalize(scores: list[int], reverse: bool) -> None:
    """``helper.DefaultNormalizeScore``: scale to 0..100 by the highest score (reversed: 100 minus that)."""
    highest = max(scores, default=0)
    if highest == 0:
        if reverse:
            scores[:] = [MAX_NODE_SCORE] * len(scores)
        return
    if isinstance(highest, int) and highest < 256:
        # small counts (untolerated taints, matched terms): each score mapped through a byte table, in C;
        # bytes() refuses a negative score, which is then scaled as the rest below
        with contextlib.suppress(TypeError, ValueError):
            scores[:] = bytes(scores).translate(_normalize_table(highest, reverse))
            return
    if reverse:
        scores[:] = [MAX_NODE_SCORE - MAX_NODE_SCORE * s // highest for s in scores]
    else:
        scores[:] = [MAX_NODE_SCORE * s // highest for s in scores]


@functools.cache
def _normalize_table(highest: int, reverse: bool) -> bytes:
    """The normalized score of each byte 0..``highest`` (the rest are never looked up)."""
    scaled = [MAX_NODE_SCORE * s // highest if s <= highest else 0 for s in range(256)]
    return bytes(MAX_NODE_SCORE - s if reverse else s for s in scaled)
