"""A CRD schema's ``x-kubernetes-validations`` compiled into a tree that follows the schema (kube's
``cel.Validator``), and what kube-apiserver refuses in them when the CRD is written (apiextensions'
validation: the rule's compilation, its result type, ``messageExpression``, ``reason``, ``fieldPath``,
``oldSelf`` where nothing correlates, and the estimated cost, see ``_cost``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ._cost import Cost, rule_cost
from ._env import OLD_LIST, compile_expr
from ._values import Convert, converter

__all__ = ["Node", "Rule", "build", "has_rules"]

Cause = tuple[str, str, str]
_REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")
_STRINGS = re.compile(r"""[rR]?(\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')""")
_OLD_SELF = re.compile(r"\boldSelf\b")


@dataclass
class Rule:
    spec: dict[str, Any]
    program: Any
    message: Any  # the compiled messageExpression, or None
    uses_old: bool
    optional_old: bool
    field_path: str


@dataclass
class Node:
    schema: dict[str, Any]
    type: str  # the schema's type as field errors quote it ("object", "" for int-or-string)
    rules: list[Rule] = field(default_factory=list)
    props: dict[str, Node] = field(default_factory=dict)
    extra: Node | None = None
    items: Node | None = None
    convert: Convert | None = None
    list_keys: tuple[str, ...] = ()  # listType map: items correlate with the old list's by these keys
    atomic_map: bool = False


def _go_quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def go_rule(rule: dict[str, Any]) -> str:
    """The rule as kube's field error prints it (``%#v`` of apiextensions.ValidationRule)."""
    reason = "(*apiextensions.FieldValueErrorReason)(0xc000a1c0f0)" if rule.get("reason") else \
        "(*apiextensions.FieldValueErrorReason)(nil)"
    optional = "(*bool)(0xc000a1c0f8)" if rule.get("optionalOldSelf") is not None else "(*bool)(nil)"
    return (f"apiextensions.ValidationRule{{Rule:{_go_quote(str(rule.get('rule') or ''))}, "
            f"Message:{_go_quote(str(rule.get('message') or ''))}, "
            f"MessageExpression:{_go_quote(str(rule.get('messageExpression') or ''))}, Reason:{reason}, "
            f"FieldPath:{_go_quote(str(rule.get('fieldPath') or ''))}, OptionalOldSelf:{optional}}}")


def issues(err: Exception) -> str:
    """cel-cpp's status text as cel-go's Issues.String(): ``ERROR: <input>:1:6: ...``."""
    text = str(err)
    text = re.sub(r"^[A-Z_]+: ", "", text)
    return re.sub(r" \[[A-Z_]+\]$", "", text)


def has_rules(schema: Any) -> bool:
    """Whether ``schema`` or a schema under it carries rules (as ``_celhook``'s, which may not import this)."""
    if not isinstance(schema, dict):
        return False
    if schema.get("x-kubernetes-validations"):
        return True
    children = [*(schema.get("properties") or {}).values(), schema.get("items"), schema.get("additionalProperties")]
    return any(has_rules(c) for c in children)


def _field_path(schema: dict[str, Any], path: str) -> str | None:
    """``.a.b`` or ``.a['b']`` resolved against ``schema`` (ValidFieldPath); None when it names no field."""
    tokens = re.findall(r"\.([^.\[\]]+)|\[\s*'((?:\\.|[^'])*)'\s*\]|(.)", path)
    node, parts = schema, list[str]()
    for name, quoted, other in tokens:
        if other:
            return None
        name = name or quoted.replace("\\'", "'")
        props = node.get("properties")
        if props is not None:
            if name not in props:
                return None
            node, parts = props[name], [*parts, f".{name}"]
        elif isinstance(node.get("additionalProperties"), dict):
            node, parts = node["additionalProperties"], [*parts, f"[{name}]"]
        else:
            return None
    return "".join(parts).lstrip(".")


def _compile_rule(node: dict[str, Any], rule: dict[str, Any], at: str, uncorrelatable: str,
                  errors: list[Cause], cost: Cost) -> Rule | None:
    text = str(rule.get("rule") or "")
    if rule.get("reason") and rule["reason"] not in _REASONS:
        errors.append(("FieldValueNotSupported", f"{at}.reason", f"Unsupported value: {_go_quote(rule['reason'])}: "
                       "supported values: " + ", ".join(_go_quote(r) for r in _REASONS)))
    fp = str(rule.get("fieldPath") or "")
    resolved = _field_path(node, fp) if fp else ""
    if resolved is None:
        errors.append(("FieldValueInvalid", f"{at}.fieldPath",
                       f"Invalid value: {_go_quote(fp)}: fieldPath must be a valid path: "
                       "does not refer to a valid field"))
    if not text.strip():
        errors.append(("FieldValueRequired", f"{at}.rule", "Required value: rule is not specified"))
        return None
    uses_old = bool(_OLD_SELF.search(_STRINGS.sub("''", text)))
    optional_old = bool(rule.get("optionalOldSelf"))
    try:
        if optional_old and uses_old:
            wrapped = (f"cel.bind(oldSelf, size({OLD_LIST}) == 0 ? optional.none() : optional.of({OLD_LIST}[0]), "
                       f"({text}))")
            program = compile_expr(node, wrapped, with_old=False)
        else:
            program = compile_expr(node, text)
    except RuntimeError as err:
        errors.append(("FieldValueInvalid", f"{at}.rule", f"Invalid value: {go_rule(rule)}: "
                       f"compilation failed: {issues(err)}"))
        return None
    if program.return_type().name() not in ("BOOL", "DYN"):
        errors.append(("FieldValueInvalid", f"{at}.rule",
                       f"Invalid value: {go_rule(rule)}: cel expression must evaluate to a bool"))
        return None
    if optional_old and not uses_old:
        errors.append(("FieldValueInvalid", f"{at}.optionalOldSelf",
                       "Invalid value: true: may not be set if oldSelf is not used in rule"))
    if uses_old and uncorrelatable:
        errors.append(("FieldValueInvalid", f"{at}.rule", f"Invalid value: {_go_quote(text)}: oldSelf cannot be "
                       f"used on the uncorrelatable portion of the schema within {uncorrelatable}"))
    message = None
    if rule.get("messageExpression"):
        try:
            message = compile_expr(node, str(rule["messageExpression"]))
            if message.return_type().name() not in ("STRING", "DYN"):
                errors.append(("FieldValueInvalid", f"{at}.messageExpression",
                               f"Invalid value: {go_rule(rule)}: must evaluate to a string"))
        except RuntimeError as err:
            errors.append(("FieldValueInvalid", f"{at}.messageExpression", f"Invalid value: {go_rule(rule)}: "
                           f"messageExpression compilation failed: {issues(err)}"))
    cost.add(f"{at}.rule", rule_cost(node, text, cost), rule.get("messageExpression"))
    return Rule(rule, program, message, uses_old, optional_old, resolved or "")


def build(schema: dict[str, Any], path: str, errors: list[Cause], cost: Cost, root: bool = True,
          uncorrelatable: str = "") -> Node | None:
    """The validator for ``schema`` (None if nothing under it has rules), its CRD-time errors appended to
    ``errors`` with paths under ``path`` (``spec.validation.openAPIV3Schema``)."""
    if not has_rules(schema):
        return None
    kind = "" if schema.get("x-kubernetes-int-or-string") else str(schema.get("type") or "")
    node = Node(schema, kind, convert=converter(schema, root=root),
                atomic_map=schema.get("x-kubernetes-map-type") == "atomic")
    for i, rule in enumerate(schema.get("x-kubernetes-validations") or ()):
        if isinstance(rule, dict):
            at = f"{path}.x-kubernetes-validations[{i}]"
            compiled = _compile_rule(schema, rule, at, uncorrelatable, errors, cost)
            if compiled is not None:
                node.rules.append(compiled)
    for name, child in (schema.get("properties") or {}).items():
        if isinstance(child, dict):
            sub = build(child, f"{path}.properties[{name}]", errors, cost,
                        bool(child.get("x-kubernetes-embedded-resource")),
                        uncorrelatable or (path if node.atomic_map else ""))
            if sub is not None:
                node.props[name] = sub
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        with cost.within(schema):
            node.extra = build(extra, f"{path}.additionalProperties", errors, cost,
                               bool(extra.get("x-kubernetes-embedded-resource")),
                               uncorrelatable or (path if node.atomic_map else ""))
    items = schema.get("items")
    if isinstance(items, dict):
        keyed = schema.get("x-kubernetes-list-type") == "map"
        node.list_keys = tuple(schema.get("x-kubernetes-list-map-keys") or ()) if keyed else ()
        with cost.within(schema):
            node.items = build(items, f"{path}.items", errors, cost, bool(items.get("x-kubernetes-embedded-resource")),
                               uncorrelatable or ("" if keyed else path))
    return node
