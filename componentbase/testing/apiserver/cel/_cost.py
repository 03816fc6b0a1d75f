"""An estimate of a rule's worst-case cost, for kube's refusal of over-budget rules at CRD creation.

kube runs cel-go's cost estimator over the checked expression: every list and string is as long as the schema
allows (``maxItems``, ``maxLength``, ``maxProperties``), or as long as a 3 MiB request could make it when
unbounded, and a rule on a list item or map value is paid once per item. This estimate keeps those sizes and
that multiplication, which is what decides in practice (a comprehension over an unbounded list, a nested
comprehension, a regex over an unbounded string), and prices the expression as cel-go does, node by node (an
identifier, a selection, a call or an operator 1, a literal 0, a comprehension 3 per item plus its body, a string
function a tenth of the string's bytes, a regex that times a quarter of its length), without the checker's
types: it matches kube's expected costs in compilation_test.go for comprehensions over lists and maps of each
type, string functions, regexes and concatenation, but prices equality as 1 where cel-go gives a typed
comparison 0 or a string comparison its length.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["MACRO", "PER_RULE_LIMIT", "TOTAL_LIMIT", "Cost", "cost_message", "expression_cost", "rule_cost", "span"]

PER_RULE_LIMIT = 10_000_000  # StaticEstimatedCostLimit
TOTAL_LIMIT = 100_000_000  # StaticEstimatedCRDCostLimit
_REQUEST = 3 * 1024 * 1024  # MaxRequestSizeBytes
MACRO = re.compile(r"([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\.(all|exists_one|exists|map|filter)\(\s*([A-Za-z_]\w*)\s*,")
_STRING_FN = re.compile(r"([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\.(matches|contains|startsWith|endsWith|find|findAll|"
                        r"split|replace|indexOf|lastIndexOf|lowerAscii|upperAscii|trim|substring)\(")


_PATH = r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[\d+\]|\['[^'\]]*'\]|\[\"[^\"\]]*\"\])*)"
_SEGMENT = re.compile(r"\.([A-Za-z_]\w*)|\[(\d+)\]|\['([^'\]]*)'\]|\[\"([^\"\]]*)\"\]")
_LIT = r"(\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*')?"
_CONCAT = re.compile(rf"(?<![\w.]){_PATH}\s*\+\s*{_LIT}|{_LIT}\s*\+\s*{_PATH}(?![\w.(])")
_EQUALS = re.compile(rf"(?<![\w.]){_PATH}\s*[!=]=\s*{_PATH}(?![\w.(\[])")
_CONST = r"(\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|-?\d+(?:\.\d+)?[uU]?|true|false|null)"
_EQUALS_LITERAL = re.compile(rf"(?<![\w.]){_PATH}\s*[!=]=\s*{_CONST}(?![\w.(\[])|(?<![\w.]){_CONST}\s*[!=]=\s*"
                             rf"{_PATH}(?![\w.(\[])")
_MIN_STRING = {"date": 12, "date-time": 21, "duration": 3}
_TOKEN = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|(\.?)\s*([A-Za-z_]\w*)(\s*\()?|\d+(?:\.\d+)?[uU]?|"
                    r"&&|\|\||[=!<>]=|\S")
_FREE = frozenset(("true", "false", "null"))
_OPERATORS = frozenset(("==", "!=", "<", "<=", ">", ">=", "!", "+", "-", "*", "/", "%", "["))
_TRAVERSE_ARG = frozenset(("startsWith", "endsWith"))
_REGEX = frozenset(("matches", "find", "findAll"))


def _min_size(node: Any) -> int:
    """The fewest bytes a value of ``node`` takes in JSON, as kube's estimator counts them."""
    if not isinstance(node, dict) or node.get("x-kubernetes-int-or-string"):
        return 1
    kind = node.get("type")
    if kind == "string":
        return _MIN_STRING.get(str(node.get("format") or ""), 2)
    if kind == "object":  # {} and each required field: "name":value,
        props = node.get("properties") or {}
        return 2 + sum(len(name) + 4 + _min_size(props[name]) for name in node.get("required") or ()
                       if name in props)
    return { "array": 2, "boolean": 4, "integer": 1, "number": 1}.get(str(kind), 1)


def max_items(node: dict[str, Any]) -> int:
    """How many items (or entries) a list (or map) of ``node`` can hold in a request: its maxItems (or
    maxProperties), else as many of the smallest item as fit (each with a comma; a map's with a key)."""
    for key in ("maxItems", "maxProperties"):
        if isinstance(node.get(key), int):
            return int(node[key])
    if node.get("type") == "array":
        return max(1, (_REQUEST - 2) // (_min_size(node.get("items")) + 1))
    return max(1, (_REQUEST - 2) // (_min_size(node.get("additionalProperties")) + 6))


def _max_length(node: dict[str, Any]) -> int:
    """A string's longest size in bytes: four per character of maxLength (UTF-8), the longest enum value, or
    what a request can hold."""
    if isinstance(node.get("maxLength"), int):
        return 4 * int(node["maxLength"])
    if isinstance(node.get("enum"), list) and node["enum"]:
        return max(len(str(e).encode()) for e in node["enum"])
    return _REQUEST - 2


def _resolve(path: str, self_node: dict[str, Any], scope: dict[str, Any]) -> Any:
    """The schema a path names: ``self.a.b``, a list's item ``[0]``, a map's value ``['k']``."""
    head = re.match(r"[A-Za-z_]\w*", path)
    if head is None:
        return None
    node = self_node if head.group(0) in ("self", "oldSelf") else scope.get(head.group(0))
    for m in _SEGMENT.finditer(path, head.end()):
        if not isinstance(node, dict):
            return None
        if m.group(2) is not None:
            node = node.get("items")
            continue
        name = m.group(1) or m.group(3) or m.group(4) or ""
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


def _price(text: str) -> int:
    """cel-go's per-node costs: an identifier, a field selection, a call and an operator 1 each; literals,
    ``&&``, ``||`` and the conditional 0; ``has()`` 0 (a presence test)."""
    cost, pos = 0, 0
    while (start := text.find("has(", pos)) >= 0:
        if start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_."):
            cost += _price(text[pos:start])
            pos = span(text, start + 4)
        else:
            cost += _price(text[pos:start + 4])
            pos = start + 4
    if pos:
        return cost + _price(text[pos:])
    for m in _TOKEN.finditer(text):
        token, name = m.group(0), m.group(2)
        if name is not None:
            cost += 0 if name in _FREE and not m.group(1) and not m.group(3) else 1
        elif token in _OPERATORS:
            cost += 1
    return cost


def _estimate(text: str, node: dict[str, Any], scope: dict[str, Any], factor: float) -> float:
    """A comprehension over N items costs its range, one more, and per item 3 (the loop's condition and
    step) plus its body, as cel-go's estimate of the expanded macro."""
    total, pos = 0.0, 0
    while True:
        m = MACRO.search(text, pos)
        if m is None:
            break
        total += (_price(text[pos:m.start()]) + _strings(text[pos:m.start()], node, scope)) * factor
        end = span(text, m.end())
        target = _resolve(m.group(1), node, scope)
        size = max_items(target) if isinstance(target, dict) else 1
        inner = {**scope, m.group(3): _element(target)}
        total += _estimate(text[m.end():end - 1], node, inner, factor * size)
        total += (len(m.group(1).split(".")) + 1 + 3 * size) * factor
        pos = end
    return total + (_price(text[pos:]) + _strings(text[pos:], node, scope)) * factor


def _element(target: Any) -> dict[str, Any]:
    """What a comprehension variable ranges over: a list's items, or a map's keys, which kube sizes as its
    string values (a map of other values has keys of no estimated size)."""
    if not isinstance(target, dict):
        return {}
    if target.get("type") == "array":
        items = target.get("items")
        return items if isinstance(items, dict) else {}
    value = target.get("additionalProperties")
    if isinstance(value, dict) and value.get("type") == "string":
        return {k: v for k, v in value.items() if k in ("type", "maxLength", "enum")}
    return {"type": "string", "maxLength": 0}


_LITERAL = re.compile(r"""\s*[rR]?(\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')\s*[,)]""")


def _literal_length(text: str, start: int) -> int | None:
    """The length of the string literal passed as the call's first argument, if it is one."""
    m = _LITERAL.match(text, start)
    if m is None:
        return None
    quote = 3 if m.group(1)[:3] in ('"""', "'''") else 1
    return len(m.group(1)) - 2 * quote


def _strings(text: str, node: dict[str, Any], scope: dict[str, Any]) -> float:
    """What string functions cost beyond the 1 ``_price`` gave the call: a tenth of the string's longest
    length (StringTraversalCostFactor), times a quarter of the regex's length for regexes (kube's cost.go);
    a tenth of the argument's for startsWith/endsWith."""
    cost = 0.0
    for m in _STRING_FN.finditer(text):
        target = _resolve(m.group(1), node, scope)
        if not (isinstance(target, dict) and target.get("type") == "string"):
            continue
        length, name = _max_length(target), m.group(2)
        arg = _literal_length(text, m.end())
        if name in _TRAVERSE_ARG:
            cost += math.ceil((arg if arg is not None else length) * 0.1) - 1
        elif name in _REGEX:
            cost += math.ceil(length * 0.1) * math.ceil((arg if arg is not None else length) * 0.25) - 1
        else:
            cost += math.ceil(length * 0.1) - 1
    for m in _CONCAT.finditer(text):
        target = _resolve(m.group(1) or m.group(3), node, scope)
        if isinstance(target, dict) and target.get("type") == "string":
            literal = m.group(2) or m.group(4) or ""
            cost += math.ceil((_max_length(target) + max(0, len(literal) - 2)) * 0.1) - 1
    for m in _EQUALS.finditer(text):  # two strings compared: a tenth of the shorter (cel-go's string equality)
        left, right = _resolve(m.group(1), node, scope), _resolve(m.group(2), node, scope)
        if all(isinstance(t, dict) and t.get("type") == "string" for t in (left, right)):
            cost += math.ceil(min(_max_length(left), _max_length(right)) * 0.1) - 1
    for m in _EQUALS_LITERAL.finditer(text):
        target = _resolve(m.group(1) or m.group(4), node, scope)
        if not isinstance(target, dict) or target.get("x-kubernetes-int-or-string"):
            continue
        literal = m.group(2) or m.group(3)
        if target.get("type") == "string" and literal[:1] in "'\"":
            cost += math.ceil(min(_max_length(target), len(literal) - 2) * 0.1) - 1
        elif target.get("type") in ("integer", "number", "boolean") and literal[:1] not in "'\"":
            cost -= 1  # a typed scalar against a constant: kube's cases price it 0 (self[1] == 0.0 costs 2)
    return cost


def expression_cost(node: dict[str, Any], text: str) -> float:
    """The estimated cost of one evaluation of ``text`` on ``node``."""
    return _estimate(text, node, {}, 1.0)


def rule_cost(node: dict[str, Any], text: str, cost: Cost) -> float:
    """The estimated cost of one evaluation of ``text`` on ``node``, times how often the node can occur: the
    product of its containers' maxItems/maxProperties, or, below an unbounded one, as many of the node as a
    request can hold (kube's CompilationResult.MaxCardinality, 3 MiB / (its smallest size + 1))."""
    cardinality = cost.cardinality if cost.cardinality != math.inf else _REQUEST // (_min_size(node) + 1)
    return _estimate(text, node, {}, 1.0) * cardinality


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
        """Inside the items (or values) of the list (or map) ``container``; below an unbounded one the
        cardinality is unknown (``math.inf``) and ``rule_cost`` falls back on the node's own size."""
        before = self.cardinality
        bounded = any(isinstance(container.get(k), int) for k in ("maxItems", "maxProperties"))
        self.cardinality = before * max_items(container) if bounded else math.inf
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
            what = "x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema"
            out.append(("FieldValueForbidden", root_path, "Forbidden: " + cost_message(what, total, TOTAL_LIMIT)))
        return out
