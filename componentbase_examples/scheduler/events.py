"""Cluster events and queueing hints, kube-scheduler's ``framework.ClusterEvent`` and ``QueueingHintFn``.

A plugin that rejected a pod says which cluster events could change its mind (``EventsToRegister``) and,
per event, a hint function that looks at the old and new object and answers ``QUEUE`` (retry the pod) or
``QUEUE_SKIP`` (this change does not help it). The scheduling queue asks only the plugins that rejected
the pod, so a parked pod is retried by a change that can make it fit and by nothing else.

Action types are bits, as kube's: a plugin registers ``ADD | UPDATE_NODE_ALLOCATABLE`` and an event
carries the precise change(s) the informer saw (``node_events`` and ``pod_events`` find them, as kube's
``NodeSchedulingPropertiesChange`` and ``PodSchedulingPropertiesChange``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from componentbase_examples.scheduler.podinfo import pod_requests

__all__ = [
    "ASSIGNED_POD",
    "EVENT_ASSIGNED_POD_ADD",
    "EVENT_ASSIGNED_POD_DELETE",
    "EVENT_FORCE_ACTIVATE",
    "EVENT_NODE_ADD",
    "EVENT_NODE_DELETE",
    "EVENT_UNSCHEDULABLE_TIMEOUT",
    "NODE",
    "POD",
    "UNSCHEDULED_POD",
    "WILDCARD",
    "WILDCARD_EVENT",
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "HintFn",
    "QueueingHint",
    "node_events",
    "pod_events",
]

Obj = Mapping[str, Any]

POD = "Pod"
NODE = "Node"
WILDCARD = "*"
#: What a pod event is about, as the queue sees it: a bound pod, or a pending one (kube's internal resources).
ASSIGNED_POD = "AssignedPod"
UNSCHEDULED_POD = "UnschedulablePod"


class ActionType(enum.IntFlag):
    """kube's ``framework.ActionType`` bits; ``UPDATE`` is every update bit, ``ALL`` every bit."""

    NONE = 0
    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATION = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    UPDATE = (UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT | UPDATE_NODE_CONDITION
              | UPDATE_NODE_ANNOTATION | UPDATE_POD_LABEL | UPDATE_POD_SCALE_DOWN | UPDATE_POD_TOLERATION
              | UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    ALL = ADD | DELETE | UPDATE


_ACTION_LABELS = {ActionType.ADD: "Add", ActionType.DELETE: "Delete", ActionType.UPDATE: "Update",
                  ActionType.ALL: "*", ActionType.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
                  ActionType.UPDATE_NODE_LABEL: "UpdateNodeLabel", ActionType.UPDATE_NODE_TAINT: "UpdateNodeTaint",
                  ActionType.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
                  ActionType.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
                  ActionType.UPDATE_POD_LABEL: "UpdatePodLabel", ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
                  ActionType.UPDATE_POD_TOLERATION: "UpdatePodToleration",
                  ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated"}


@attrs.frozen
class ClusterEvent:
    """A change to a resource; ``label`` names it in logs and metrics (kube's ``ClusterEvent.Label()``)."""

    resource: str
    action: ActionType
    custom_label: str = ""

    @property
    def label(self) -> str:
        """``NodeAdd``, ``AssignedPodDelete``..., or the custom label (``UnschedulableTimeout``)."""
        if self.custom_label:
            return self.custom_label
        return f"{self.resource}{_ACTION_LABELS.get(self.action, str(int(self.action)))}"

    def is_wildcard(self) -> bool:
        """Every resource, every action: the leftover flush and forced activations."""
        return self.resource == WILDCARD and self.action == ActionType.ALL

    def matches(self, incoming: ClusterEvent) -> bool:
        """Whether this registered event covers ``incoming`` (kube's ``MatchClusterEvents``): ``Pod`` covers
        bound and pending pods, ``*`` every resource, and the action bits must overlap."""
        if self.is_wildcard():
            return True
        if not self.action & incoming.action:
            return False
        return (self.resource == incoming.resource or self.resource == WILDCARD
                or (self.resource == POD and incoming.resource in (ASSIGNED_POD, UNSCHEDULED_POD)))

    def __str__(self) -> str:
        return self.label


class QueueingHint(enum.Enum):
    """A hint function's answer: retry the pod, or leave it parked."""

    QUEUE_SKIP = 0
    QUEUE = 1


#: ``fn(pod, old, new)``: ``pod`` is the parked pod's ``PodInfo``, ``old``/``new`` the objects of the event
#: (``old`` is None for an add, ``new`` for a delete). Raising counts as ``QUEUE``, as in kube.
HintFn = Callable[[Any, Any, Any], QueueingHint]


@attrs.frozen
class ClusterEventWithHint:
    """One entry of a plugin's ``EventsToRegister``; no ``hint`` means always ``QUEUE``."""

    event: ClusterEvent
    hint: HintFn | None = None


EVENT_ASSIGNED_POD_ADD = ClusterEvent(ASSIGNED_POD, ActionType.ADD)
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(ASSIGNED_POD, ActionType.DELETE)
EVENT_NODE_ADD = ClusterEvent(NODE, ActionType.ADD)
EVENT_NODE_DELETE = ClusterEvent(NODE, ActionType.DELETE)
WILDCARD_EVENT = ClusterEvent(WILDCARD, ActionType.ALL)
EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, ActionType.ALL, "UnschedulableTimeout")
EVENT_FORCE_ACTIVATE = ClusterEvent(WILDCARD, ActionType.ALL, "ForceActivate")


# what changed


def _meta(obj: Obj, key: str) -> Any:
    return (obj.get("metadata") or {}).get(key) or {}


def _spec(obj: Obj) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def _condition_statuses(node: Obj) -> dict[str, Any]:
    return {c.get("type"): c.get("status") for c in (node.get("status") or {}).get("conditions") or ()}


def node_events(old: Obj, new: Obj) -> list[ClusterEvent]:
    """The node update's scheduling-relevant changes; none for a heartbeat (kube's order and rules: a
    node uncordoned counts as a taint change)."""
    found = ActionType.NONE
    if bool(_spec(old).get("unschedulable")) != bool(_spec(new).get("unschedulable")) \
            and not _spec(new).get("unschedulable"):
        found |= ActionType.UPDATE_NODE_TAINT
    if (old.get("status") or {}).get("allocatable") != (new.get("status") or {}).get("allocatable"):
        found |= ActionType.UPDATE_NODE_ALLOCATABLE
    if _meta(old, "labels") != _meta(new, "labels"):
        found |= ActionType.UPDATE_NODE_LABEL
    if (_spec(old).get("taints") or []) != (_spec(new).get("taints") or []):
        found |= ActionType.UPDATE_NODE_TAINT
    if _condition_statuses(old) != _condition_statuses(new):
        found |= ActionType.UPDATE_NODE_CONDITION
    if _meta(old, "annotations") != _meta(new, "annotations"):
        found |= ActionType.UPDATE_NODE_ANNOTATION
    return [ClusterEvent(NODE, bit) for bit in _NODE_ORDER if found & bit]


_NODE_ORDER = (ActionType.UPDATE_NODE_TAINT, ActionType.UPDATE_NODE_ALLOCATABLE, ActionType.UPDATE_NODE_LABEL,
               ActionType.UPDATE_NODE_CONDITION, ActionType.UPDATE_NODE_ANNOTATION)


def _scaled_down(old: Obj, new: Obj) -> bool:
    before, after = pod_requests(_spec(old)), pod_requests(_spec(new))
    return any(name not in after or after[name] < amount for name, amount in before.items())


def pod_events(old: Obj, new: Obj) -> list[ClusterEvent]:
    """The pod update's scheduling-relevant changes, about a bound or a pending pod by ``new``'s
    ``nodeName``; the general ``Update`` when none is specific (kube's ``PodSchedulingPropertiesChange``)."""
    resource = ASSIGNED_POD if _spec(new).get("nodeName") else UNSCHEDULED_POD
    found = []
    if _meta(old, "labels") != _meta(new, "labels"):
        found.append(ActionType.UPDATE_POD_LABEL)
    if _scaled_down(old, new):
        found.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if _spec(old).get("schedulingGates") and not _spec(new).get("schedulingGates"):
        found.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(_spec(old).get("tolerations") or ()) != len(_spec(new).get("tolerations") or ()):
        found.append(ActionType.UPDATE_POD_TOLERATION)
    return [ClusterEvent(resource, action) for action in found or (ActionType.UPDATE,)]
