"""A webhook's ``matchConditions``: CEL expressions over the request, all of which must be true for the webhook
to be called, as kube-apiserver's webhook dispatcher checks them (plugin/webhook/matchconditions) before a
call. One false condition skips the webhook, whatever errors the others met; errors with none false obey
the webhook's ``failurePolicy``: Ignore skips it, Fail refuses the request with kube's 403.
"""

from __future__ import annotations

import logging
from typing import Any

from ..apimachinery.errors import ApiError
from ..apimachinery.resources import Resource
from ._webhookmatch import Hook

__all__ = ["conditions_match"]

_log = logging.getLogger(__name__)


def conditions_match(hook: Hook, res: Resource, name: str, request: dict[str, Any]) -> bool:
    """Whether ``hook`` is called for the admission ``request`` (the review's, the objects in the webhook's
    version); raise kube's Forbidden when a condition fails to evaluate under ``failurePolicy: Fail``."""
    conditions = [c for c in hook.spec.get("matchConditions") or () if isinstance(c, dict)]
    if not conditions:
        return True
    # the CEL runtime is loaded only once a webhook has conditions, as for CRD rules and policies
    from ..cel._policy import match_conditions

    data = {"object": request.get("object"), "oldObject": request.get("oldObject"), "request": request,
            "params": None, "namespaceObject": None}
    matched, errors = match_conditions(conditions, data)
    if not matched:
        return False
    if not errors:
        return True
    if hook.ignores_failures:
        return False
    reason = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    _log.warning("Failed evaluating match conditions, failing closed %s: %s", hook.name, reason)
    target = f'{res.key} "{name}"' if name else res.key
    details: dict[str, Any] = {"name": name} if name else {}
    if res.group:
        details["group"] = res.group
    details["kind"] = res.plural
    raise ApiError(403, "Forbidden", f"{target} is forbidden: {reason}", details)
