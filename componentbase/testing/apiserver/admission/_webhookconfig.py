"""Mutating- and ValidatingWebhookConfigurations as admissionregistration/v1 defaults and validates them.

Defaults (SetDefaults_*): ``failurePolicy: Fail``, ``matchPolicy: Equivalent``, empty namespace and object
selectors, ``timeoutSeconds: 10``, a mutating webhook's ``reinvocationPolicy: Never``, a rule's ``scope:
"*"``, a service's ``port: 443``; so ``kubectl get -o yaml`` shows what kube-apiserver stores. Validation
(pkg/apis/admissionregistration/validation): fully qualified and unique webhook names, rules, the enums,
``sideEffects`` None or NoneOnDryRun, ``timeoutSeconds`` 1..30, exactly one of ``url`` (https, a host, no
query, fragment or user) or ``service``, ``admissionReviewVersions`` naming v1 or v1beta1, and
``matchConditions`` (at most 64, named, unique, each expression compiling to a bool), with kube's messages.
A CRD's ``spec.conversion`` is checked here too, as apiextensions' validation does (its errors name the
internal ``webhookClientConfig`` field, as kube's do).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from componentbase.util.field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_many,
)
from componentbase.util.validation import qualified_name

__all__ = ["CONFIGURATIONS", "configuration_errors", "conversion_errors", "default_configuration"]

CONFIGURATIONS = ("mutatingwebhookconfigurations.admissionregistration.k8s.io",
                  "validatingwebhookconfigurations.admissionregistration.k8s.io")
_OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
_FORM = "; desired format: https://host[/path]"
Obj = dict[str, Any]


def default_configuration(obj: Obj, mutating: bool) -> None:
    """Fill in v1's defaults in place (``obj`` is a fresh top-level dict; its webhooks are copied)."""
    webhooks = obj.get("webhooks")
    if not isinstance(webhooks, list):
        return
    out = []
    for hook in webhooks:
        if not isinstance(hook, dict):
            out.append(hook)
            continue
        hook = {"failurePolicy": "Fail", "matchPolicy": "Equivalent", "namespaceSelector": {},
                "objectSelector": {}, "timeoutSeconds": 10, **hook}
        if mutating:
            hook.setdefault("reinvocationPolicy", "Never")
        hook["rules"] = [dict({"scope": "*"}, **r) if isinstance(r, dict) else r for r in hook.get("rules") or ()]
        config = hook.get("clientConfig")
        if isinstance(config, dict) and isinstance(config.get("service"), dict):
            hook["clientConfig"] = dict(config, service=dict({"port": 443}, **config["service"]))
        out.append(hook)
    obj["webhooks"] = out


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _rule_errors(rule: Obj, path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    ops = _list(rule.get("operations"))
    if not ops:
        errors.append(required(path.child("operations")))
    elif len(ops) > 1 and "*" in ops:
        errors.append(invalid(path.child("operations"), ops, "if '*' is present, must not specify other operations"))
    errors += [not_supported(path.child("operations").index(i), op, _OPERATIONS)
               for i, op in enumerate(ops) if op not in _OPERATIONS]
    for key, what in (("apiGroups", "API groups"), ("apiVersions", "API versions")):
        values = _list(rule.get(key))
        if not values:
            errors.append(required(path.child(key)))
        elif len(values) > 1 and "*" in values:
            errors.append(invalid(path.child(key), values, f"if '*' is present, must not specify other {what}"))
    resources = _list(rule.get("resources"))
    if not resources:
        errors.append(required(path.child("resources")))
    errors += [required(path.child("resources").index(i)) for i, r in enumerate(resources) if not r]
    if len(resources) > 1 and "*/*" in resources:
        errors.append(invalid(path.child("resources"), resources, "if '*/*' is present, must not specify other "
                                                                  "resources"))
    if rule.get("scope") not in (None, "*", "Cluster", "Namespaced"):
        errors.append(not_supported(path.child("scope"), rule["scope"], ("*", "Cluster", "Namespaced")))
    return errors


def _client_config_errors(config: Any, path: Path) -> list[FieldError]:
    config = config if isinstance(config, dict) else {}
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        return [required(path, "exactly one of url or service is required")]
    if url is not None:
        parts = urlsplit(str(url))
        errors = []
        if parts.scheme != "https":
            errors.append(invalid(path.child("url"), parts.scheme, "'https' is the only allowed URL scheme" + _FORM))
        if not parts.netloc:
            errors.append(invalid(path.child("url"), "", "host must be specified" + _FORM))
        if "@" in parts.netloc:
            errors.append(invalid(path.child("url"), parts.netloc.rsplit("@", 1)[0],
                                  "user information is not permitted in the URL"))
        if parts.fragment:
            errors.append(invalid(path.child("url"), parts.fragment, "fragments are not permitted in the URL"))
        if parts.query:
            errors.append(invalid(path.child("url"), parts.query, "query parameters are not permitted in the URL"))
        return errors
    service = service if isinstance(service, dict) else {}
    errors = [required(path.child("service", key), f"service {key} is required")
              for key in ("namespace", "name") if not service.get(key)]
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errors.append(invalid(path.child("service", "port"), port, "port is not valid: must be between 1 and 65535, "
                                                                     "inclusive"))
    if service.get("path") is not None and not str(service["path"]).startswith("/"):
        errors.append(invalid(path.child("service", "path"), service["path"], "must start with a '/'"))
    return errors


def _hook_errors(hook: Obj, path: Path, mutating: bool) -> list[FieldError]:
    name = str(hook.get("name") or "")
    errors: list[FieldError] = []
    if not name:
        errors.append(required(path.child("name")))
    elif len(name.split(".")) < 3:
        errors.append(invalid(path.child("name"), name, "should be a domain with at least three segments separated "
                                                        "by dots"))
    for i, rule in enumerate(_list(hook.get("rules"))):
        errors += _rule_errors(rule if isinstance(rule, dict) else {}, path.child("rules").index(i))
    enums = [("failurePolicy", ("Fail", "Ignore")), ("matchPolicy", ("Equivalent", "Exact"))]
    if mutating:
        enums.append(("reinvocationPolicy", ("IfNeeded", "Never")))
    errors += [not_supported(path.child(key), hook[key], allowed) for key, allowed in enums
               if hook.get(key) is not None and hook[key] not in allowed]
    effects = hook.get("sideEffects")
    if effects is None:
        errors.append(required(path.child("sideEffects"), "must specify one of None, NoneOnDryRun"))
    elif effects not in ("None", "NoneOnDryRun"):
        errors.append(not_supported(path.child("sideEffects"), effects, ("None", "NoneOnDryRun")))
    timeout = hook.get("timeoutSeconds")
    if timeout is not None and (not isinstance(timeout, int) or not 1 <= timeout <= 30):
        errors.append(invalid(path.child("timeoutSeconds"), timeout, "the timeout value must be between 1 and 30 "
                                                                      "seconds"))
    errors += _client_config_errors(hook.get("clientConfig"), path.child("clientConfig"))
    errors += _condition_errors(_list(hook.get("matchConditions")), path.child("matchConditions"))
    return errors + _review_versions(hook.get("admissionReviewVersions"), path.child("admissionReviewVersions"),
                                     "must specify one of v1, v1beta1")


def _condition_errors(conditions: list[Any], path: Path) -> list[FieldError]:
    """kube's validateMatchConditions: at most 64, each named (a qualified name, unique) with an expression
    that compiles to a bool."""
    errors: list[FieldError] = [too_many(path, len(conditions), 64)] if len(conditions) > 64 else []
    names: set[str] = set()
    for i, cond in enumerate(conditions):
        cond = cond if isinstance(cond, dict) else {}
        at, name, text = path.index(i), str(cond.get("name") or ""), str(cond.get("expression") or "").strip()
        if not text:
            errors.append(required(at.child("expression")))
        else:
            # the CEL runtime is loaded only for a configuration with conditions
            from ..cel._policy import condition_error

            if detail := condition_error(text):
                errors.append(invalid(at.child("expression"), text, detail))
        if not name:
            errors.append(required(at.child("name")))
        else:
            errors += [invalid(at.child("name"), name, why) for why in qualified_name(name)]
        if name and name in names:
            errors.append(duplicate(at.child("name"), name))
        names.add(name)
    return errors


def configuration_errors(obj: Obj, mutating: bool) -> list[FieldError]:
    """What kube's ValidateMutating/ValidatingWebhookConfiguration refuses in ``obj``."""
    errors: list[FieldError] = []
    names: set[str] = set()
    for i, hook in enumerate(_list(obj.get("webhooks"))):
        path = Path("webhooks").index(i)
        hook = hook if isinstance(hook, dict) else {}
        errors += _hook_errors(hook, path, mutating)
        name = hook.get("name")
        if name and name in names:
            errors.append(duplicate(path.child("name"), name))
        elif name:
            names.add(name)
    return errors


def _review_versions(versions: Any, path: Path, detail: str) -> list[FieldError]:
    versions = _list(versions)
    if not versions:
        return [required(path, detail)]
    if not {"v1", "v1beta1"} & set(versions):
        return [invalid(path, versions, "must include at least one of v1, v1beta1")]
    return []


def conversion_errors(spec: Obj) -> list[FieldError]:
    """apiextensions' validateCustomResourceConversion over a CRD's ``spec.conversion``."""
    conversion = spec.get("conversion")
    if not isinstance(conversion, dict):
        return []
    path = Path("spec", "conversion")
    strategy, webhook = conversion.get("strategy"), conversion.get("webhook")
    if not strategy:
        return [required(path.child("strategy"))]
    if strategy not in ("None", "Webhook"):
        return [not_supported(path.child("strategy"), strategy, ("None", "Webhook"))]
    webhook = webhook if isinstance(webhook, dict) else None
    if strategy == "None":
        return [] if webhook is None else [
            forbidden(path.child("webhookClientConfig"), "should not be set when strategy is not set to Webhook")]
    if webhook is None or webhook.get("clientConfig") is None:
        errors = [required(path.child("webhookClientConfig"), "required when strategy is set to Webhook")]
    else:
        errors = _client_config_errors(webhook["clientConfig"], path.child("webhookClientConfig"))
    return errors + _review_versions((webhook or {}).get("conversionReviewVersions"),
                                     path.child("conversionReviewVersions"), "")
