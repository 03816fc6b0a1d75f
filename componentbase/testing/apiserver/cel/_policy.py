"""ValidatingAdmissionPolicy's CEL (admissionregistration.k8s.io/v1): a policy's expressions compiled when it
is written (kube refuses one that does not compile), and evaluated for a request as kube's validating
policy plugin does: ``matchConditions`` (all true, or the policy is skipped; an error obeys
``failurePolicy``), ``variables`` in order, each ``validations[i].expression`` (false denies with
``messageExpression``, ``message`` or ``failed expression: EXPR``), and ``auditAnnotations``.

Expressions see ``object``, ``oldObject``, ``params`` and ``namespaceObject`` as ``dyn``, ``request`` and
``variables`` as maps; ``authorizer`` is not declared (a policy using it is refused as not compiling).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ._env import compile_in, policy_env
from ._rules import issues
from ._validate import go_error

__all__ = ["Decision", "Policy", "compiled", "condition_error", "definition_errors", "evaluate", "match_conditions"]

Cause = tuple[str, str, str]
_MESSAGE_LIMIT = 5 * 1024
_REASONS = ("Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge")


@dataclass
class Decision:
    deny: bool
    message: str
    reason: str = "Invalid"
    error: bool = False  # an evaluation error (the failurePolicy decides), not a false expression


@dataclass
class Policy:
    """A policy's compiled expressions; ``errors`` when one of them does not compile."""

    spec: dict[str, Any]
    matches: list[tuple[str, str, Any]] = field(default_factory=list)
    variables: list[tuple[str, str, Any]] = field(default_factory=list)
    validations: list[tuple[dict[str, Any], Any, Any]] = field(default_factory=list)
    audits: list[tuple[str, str, Any]] = field(default_factory=list)
    errors: list[Cause] = field(default_factory=list)

    @property
    def fails_closed(self) -> bool:
        return self.spec.get("failurePolicy") != "Ignore"


def _go_quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _compile(text: str, path: str, errors: list[Cause], want: str = "BOOL") -> Any:
    try:
        program = compile_in(policy_env(), text)
    except RuntimeError as err:
        errors.append(("FieldValueInvalid", path, f"Invalid value: {_go_quote(text)}: compilation failed: "
                       f"{issues(err)}"))
        return None
    got = program.return_type().name()
    if want and got not in (want, "DYN"):
        detail = ("cel expression must evaluate to a bool" if want == "BOOL" else
                  "must evaluate to string" if want == "STRING" else f"must evaluate to {want.lower()}")
        errors.append(("FieldValueInvalid", path, f"Invalid value: {_go_quote(text)}: {detail}"))
        return None
    return program


def compile_policy(spec: dict[str, Any]) -> Policy:
    policy, errors = Policy(spec), list[Cause]()
    for i, cond in enumerate(spec.get("matchConditions") or ()):
        if isinstance(cond, dict):
            program = _compile(str(cond.get("expression") or ""), f"spec.matchConditions[{i}].expression", errors)
            policy.matches.append((str(cond.get("name") or ""), str(cond.get("expression") or ""), program))
    for i, var in enumerate(spec.get("variables") or ()):
        if isinstance(var, dict):
            program = _compile(str(var.get("expression") or ""), f"spec.variables[{i}].expression", errors, "")
            policy.variables.append((str(var.get("name") or ""), str(var.get("expression") or ""), program))
    for i, val in enumerate(spec.get("validations") or ()):
        if isinstance(val, dict):
            program = _compile(str(val.get("expression") or ""), f"spec.validations[{i}].expression", errors)
            message = None
            if val.get("messageExpression"):
                message = _compile(str(val["messageExpression"]), f"spec.validations[{i}].messageExpression",
                                   errors, "STRING")
            policy.validations.append((val, program, message))
    for i, audit in enumerate(spec.get("auditAnnotations") or ()):
        if isinstance(audit, dict):
            program = _compile(str(audit.get("valueExpression") or ""),
                               f"spec.auditAnnotations[{i}].valueExpression", errors, "")
            policy.audits.append((str(audit.get("key") or ""), str(audit.get("valueExpression") or ""), program))
    policy.errors = errors
    return policy


_CACHE: dict[str, Policy] = {}


def compiled(policy: dict[str, Any]) -> Policy:
    """The stored policy compiled, cached by its name and resourceVersion."""
    meta = policy.get("metadata") or {}
    key = f"{meta.get('name')}@{meta.get('resourceVersion')}"
    hit = _CACHE.get(key)
    if hit is None:
        if len(_CACHE) > 256:
            _CACHE.clear()
        hit = _CACHE[key] = compile_policy(policy.get("spec") or {})
    return hit


def definition_errors(kind: str, obj: dict[str, Any]) -> list[Cause]:
    """What kube's admissionregistration validation refuses in a policy or a binding."""
    spec: dict[str, Any] = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
    errors: list[Cause] = []
    if kind == "ValidatingAdmissionPolicy":
        constraints = spec.get("matchConstraints")
        if not isinstance(constraints, dict):
            errors.append(("FieldValueRequired", "spec.matchConstraints", "Required value"))
        elif not constraints.get("resourceRules"):
            errors.append(("FieldValueRequired", "spec.matchConstraints.resourceRules", "Required value"))
        if not spec.get("validations") and not spec.get("auditAnnotations"):
            errors.append(("FieldValueRequired", "spec.validations",
                           "Required value: validations or auditAnnotations must contain at least one item"))
        if spec.get("failurePolicy") not in (None, "Fail", "Ignore"):
            errors.append(("FieldValueNotSupported", "spec.failurePolicy", f"Unsupported value: "
                           f"{_go_quote(str(spec['failurePolicy']))}: supported values: \"Fail\", \"Ignore\""))
        for i, val in enumerate(spec.get("validations") or ()):
            reason = val.get("reason") if isinstance(val, dict) else None
            if reason is not None and reason not in _REASONS:
                errors.append(("FieldValueNotSupported", f"spec.validations[{i}].reason",
                               f"Unsupported value: {_go_quote(str(reason))}: supported values: "
                               + ", ".join(_go_quote(r) for r in _REASONS)))
        errors += compile_policy(spec).errors
        return errors
    if not spec.get("policyName"):
        errors.append(("FieldValueRequired", "spec.policyName", "Required value"))
    actions = spec.get("validationActions")
    if not actions:
        errors.append(("FieldValueRequired", "spec.validationActions",
                       "Required value: at least one validation action is required"))
    for i, action in enumerate(actions or ()):
        if action not in ("Deny", "Warn", "Audit"):
            errors.append(("FieldValueNotSupported", f"spec.validationActions[{i}]",
                           f"Unsupported value: {_go_quote(str(action))}: supported values: \"Audit\", \"Deny\", "
                           "\"Warn\""))
    if "Deny" in (actions or ()) and "Warn" in (actions or ()):
        errors.append(("FieldValueInvalid", "spec.validationActions", f"Invalid value: {json.dumps(actions)}: "
                       "must not contain both Deny and Warn (repeating the same validation failure information "
                       "in the API response and headers serves no purpose)"))
    ref = spec.get("paramRef")
    if isinstance(ref, dict) and ref.get("parameterNotFoundAction") not in ("Allow", "Deny"):
        if ref.get("parameterNotFoundAction") is None:
            errors.append(("FieldValueRequired", "spec.paramRef.parameterNotFoundAction", "Required value"))
        else:
            errors.append(("FieldValueNotSupported", "spec.paramRef.parameterNotFoundAction",
                           f"Unsupported value: {_go_quote(str(ref['parameterNotFoundAction']))}: "
                           "supported values: \"Allow\", \"Deny\""))
    return errors


def _run(program: Any, text: str, data: dict[str, Any]) -> tuple[Any, str | None]:
    """The value of ``program``, or kube's ``expression 'X' resulted in error: ...``."""
    result = program.eval(data=data)
    value = result.value()
    if result.type().name() == "ERROR":
        return None, f"expression '{text}' resulted in error: {go_error(value)}"
    return value, None


def _message(program: Any, data: dict[str, Any]) -> str:
    result = program.eval(data=data)
    text = result.value()
    if result.type().name() == "ERROR" or not isinstance(text, str):
        return ""
    text = text.strip()
    return "" if len(text) > _MESSAGE_LIMIT or "\n" in text else text


def evaluate(policy: Policy, data: dict[str, Any]) -> tuple[list[Decision], dict[str, str]]:
    """The decisions of each validation for one request (and one param), and the audit annotations."""
    errors = []
    for _, text, program in policy.matches:
        value, err = _run(program, text, data)
        if err:
            errors.append(err)
        elif value is False:
            return [], {}
    if errors:
        return [Decision(True, errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]", error=True)], {}
    variables: dict[str, Any] = {}
    data = dict(data, variables=variables)
    for name, text, program in policy.variables:
        value, err = _run(program, text, data)
        if err is None:
            variables[name] = value
    decisions = []
    for spec, program, message in policy.validations:
        text = str(spec.get("expression") or "")
        value, err = _run(program, text, data)
        if err is not None:
            decisions.append(Decision(True, err, error=True))
        elif value is not True:
            shown = (_message(message, data) if message is not None else "") or \
                str(spec.get("message") or "").strip() or f"failed expression: {text.strip()}"
            decisions.append(Decision(True, shown, str(spec.get("reason") or "Invalid")))
    annotations = {}
    for key, text, program in policy.audits:
        value, err = _run(program, text, data)
        if err is not None:
            decisions.append(Decision(True, err, error=True))
        elif isinstance(value, str) and value.strip():
            annotations[key] = value.strip()
    return decisions, annotations





_CONDITIONS: dict[str, tuple[Any, str]] = {}


def condition_error(text: str) -> str:
    """Why a webhook's matchCondition ``text`` does not compile as kube words it (``compilation failed: ...``,
    ``cel expression must evaluate to a bool``), or "" when it does; compiled once per expression."""
    return _condition(text)[1]


def _condition(text: str) -> tuple[Any, str]:
    hit = _CONDITIONS.get(text)
    if hit is None:
        if len(_CONDITIONS) > 1024:
            _CONDITIONS.clear()
        errors: list[Cause] = []
        program = _compile(text, "", errors)
        detail = errors[0][2].removeprefix(f"Invalid value: {_go_quote(text)}: ") if errors else ""
        hit = _CONDITIONS[text] = (program, detail)
    return hit


def match_conditions(conditions: list[dict[str, Any]], data: dict[str, Any]) -> tuple[bool, list[str]]:
    """A webhook's ``matchConditions`` as kube's matchconditions matcher runs them: (False, []) once one is
    false, whatever errors the others met; else (True, the errors), which the webhook's failurePolicy judges."""
    errors = []
    for cond in conditions:
        text = str(cond.get("expression") or "")
        program, compile_error = _condition(text)
        if program is None:
            errors.append(compile_error)
            continue
        value, err = _run(program, text, data)
        if err is not None:
            errors.append(err)
        elif value is False:
            return False, []
    return True, errors
