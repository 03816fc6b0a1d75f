"""PodTopologySpread's default constraints: kube's system defaults, and the selector they get from the
Services, ReplicationControllers, ReplicaSets and StatefulSets that select the pod (``helper.DefaultSelector``).

A pod with no ``topologySpreadConstraints`` of its own gets the profile's default constraints (``System``:
hostname ``maxSkew: 3`` and zone ``maxSkew: 5``, both ``ScheduleAnyway``; ``List``: the args'
``defaultConstraints``), all with one selector: the labels of every Service of its namespace whose
selector matches the pod, merged, ANDed with its controlling ReplicationController's selector or its
controlling ReplicaSet's or StatefulSet's label selector. No such object, no default constraint.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from componentbase_examples.scheduler.plugins.helpers import Requirement, SelectorError, selector_requirements
from componentbase_examples.scheduler.podinfo import PodInfo

__all__ = ["SYSTEM_DEFAULT_CONSTRAINTS", "WorkloadListers", "default_selector"]

Obj = Mapping[str, Any]

#: kube's ``systemDefaultConstraints``.
SYSTEM_DEFAULT_CONSTRAINTS: tuple[dict[str, Any], ...] = (
    {"topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway", "maxSkew": 3},
    {"topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway", "maxSkew": 5},
)

_RC = ("v1", "ReplicationController")
_WITH_LABEL_SELECTOR = (("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet"))


@attrs.frozen
class WorkloadListers:
    """Read access to the scheduler's caches of the objects that select pods (kube's listers)."""

    #: The Services of a namespace.
    services: Callable[[str], Iterable[Obj]]
    #: One object by ``(kind, namespace, name)``: ``ReplicationController``, ``ReplicaSet``, ``StatefulSet``.
    get: Callable[[str, str, str], Obj | None]


def _controller_of(pod: Obj) -> Obj | None:
    """``metav1.GetControllerOf``: the owner reference with ``controller: true``."""
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def _equals(labels: Mapping[str, str]) -> list[Requirement]:
    """``labels.Set(...).AsSelector()``, sorted by key as kube's requirements are."""
    return [(k, "In", frozenset((v,))) for k, v in sorted(labels.items())]


def default_selector(pod: PodInfo, listers: WorkloadListers) -> tuple[Requirement, ...]:
    """The selector kube's ``DefaultSelector`` builds for ``pod`` (``()``: none, so no default constraint)."""
    merged: dict[str, str] = {}
    for service in listers.services(pod.namespace):
        selector = (service.get("spec") or {}).get("selector")
        if selector is None:
            continue  # a nil selector matches nothing, not everything
        if all(pod.labels.get(k) == v for k, v in selector.items()):
            merged.update(selector)
    requirements = _equals(merged)
    owner = _controller_of(pod.pod)
    if owner is None:
        return tuple(requirements)
    kind = (owner.get("apiVersion"), owner.get("kind"))
    if kind != _RC and kind not in _WITH_LABEL_SELECTOR:
        return tuple(requirements)
    obj = listers.get(str(kind[1]), pod.namespace, owner.get("name") or "")
    if obj is None:
        return tuple(requirements)
    selector = (obj.get("spec") or {}).get("selector")
    if kind == _RC:
        return tuple(_equals({**merged, **(selector or {})}))
    if selector is not None:
        try:
            requirements += selector_requirements(selector)
        except SelectorError:
            pass  # kube ignores a selector that does not parse here
    return tuple(requirements)
