"""A CRD schema's ``x-kubernetes-validations`` compiled into a tree that follows the schema (kube's
``cel.Validator``), and what kube-apiserver refuses in them when the CRD is written (apiextensions'
validation: the rule's compilation, its result type, ``messageExpression``, ``reason``, ``fieldPath``,
``oldSelf`` where nothing correlates, and the estimated cost, see ``_cost``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..apimachinery._schemarules import has_rules
from ._cost import PER_RULE_LIMIT, Cost, cost_message, expression_cost, rule_cost
from ._env import OLD_LIST, compile_expr
from ._fields import undefined_field
from ._types import check_types
from ._values import Convert, converter, unordered

__all__ = ["Found", "Node", "Rule", "build", "has_rules"]

Cause = tuple[str, str, str]
_REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")
_STRINGS = re.compile(r"""[rR]?(\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')""")
_OLD_SELF = re.compile(r"\boldSelf\b")
_NEWLINES = re.compile(r"[\n\r]+")  # the newline characters of CEL's grammar


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
    transition: Convert | None = None  # for rules with oldSelf: set and map lists sorted (``unordered``)
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
    text = re.sub(r"^[A-Z_]+: (?=ERROR: )", "", text)  # cel-cpp's status code before cel-go's issues
    return re.sub(r" \[[A-Z_]+\]$", "", text)


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


@dataclass
class Found:
    """What a CRD's rules break, as kube sorts it: the rules' own fields (``schema``), then what compiling
    them finds (``cel``), which kube only looks for where the fields, here and below, are sound."""

    schema: list[Cause] = field(default_factory=list)
    cel: list[Cause] = field(default_factory=list)


def _field_errors(node: dict[str, Any], rule: dict[str, Any], at: str, errors: list[Cause]) -> str:
    """The checks of a rule's fields; returns its fieldPath resolved against ``node`` ("" when unset)."""
    text, message = str(rule.get("rule") or ""), str(rule.get("message") or "")
    if not text.strip():
        errors.append(("FieldValueRequired", f"{at}.rule", "Required value: rule is not specified"))
    elif message and not message.strip():
        errors.append(("FieldValueInvalid", f"{at}.message",
                       f"Invalid value: {_go_quote(message)}: message must be non-empty if specified"))
    elif _NEWLINES.search(message.strip()):
        errors.append(("FieldValueInvalid", f"{at}.message",
                       f"Invalid value: {_go_quote(message)}: message must not contain line breaks"))
    elif _NEWLINES.search(text.strip()) and not message.strip():
        errors.append(("FieldValueRequired", f"{at}.message",
                       "Required value: message must be specified if rule contains line breaks"))
    expression = str(rule.get("messageExpression") or "")
    if expression and not expression.strip():
        errors.append(("FieldValueRequired", f"{at}.messageExpression",
                       "Required value: messageExpression must be non-empty if specified"))
    if rule.get("reason") is not None and rule["reason"] not in _REASONS:
        errors.append(("FieldValueNotSupported", f"{at}.reason", f"Unsupported value: {_go_quote(rule['reason'])}: "
                       "supported values: " + ", ".join(_go_quote(r) for r in _REASONS)))
    fp = str(rule.get("fieldPath") or "")
    resolved = _field_path(node, fp) if fp.strip() else ""
    why = ("fieldPath must be non-empty if specified" if fp and not fp.strip() else
           "fieldPath must not contain line breaks" if _NEWLINES.search(fp) else
           "fieldPath must be a valid path" if resolved is None else "")
    if why:
        errors.append(("FieldValueInvalid", f"{at}.fieldPath", f"Invalid value: {_go_quote(fp)}: {why}"))
    return resolved or ""


def _compile(node: dict[str, Any], text: str, root: bool, with_old: bool = True,
             checked: str | None = None) -> tuple[Any, str]:
    """``text`` compiled for ``node`` and the type it returns by the schema's types; RuntimeError when
    cel-cpp's checker, the schema's fields or its types refuse it. ``checked``: the text to evaluate, when
    it differs from the rule as written."""
    program = compile_expr(node, checked or text, with_old=with_old if checked is None else False)
    issue = undefined_field(node, text, root)
    if issue:
        raise RuntimeError(issue)
    return program, check_types(node, checked or text, root, with_old=checked is None)


def _message_cost(node: dict[str, Any], text: str, at: str, errors: list[Cause], cost: Cost) -> None:
    """A messageExpression's cost, checked alone and counted in the schema's total once (not per item)."""
    estimate = expression_cost(node, text)
    if estimate > PER_RULE_LIMIT:
        errors.append(("FieldValueForbidden", f"{at}.messageExpression",
                       "Forbidden: " + cost_message("estimated messageExpression cost", estimate, PER_RULE_LIMIT)))
    cost.add(f"{at}.messageExpression", estimate)


def _compile_rule(node: dict[str, Any], rule: dict[str, Any], at: str, uncorrelatable: str, field_path: str,
                  root: bool, errors: list[Cause], cost: Cost) -> Rule | None:
    """The rule compiled (None when it does not), with what kube's compilation refuses in ``errors``."""
    text = str(rule.get("rule") or "")
    uses_old = bool(_OLD_SELF.search(_STRINGS.sub("''", text)))
    optional_old = bool(rule.get("optionalOldSelf"))
    try:
        if optional_old and uses_old:
            wrapped = (f"cel.bind(oldSelf, size({OLD_LIST}) == 0 ? optional.none() : optional.of({OLD_LIST}[0]), "
                       f"({text}))")
            program, returns = _compile(node, text, root, checked=wrapped)
        else:
            program, returns = _compile(node, text, root)
    except RuntimeError as err:
        errors.append(("FieldValueInvalid", f"{at}.rule", f"Invalid value: {go_rule(rule)}: "
                       f"compilation failed: {issues(err)}"))
        return None
    if returns not in ("BOOL", "DYN"):
        errors.append(("FieldValueInvalid", f"{at}.rule",
                       f"Invalid value: {go_rule(rule)}: cel expression must evaluate to a bool"))
        return None
    estimate = rule_cost(node, text, cost)
    if estimate > PER_RULE_LIMIT:
        errors.append(("FieldValueForbidden", f"{at}.rule",
                       "Forbidden: " + cost_message("estimated rule cost", estimate, PER_RULE_LIMIT)))
    cost.add(f"{at}.rule", estimate)
    message = None
    if rule.get("messageExpression"):
        try:
            message, returns = _compile(node, str(rule["messageExpression"]), root)
            if returns not in ("STRING", "DYN"):
                errors.append(("FieldValueInvalid", f"{at}.messageExpression",
                               f"Invalid value: {go_rule(rule)}: messageExpression must evaluate to a string"))
            else:
                _message_cost(node, str(rule["messageExpression"]), at, errors, cost)
        except RuntimeError as err:
            errors.append(("FieldValueInvalid", f"{at}.messageExpression", f"Invalid value: {go_rule(rule)}: "
                           f"messageExpression compilation failed: {issues(err)}"))
    if uses_old and uncorrelatable:
        errors.append(("FieldValueInvalid", f"{at}.rule", f"Invalid value: {_go_quote(text)}: oldSelf cannot be "
                       f"used on the uncorrelatable portion of the schema within {uncorrelatable}"))
    elif not uses_old and rule.get("optionalOldSelf") is not None:
        shown = "true" if rule["optionalOldSelf"] else "false"
        errors.append(("FieldValueInvalid", f"{at}.optionalOldSelf",
                       f"Invalid value: {shown}: may not be set if oldSelf is not used in rule"))
    return Rule(rule, program, message, uses_old, optional_old, field_path)


def build(schema: dict[str, Any], path: str, found: Found, cost: Cost, root: bool = True,
          uncorrelatable: str = "") -> Node | None:
    """The validator for ``schema`` (None if nothing under it has rules), what kube refuses in its rules
    added to ``found`` with paths under ``path`` (``spec.validation.openAPIV3Schema``)."""
    if not has_rules(schema):
        return None
    kind = "" if schema.get("x-kubernetes-int-or-string") else str(schema.get("type") or "")
    node = Node(schema, kind, convert=converter(schema, root=root),
                transition=converter(schema, root=root, canonical=True) if unordered(schema) else None,
                atomic_map=schema.get("x-kubernetes-map-type") == "atomic")
    sound = len(found.schema)
    for name, child in (schema.get("properties") or {}).items():
        if isinstance(child, dict):
            sub = build(child, f"{path}.properties[{name}]", found, cost,
                        bool(child.get("x-kubernetes-embedded-resource")),
                        uncorrelatable or (path if node.atomic_map else ""))
            if sub is not None:
                node.props[name] = sub
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        with cost.within(schema):
            node.extra = build(extra, f"{path}.additionalProperties", found, cost,
                               bool(extra.get("x-kubernetes-embedded-resource")),
                               uncorrelatable or (path if node.atomic_map else ""))
    items = schema.get("items")
    if isinstance(items, dict):
        keyed = schema.get("x-kubernetes-list-type") == "map"
        node.list_keys = tuple(schema.get("x-kubernetes-list-map-keys") or ()) if keyed else ()
        with cost.within(schema):
            node.items = build(items, f"{path}.items", found, cost, bool(items.get("x-kubernetes-embedded-resource")),
                               uncorrelatable or ("" if keyed else path))
    rules = [(f"{path}.x-kubernetes-validations[{i}]", r)
             for i, r in enumerate(schema.get("x-kubernetes-validations") or ()) if isinstance(r, dict)]
    paths = [_field_errors(schema, rule, at, found.schema) for at, rule in rules]
    if len(found.schema) == sound:
        for (at, rule), field_path in zip(rules, paths, strict=True):
            compiled = _compile_rule(schema, rule, at, uncorrelatable, field_path, root, found.cel, cost)
            if compiled is not None:
                node.rules.append(compiled)
    return node
