"""Rules evaluated as kube-apiserver evaluates them on a write (apiextensions' ``cel.Validator.Validate``):
``self`` bound to each node's value, transition rules only where an old value correlates (or with
``optionalOldSelf``), errors worded and typed as kube's, and ratcheting: on update, a failing rule without
``oldSelf`` is let through where the value equals its old value (CRDValidationRatcheting, on since 1.30)."""

from __future__ import annotations

import re
from typing import Any

from ._env import OLD_LIST
from ._rules import Node, Rule

__all__ = ["go_error", "validate"]

Cause = tuple[str, str, str]
_MISSING: Any = object()
_WARNING = "Warning"  # a ratcheted failure among the causes, until validate() sorts them out
_MESSAGE_LIMIT = 5 * 1024  # MaxEvaluatedMessageExpressionSizeBytes
_RUNTIME = [
    (re.compile(r'^Key not found in map : "?(.*?)"?$'), r"no such key: \1"),
    (re.compile(r"^Index error: index=(-?\d+) size=(\d+)$"), r"index '\1' out of range in list size '\2'"),
    (re.compile(r"^divide by zero$"), "division by zero"),
    (re.compile(r"^modulus by zero$"), "modulus by zero"),
    (re.compile(r"^No matching overloads found.*|^no such overload.*|^Applying SELECT to non-message type$"),
     "no such overload"),
]


def go_error(text: str) -> str:
    """cel-cpp's runtime error as cel-go words it (``no such key: x``)."""
    text = re.sub(r"^[A-Z_]+: ", "", str(text))
    for pattern, repl in _RUNTIME:
        if pattern.match(text):
            return pattern.sub(repl, text)
    return text


def _rule_text(rule: dict[str, Any]) -> str:
    return str(rule.get("message") or "").strip() or str(rule.get("rule") or "").strip()


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _field_error(path: str, kind: str, detail: str, reason: str | None) -> Cause:
    if reason == "FieldValueForbidden":
        return ("FieldValueForbidden", path, f"Forbidden: {detail}")
    if reason == "FieldValueRequired":
        return ("FieldValueRequired", path, f"Required value: {detail}")
    if reason == "FieldValueDuplicate":
        return ("FieldValueDuplicate", path, f'Duplicate value: "{kind}"')
    return ("FieldValueInvalid", path, f'Invalid value: "{kind}": {detail}')


def _message(rule: Rule, data: dict[str, Any]) -> str | None:
    """The messageExpression's text, or None when it fails (kube then falls back to ``message``)."""
    result = rule.message.eval(data=data)
    text = result.value()
    if result.type().name() == "ERROR" or not isinstance(text, str):
        return None
    text = text.strip()
    if not text or "\n" in text or len(text.encode()) > _MESSAGE_LIMIT:
        return None
    return text


def _run(node: Node, value: Any, old: Any, path: str, ratchet: bool, errors: list[Cause]) -> None:
    convert = node.convert
    self_value = convert(value) if convert else value
    data = {"self": self_value}
    transition = data
    if any(r.uses_old for r in node.rules):
        if old is not _MISSING:
            data["oldSelf"] = convert(old) if convert else old
        if node.transition is not None:  # set and map lists compared regardless of order, as kube's
            transition = {"self": node.transition(value)}
            if old is not _MISSING:
                transition["oldSelf"] = node.transition(old)
    for rule in node.rules:
        if rule.optional_old:
            run_data = {"self": transition["self"], OLD_LIST: [] if old is _MISSING else [transition["oldSelf"]]}
        elif rule.uses_old and old is _MISSING:
            continue  # a transition rule, and nothing to compare with
        else:
            run_data = transition if rule.uses_old else data
        spec = rule.spec
        result = rule.program.eval(data=run_data)
        outcome = result.value()
        if result.type().name() == "ERROR":
            detail = go_error(outcome)
            if detail == "no such overload":
                detail = (f"'no such overload': call arguments did not match a supported operator, function or "
                          f"macro signature for rule: {_rule_text(spec)}")
            else:
                detail = f"{detail} evaluating rule: {_rule_text(spec)}"
            errors.append(("FieldValueInvalid", path, f'Invalid value: "{node.type}": {detail}'))
            continue
        if outcome is True:
            continue
        shown = _message(rule, data) if rule.message is not None else None
        if shown is None:
            shown = str(spec.get("message") or "").strip() or f"failed rule: {_rule_text(spec)}"
        at = _child(path, rule.field_path) if rule.field_path else path
        found = _field_error(at, node.type, shown, spec.get("reason"))
        # ratcheting: kube warns instead, and the write goes through
        errors.append((_WARNING, found[1], found[2]) if not rule.uses_old and ratchet else found)


def _walk(node: Node, value: Any, old: Any, path: str, parent_equal: Any, errors: list[Cause]) -> None:
    """``parent_equal``: a thunk saying whether the nearest correlated ancestor is unchanged (None on create)."""
    if value is None:
        return
    if old is not _MISSING:
        def equal() -> bool:
            return bool(value == old)
    else:
        equal = parent_equal
    if node.rules:
        _run(node, value, old, path, equal is not None and equal(), errors)
    if isinstance(value, dict):
        old_map = old if isinstance(old, dict) and not node.atomic_map else {}
        for name, item in value.items():
            sub = node.props.get(name) or (node.extra if not node.schema.get("properties") else None)
            if sub is not None:
                sub_path = _child(path, name) if name in node.props else f"{path}[{name}]"
                _walk(sub, item, old_map.get(name, _MISSING), sub_path, equal, errors)
    elif isinstance(value, list) and node.items is not None:
        olds = _keyed(node.list_keys, old) if node.list_keys and isinstance(old, list) else {}
        for i, item in enumerate(value):
            key = _key(node.list_keys, item) if olds else None
            _walk(node.items, item, olds.get(key, _MISSING) if key is not None else _MISSING, f"{path}[{i}]",
                  equal, errors)


def _key(keys: tuple[str, ...], item: Any) -> Any:
    return tuple(repr(item.get(k)) for k in keys) if isinstance(item, dict) else None


def _keyed(keys: tuple[str, ...], items: list[Any]) -> dict[Any, Any]:
    return {_key(keys, i): i for i in items if isinstance(i, dict)}


def validate(root: Node, obj: Any, old: Any = None, warnings: list[str] | None = None) -> list[Cause]:
    """What the rules of ``root`` refuse in ``obj`` (``old``: the stored object on update); the failures
    ratcheting lets through are added to ``warnings`` as kube words its Warning headers."""
    found: list[Cause] = []
    _walk(root, obj, _MISSING if old is None else old, "", None, found)
    if warnings is not None:
        warnings += [f"{f}: {m}" if f else m for r, f, m in found if r == _WARNING]
    return [c for c in found if c[0] != _WARNING]
