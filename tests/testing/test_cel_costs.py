"""The CRD rules' cost estimate against kube's own expected costs (apiextensions-apiserver's
schema/cel/compilation_test.go, TestCostEstimation): each shape unbounded and with maxItems/maxLength set.
The numbers are kube's; a rule on the schema's root node, so its cardinality is 1."""

from __future__ import annotations

from typing import Any

import pytest

from componentbase.testing.apiserver.cel._cost import Cost, rule_cost

pytestmark = pytest.mark.unit


def _array(item: dict[str, Any], size: int | None) -> dict[str, Any]:
    return {"type": "array", "items": item, **({"maxItems": size} if size is not None else {})}


def _map(value: dict[str, Any], size: int | None) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": value, **({"maxProperties": size} if size is not None else {})}


def _string(size: int | None) -> dict[str, Any]:
    return {"type": "string", **({"maxLength": size} if size is not None else {})}


NUMBER, STRING, BOOLEAN = {"type": "number"}, {"type": "string"}, {"type": "boolean"}
CASES = [  # (schema for a size, rule, kube's cost unbounded, size set, kube's cost with it)
    (lambda n: _map(NUMBER, n), "self.all(x, true)", 1348169, 10, 32),
    (lambda n: _map(STRING, n), "self.all(x, true)", 1179647, 3, 11),
    (lambda n: _map(BOOLEAN, n), "self.all(x, true)", 943718, 100, 302),
    (lambda n: _map(NUMBER, n), "has(self.x)", 0, 100, 0),
    (_string, "self.contains('test')", 314574, 10, 5),
    (_string, "self.startsWith('test')", 2, 15, 2),
    (_string, 'size(self + "hello") > size("hello")', 314578, 4, 7),
    (lambda n: _array(NUMBER, n), "self[1] == 0.0", 2, 5000, 2),
    (lambda n: _array(STRING, n), "self[1] == self[1]", 314577, 8, 314577),
    (lambda n: _array(NUMBER, n), "self.all(x, x == 0.0)", 6291454, 3 * 1024 * 2048, 25165826),
    (lambda n: _array({"x-kubernetes-int-or-string": True}, n), "self.all(x, true)", 4718591, 10, 32),
    (lambda n: _array({"type": "string", "format": "duration"}, n), "self.all(x, true)", 2359295, 5, 17),
    (lambda n: _array({"type": "string", "format": "date"}, n), "self.all(x, true)", 725936, 15, 47),
    (lambda n: _array({"type": "string", "format": "date-time"}, n), "self.all(x, true)", 428963, 25, 77),
    (_string, "self.lowerAscii() == 'lower!'", 314575, 10, 6),
    (lambda n: _map({"type": "integer"}, n), "oldSelf.size() == self.size()", 5, 10, 5),
    (lambda n: _map({"type": "object", "required": ["required"], "properties": {"required": STRING}}, n),
     "self.all(x, true)", 428963, 20, 62),
    (_string, 'self == "x"', 2, 0, 1),
]


@pytest.mark.parametrize(("schema", "rule", "unbounded", "size", "bounded"), CASES)
def test_kubes_expected_costs(schema: Any, rule: str, unbounded: int, size: int, bounded: int) -> None:
    assert (rule_cost(schema(None), rule, Cost()), rule_cost(schema(size), rule, Cost())) == (unbounded, bounded)


def test_nested_loops_over_unbounded_lists_exceed_the_limit() -> None:
    rule = "self.all(x, self.all(y, true))"
    assert rule_cost(_array(NUMBER, None), rule, Cost()) > 10_000_000
    assert rule_cost(_array(NUMBER, 10), rule, Cost()) == 352
