"""kube-apiserver's Priority admission plugin: a new pod's ``priority`` and ``preemptionPolicy`` come from
its PriorityClass (``priorityClassName``, else the global default class, else 0), and a pod that states
values of its own which differ is refused; only one PriorityClass may be the global default.

The messages and codes are kube's (403 Forbidden). The two system classes resolve even when they are not
stored (kube-apiserver creates them at start-up; this server does not).
"""

from __future__ import annotations

from typing import Any, Protocol

from ..apimachinery.errors import ApiError
from ..apimachinery.resources import Registry, Resource
from ..storage.store import Store

__all__ = ["admit_priority"]

Obj = dict[str, Any]
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
_CLASSES = ("scheduling.k8s.io", "v1", "priorityclasses")


class _Rest(Protocol):
    registry: Registry
    store: Store


def _forbidden(res: Resource, name: str, why: str) -> ApiError:
    """admission.NewForbidden: ``pods "p" is forbidden: ...`` (no name: ``pods is forbidden: ...``)."""
    target = f'{res.key} "{name}"' if name else res.key
    details: Obj = {"name": name, "group": res.group, "kind": res.plural}
    return ApiError(403, "Forbidden", f"{target} is forbidden: {why}",
                    {k: v for k, v in details.items() if v})


def _classes(rest: _Rest) -> list[Obj]:
    res = rest.registry.lookup(*_CLASSES)
    return [] if res is None else [e.obj for e in rest.store.items(res.bucket, None)]


def _default_class(classes: list[Obj]) -> Obj | None:
    """The global default; if a race left several, the lowest value, as upstream picks."""
    defaults = [c for c in classes if c.get("globalDefault")]
    return min(defaults, key=lambda c: int(c.get("value") or 0)) if defaults else None


def _resolve(res: Resource, name: str, class_name: str, classes: list[Obj]) -> tuple[str, int, str]:
    """``(priorityClassName, priority, preemptionPolicy)`` for a new pod."""
    if not class_name:
        found = _default_class(classes)
        if found is None:
            return "", 0, PREEMPT_LOWER_PRIORITY
    else:
        found = next((c for c in classes if (c.get("metadata") or {}).get("name") == class_name), None)
        if found is None:
            if class_name in SYSTEM_PRIORITY_CLASSES:
                return class_name, SYSTEM_PRIORITY_CLASSES[class_name], PREEMPT_LOWER_PRIORITY
            raise _forbidden(res, name, f"no PriorityClass with name {class_name} was found")
    return ((found.get("metadata") or {}).get("name", ""), int(found.get("value") or 0),
            str(found.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY))


def _admit_pod(rest: _Rest, res: Resource, name: str, pod: Obj) -> None:
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    class_name, priority, policy = _resolve(res, name, str(spec.get("priorityClassName") or ""), _classes(rest))
    given = spec.get("priority")
    if given is not None and given != priority:
        raise _forbidden(res, name, f"the integer value of priority ({given}) must not be provided in pod spec; "
                                    f"priority admission controller computed {priority} from the given "
                                    "PriorityClass name")
    given_policy = spec.get("preemptionPolicy")
    if given_policy is not None and given_policy != policy:
        raise _forbidden(res, name, f"the string value of PreemptionPolicy ({given_policy}) must not be provided "
                                    f"in pod spec; priority admission controller computed {policy} from the "
                                    "given PriorityClass name")
    if class_name:
        spec["priorityClassName"] = class_name
    spec["priority"] = priority
    spec["preemptionPolicy"] = policy


def _validate_class(rest: _Rest, res: Resource, name: str, pc: Obj) -> None:
    if not pc.get("globalDefault"):
        return
    current = _default_class(_classes(rest))
    if current is not None and (current.get("metadata") or {}).get("name") != name:
        raise _forbidden(res, name, f"PriorityClass {current['metadata']['name']} is already marked as default. "
                                    "Only one default can exist")


def admit_priority(rest: _Rest, res: Resource, name: str, obj: Obj) -> None:
    """Run the plugin on a create (pods) or a create or update (PriorityClasses); ``obj`` is changed in place."""
    if res.key == "pods":
        _admit_pod(rest, res, name, obj)
    elif (res.group, res.plural) == (_CLASSES[0], _CLASSES[2]):
        _validate_class(rest, res, name, obj)
