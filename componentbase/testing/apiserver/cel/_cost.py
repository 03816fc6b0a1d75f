"""An estimate of a rule's worst-case cost, for kube's refusal of over-budget rules at CRD creation.

kube runs cel-go's cost estimator over the checked expression: every list and string is as long as the schema
allows (``maxItems``, ``maxLength``, ``maxProperties``), or as long as a 3 MiB request could make it when
unbounded, and a rule on a list item or map value is paid once per item. This estimate keeps those sizes and
that multiplication, which is what decides in practice (a comprehension over an unbounded list, a nested
comprehension, a regex over an unbounded string), but prices the expression itself by its tokens instead of
cel-go's per-function table: factors near the limit can differ from kube's, and the wording is kube's.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["MACRO", "PER_RULE_LIMIT", "TOTAL_LIMIT", "Cost", "cost_message", "rule_cost", "span"]

PER_RULE_LIMIT = 10_000_000  # StaticEstimatedCostLimit
TOTAL_LIMIT = 100_000_000  # StaticEstimatedCRDCostLimit
_REQUEST = 3 * 1024 * 1024  # MaxRequestSizeBytes
MACRO = re.compile(r"([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\.(all|exists_one|exists|map|filter)\(\s*([A-Za-z_]\w*)\s*,")
_STRING_FN = re.compile(r"([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\.(matches|contains|startsWith|endsWith|find|findAll|"
                        r"split|replace|indexOf|lastIndexOf|lowerAscii|upperAscii|trim|substring)\(")
_TOKENS = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|[A-Za-z_]\w*|\d+(?:\.\d+)?|&&|\|\||[=!<>]=|\S")


def _min_size(node: Any) -> int:
    """The fewest bytes a value of ``node`` takes in JSON, as kube's estimator counts them."""
    if not isinstance(node, dict):
        return 1
    kind = node.get("type")
    return {"object": 2, "array": 2, "string": 2, "boolean": 4, "integer": 1, "number": 1}.get(str(kind), 1)


def max_items(node: dict[str, Any]) -> int:
    """How many items (or entries) a list (or map) of ``node`` can hold in a request."""
    for key in ("maxItems", "maxProperties"):
        if isinstance(node.get(key), int):
            return int(node[key])
    element = node.get("items") if node.get("type") == "array" else node.get("additionalProperties")
    return max(1, _REQUEST // (_min_size(element) + 1))


def _max_length(node: dict[str, Any]) -> int:
    if isinstance(node.get("maxLength"), int):
        return int(node["maxLength"])
    return _REQUEST - 2


def _resolve(path: str, self_node: dict[str, Any], scope: dict[str, Any]) -> Any:
    head, *rest = path.split(".")
    node = self_node if head in ("self", "oldSelf") else scope.get(head)
    for name in rest:
        if not isinstance(node, dict):
            return None
        props = node.get("properties") or {}
        node = props.get(name) if name in props else node.get("additionalProperties")
    return node


def span(text: str, start: int) -> int:
    """The index of the parenthesis closing the call whose arguments begin at ``start``."""
    depth, i = 1, start
    while i < len(text) and depth:
        c = text[i]
        if c in "\"'":
            end = text.find(c, i + 1)
            i = end if end > 0 else len(text)
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        i += 1
    return i


def _tokens(text: str) -> int:
    return len(_TOKENS.findall(text))


def _estimate(text: str, node: dict[str, Any], scope: dict[str, Any], factor: float) -> float:
    total, pos = 0.0, 0
    while True:
        m = MACRO.search(text, pos)
        if m is None:
            break
        total += _tokens(text[pos:m.start()]) * factor + _strings(text[pos:m.start()], node, scope) * factor
        end = span(text, m.end())
        target = _resolve(m.group(1), node, scope)
        size = max_items(target) if isinstance(target, dict) else 1
        element = (target.get("items") if target.get("type") == "array" else target.get("additionalProperties")
                   ) if isinstance(target, dict) else None
        inner = {**scope, m.group(3): element if isinstance(element, dict) else {}}
        total += _estimate(text[m.end():end - 1], node, inner, factor * size) + size * factor
        pos = end
    return total + (_tokens(text[pos:]) + _strings(text[pos:], node, scope)) * factor


def _strings(text: str, node: dict[str, Any], scope: dict[str, Any]) -> float:
    """What string functions cost: a tenth of the string's longest length each (StringTraversalCostFactor)."""
    cost = 0.0
    for m in _STRING_FN.finditer(text):
        target = _resolve(m.group(1), node, scope)
        if isinstance(target, dict) and target.get("type") == "string":
            cost += math.ceil(_max_length(target) * 0.1)
    return cost


def rule_cost(node: dict[str, Any], text: str, cost: Cost) -> float:
    """The estimated cost of one evaluation of ``text`` on ``node``, times how often the node can occur."""
    return _estimate(text, node, {}, 1.0) * cost.cardinality


def cost_message(what: str, cost: float, limit: int) -> str:
    factor = cost / limit
    shown = "more than 100x" if factor > 100 else f"{factor:f}x" if factor < 1.5 else f"{factor:.1f}x"
    return (f"{what} exceeds budget by factor of {shown} (try simplifying the rule, or adding maxItems, "
            "maxProperties, and maxLength where arrays, maps, and strings are declared)")


class Cost:
    """The running estimate for one schema: how many times the current node can occur, each rule's cost."""

    def __init__(self) -> None:
        self.cardinality = 1.0
        self.rules: list[tuple[str, float]] = []

    @contextlib.contextmanager
    def within(self, container: dict[str, Any]) -> Iterator[None]:
        """Inside the items (or values) of the list (or map) ``container``."""
        before = self.cardinality
        self.cardinality = before * max_items(container)
        try:
            yield
        finally:
            self.cardinality = before

    def add(self, path: str, estimate: float) -> None:
        self.rules.append((path, estimate))

    def errors(self, root_path: str) -> list[tuple[str, str, str]]:
        """The refusals of the schema's total (a rule over its own budget is refused where it is compiled)."""
        out: list[tuple[str, str, str]] = []
        total = sum(c for _, c in self.rules)
        if total > TOTAL_LIMIT:
            expensive = [(path, c) for path, c in sorted(self.rules, key=lambda r: -r[1]) if c > TOTAL_LIMIT / 100]
            for path, _ in expensive[:4]:  # kube names the four most expensive, each over 1% of the limit
                out.append(("FieldValueForbidden", path, "Forbidden: contributed to estimated rule & "
                                "messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema"))
            out.append(("FieldValueForbidden", root_path, "Forbidden: " + cost_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", total, TOTAL_LIMIT)))
        return out
